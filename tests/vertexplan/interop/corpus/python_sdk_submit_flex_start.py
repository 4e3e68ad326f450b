from google.cloud import aiplatform
from google.cloud.aiplatform_v1.types import custom_job as gca_custom_job

job = aiplatform.CustomJob(
    display_name="sdk-flex-start",
    project="my-project",
    location="us-central1",
    worker_pool_specs=[{
        "machine_spec": {"machine_type": "a2-ultragpu-8g",
                         "accelerator_type": "NVIDIA_A100_80GB", "accelerator_count": 8},
        "replica_count": 1,
        "disk_spec": {"boot_disk_type": "pd-ssd", "boot_disk_size_gb": 500},
        "container_spec": {"image_uri": "us-docker.pkg.dev/my-project/training/llm:latest",
                           "command": ["python", "train.py"]},
    }],
    base_output_dir="gs://my-bucket/llm",
)
job.submit(
    scheduling_strategy=gca_custom_job.Scheduling.Strategy.FLEX_START,
    max_wait_duration=1800,
    timeout=86400,
    disable_retries=True,
)

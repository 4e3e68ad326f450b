import os

from google.cloud import aiplatform

job = aiplatform.CustomJob(
    display_name="sdk-env-strategy",
    worker_pool_specs=[{
        "machine_spec": {"machine_type": "n1-standard-8"},
        "replica_count": 1,
        "container_spec": {"image_uri": "us-docker.pkg.dev/my-project/training/x:latest"},
    }],
    base_output_dir="gs://my-bucket/x",
)
job.run(
    scheduling_strategy=os.environ.get("STRATEGY", "SPOT"),
    timeout=3600,
)

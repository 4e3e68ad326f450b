from google.cloud import aiplatform

aiplatform.init(project="my-project", location="us-central1", staging_bucket="gs://my-bucket")

worker_pool_specs = [
    {
        "machine_spec": {
            "machine_type": "a2-highgpu-1g",
            "accelerator_type": "NVIDIA_TESLA_A100",
            "accelerator_count": 1,
        },
        "replica_count": 1,
        "container_spec": {
            "image_uri": "us-docker.pkg.dev/my-project/training/finetune:latest",
            "command": ["python", "-m", "finetune.train"],
            "args": ["--epochs", "2"],
        },
    }
]

job = aiplatform.CustomJob(
    display_name="sdk-run-arguments",
    worker_pool_specs=worker_pool_specs,
    base_output_dir="gs://my-bucket/finetune",
    labels={"project": "finetune"},
)

job.run(
    service_account="trainer@my-project.iam.gserviceaccount.com",
    network="projects/12345/global/networks/my-vpc",
    timeout=86400,
    restart_job_on_worker_restart=True,
    scheduling_strategy=aiplatform.gapic.Scheduling.Strategy.SPOT,
    enable_web_access=True,
    tensorboard="projects/my-project/locations/us-central1/tensorboards/123",
    sync=False,
)

from google.cloud import aiplatform

aiplatform.init(project="my-project", location="us-central1", staging_bucket="gs://my-bucket")

job = aiplatform.CustomJob(
    display_name="sdk-custom-job",
    worker_pool_specs=[
        {
            "machine_spec": {
                "machine_type": "n1-standard-8",
                "accelerator_type": "NVIDIA_TESLA_T4",
                "accelerator_count": 1,
            },
            "replica_count": 1,
            "container_spec": {
                "image_uri": "us-docker.pkg.dev/my-project/training/sdk:latest",
                "command": ["python", "train.py"],
                "args": ["--epochs", "3"],
            },
        }
    ],
    base_output_dir="gs://my-bucket/sdk-run",
)
job.run()

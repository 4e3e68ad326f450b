from google.cloud import aiplatform

job = aiplatform.CustomJob(
    display_name="sdk-package",
    worker_pool_specs=[{
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": 1,
        "python_package_spec": {
            "executor_image_uri": "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest",
            "package_uris": ["gs://my-bucket/trainer-0.1.tar.gz"],
            "python_module": "trainer.task",
            "args": ["--alpha", "0.5"],
        },
    }],
)

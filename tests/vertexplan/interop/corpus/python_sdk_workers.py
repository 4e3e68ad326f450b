from google.cloud import aiplatform

chief = {
    "machine_spec": {"machine_type": "n1-standard-16", "accelerator_type": "NVIDIA_TESLA_V100",
                     "accelerator_count": 2},
    "replica_count": 1,
    "container_spec": {"image_uri": "gcr.io/my-project/ddp:latest",
                       "command": ["python", "ddp.py"]},
}
job = aiplatform.CustomJob(
    display_name="sdk-workers",
    worker_pool_specs=[chief, {**chief, "replica_count": 2}],
)

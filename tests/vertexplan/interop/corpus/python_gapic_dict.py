from google.cloud import aiplatform_v1

custom_job = {
    "display_name": "gapic-job",
    "job_spec": {
        "worker_pool_specs": [
            {
                "machine_spec": {"machine_type": "n1-standard-4"},
                "replica_count": 1,
                "container_spec": {
                    "image_uri": "gcr.io/my-project/gapic:latest",
                    "command": ["python3", "-m", "trainer"],
                    "env": [{"name": "MODE", "value": "train"}],
                },
            }
        ],
        "scheduling": {"timeout": "3600s", "restart_job_on_worker_restart": False},
    },
}
client = aiplatform_v1.JobServiceClient(
    client_options={"api_endpoint": "us-central1-aiplatform.googleapis.com"})
client.create_custom_job(parent="projects/my-project/locations/us-central1",
                         custom_job=custom_job)

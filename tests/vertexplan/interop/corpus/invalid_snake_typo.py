from google.cloud import aiplatform

job = aiplatform.CustomJob(
    display_name="typo",
    worker_pool_specs=[{"machine_spec": {"machine_tpye": "n1-standard-4"},
                        "replica_count": 1,
                        "container_spec": {"image_uri": "gcr.io/p/i:latest"}}],
)

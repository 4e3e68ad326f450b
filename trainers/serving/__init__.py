"""Serving a trained byte-level GPT behind Vertex AI's custom-container contract (see
trainers/serving/server.py for the entrypoint)."""

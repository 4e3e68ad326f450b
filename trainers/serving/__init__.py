"""Serving a trained byte-level GPT behind Vertex AI's custom-container contract (see
trainers/serve.py for the entrypoint)."""

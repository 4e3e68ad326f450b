"""Serving in the emulator: the Model, Endpoint and Prediction services, deployments of a model
as local model-server processes, the admin calls for endpoints, and Artifact Registry's images
that a deploy checks."""

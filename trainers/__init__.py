"""Training entrypoints that Vertex AI CustomJobs run (`python -m trainers.train`).

Never imports Django or the control plane: these modules run inside the training image.
"""

"""Serving: models registered from training checkpoints, endpoints they are deployed to, the
prober that measures their latency, and the SLOs that alert on it."""

"""Compose: the compose form, templates, validate / import / export, and creating jobs."""

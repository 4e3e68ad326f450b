"""Hyperparameter sweeps: Vertex HyperparameterTuningJobs and their trials."""

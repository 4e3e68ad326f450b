"""Runs: jobs and their attempts on Vertex, submitted exactly once, reconciled, recovered and
cancelled; the job list and the job page."""

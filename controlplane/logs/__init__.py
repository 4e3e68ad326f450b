"""Job logs at scale: following Cloud Logging within its quota, storing lines and metrics in
bulk, tailing, retention, and the queries the job page and the API make.

controlplane/logs/follower.py runs the sweeps; this package holds its parts.
"""

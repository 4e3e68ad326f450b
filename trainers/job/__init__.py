"""What the job around a trainer process gives it and reads from it, the same for every trainer:
where the process sits (cluster.py: RANK..., CLUSTER_SPEC), stop signals (preemption.py: a spot
VM's SIGTERM), a tuning trial's objective (hypertune.py), W&B tracking (tracking.py) and the
fault injection tests use (faults.py)."""

"""Core: leases, paging, health, settings from the environment, the task policy and the signals
the other apps listen to."""

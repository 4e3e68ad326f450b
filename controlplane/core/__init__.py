"""Core: leases, paging, health, settings from the environment, secrets at rest, the task policy
and the signals the other apps listen to."""

"""CustomJobs in the emulator: the JobService methods and their checks, the store, the filter,
and the life of a job (its manager, one runner per job, the restart policy, armed preemptions,
the quota and stockouts it meets, the writes to its record)."""

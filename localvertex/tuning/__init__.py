"""HyperparameterTuningJobs in the emulator: the JobService methods, their store, the runner that
runs each trial as a CustomJob, the study's search, and the metrics a trial reports."""

"""Cloud Storage for the local stack: the JSON API over the emulator's bucket folders
(server.py, objects.py), started with the emulator, and its IAM stand-in (access.py): the host's
port is the control plane's; each job's network namespace gets a door of its own (doors.py)
through which its team reaches its own folders and nothing else."""

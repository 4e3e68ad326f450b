"""Recognizers of other frameworks' standard output: a team's own Hugging Face Trainer,
torchtitan, Lightning or DeepSpeed job, read with no change to its code (issue 36). Pure.

Each module reads one framework's plain text lines (what Cloud Logging keeps as textPayload)
into the contract's events (contract/events.py) and names the framework versions its line
formats were checked against; registry.py chooses and runs them, detect.py tells from a job's
command or first lines which framework it runs.
"""

"""Callbacks that make a team's own training loop report to the Vertex Control Plane exactly.

Without them the control plane reads a framework's own lines (the HF Trainer's loss dicts...),
which tell the step only as a count and no per-rank timing. With them, each process prints the
control plane's events (one JSON object per line on stdout, as the product's own trainers do,
and Cloud Logging keeps as a jsonPayload): the exact step and total, the loss, the learning
rate, each rank's own step time (what names a straggler), evaluations, checkpoints, the end.
The control plane then reads those and leaves the framework's own lines as lines.

Hugging Face Trainer (three lines):

    from vcp_callbacks.hf import ControlPlaneCallback
    trainer = Trainer(model=model, args=args, train_dataset=data,
                      callbacks=[ControlPlaneCallback()])

PyTorch Lightning:

    from vcp_callbacks.lightning import ControlPlaneCallback
    trainer = L.Trainer(max_steps=1000, callbacks=[ControlPlaneCallback()])

Accelerate (a loop of your own; `accelerator.log({"loss": ..., "lr": ...}, step=step)`;
`follow` reports `save_state`'s checkpoints):

    from vcp_callbacks.accelerate_tracker import ControlPlaneTracker
    tracker = ControlPlaneTracker(total_steps=1000)
    accelerator = tracker.follow(Accelerator(log_with=[tracker]))

A DeepSpeed engine (no callbacks of its own; one line after deepspeed.initialize):

    from vcp_callbacks.deepspeed import follow
    reporter = follow(engine, total_steps=1000)

Nothing here imports the control plane: the events are plain JSON (vcp_callbacks/events.py).
"""

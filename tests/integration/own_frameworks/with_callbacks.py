"""The teams' own scripts of this folder with the vcp_callbacks lines added, as the package's
docs show them (callbacks/vcp_callbacks/__init__.py): the text of each script, edited. Shared by
the stack test (tests/integration/test_own_framework.py, the scripts as CustomJobs) and the
torchrun test (tests/logs/test_callbacks_run.py, on two ranks of one machine), so both run the
same edit. Each edit must match exactly once: a change to a script that moves one of them fails
here, naming it, rather than running the script without its callback."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
HF_TRAINER = HERE / "hf_trainer_script.py"
LIGHTNING = HERE / "lightning_script.py"
ACCELERATE = HERE / "accelerate_script.py"
DEEPSPEED = HERE / "deepspeed_script.py"

# The run is over: leave without torch's teardown, which on CPU ranks joined by gloo aborts
# now and then at exit after the last line ('terminate called without an active exception',
# about once in ten runs, with or without the callbacks' gathers), failing the process.
EXIT = "\nimport os, sys\nsys.stdout.flush()\nsys.stderr.flush()\nos._exit(0)\n"


def _edited(path: Path, edits: list[tuple[str, str]]) -> str:
    text = path.read_text()
    for old, new in edits:
        assert text.count(old) == 1, f"{path.name}: {old!r}"
        text = text.replace(old, new)
    return text


def hf_trainer(rank_times_every: int = 3) -> str:
    """The HF Trainer script with ControlPlaneCallback: an import and the Trainer's callbacks."""
    return _edited(HF_TRAINER, [
        ("from transformers import LlamaConfig",
         "from vcp_callbacks.hf import ControlPlaneCallback\nfrom transformers import LlamaConfig"),
        ("Trainer(model=model, args=args,",
         "Trainer(model=model, args=args, callbacks=[ControlPlaneCallback("
         f"rank_times_every={rank_times_every})],"),
    ])


def lightning(rank_times_every: int = 3) -> str:
    """The Lightning script with ControlPlaneCallback among the Trainer's callbacks."""
    return _edited(LIGHTNING, [
        ("from lightning.pytorch.callbacks import",
         "from vcp_callbacks.lightning import ControlPlaneCallback\n"
         "from lightning.pytorch.callbacks import"),
        ("callbacks=[checkpoints, TQDMProgressBar()]",
         "callbacks=[checkpoints, TQDMProgressBar(), "
         f"ControlPlaneCallback(rank_times_every={rank_times_every})]"),
    ])


def accelerate(rank_times_every: int = 3) -> str:
    """The Accelerate loop with the tracker: in log_with and following the accelerator (its
    save_state checkpoints), a log call per step and per evaluation, end_training."""
    return _edited(ACCELERATE, [
        ("from accelerate.logging import get_logger\n",
         "from accelerate.logging import get_logger\n"
         "from vcp_callbacks.accelerate_tracker import ControlPlaneTracker\n"),
        ("accelerator = Accelerator(cpu=True)\n",
         "tracker = ControlPlaneTracker(total_steps=STEPS, "
         f"rank_times_every={rank_times_every})\n"
         "accelerator = tracker.follow(Accelerator(cpu=True, log_with=[tracker]))\n"
         "accelerator.init_trackers('team-run')\n"),
        ("    progress_bar.set_postfix(loss=loss.item())\n",
         "    progress_bar.set_postfix(loss=loss.item())\n"
         "    accelerator.log({'loss': loss.item(), 'lr': 0.05}, step=completed_steps)\n"),
        ("        accelerator.save_state(",
         "        accelerator.log({'eval_loss': eval_loss.item()}, step=completed_steps)\n"
         "        accelerator.save_state("),
        ("progress_bar.close()\n", "progress_bar.close()\naccelerator.end_training()\n"),
    ])


def deepspeed(rank_times_every: int = 3) -> str:
    """The DeepSpeed loop with the reporter's line after deepspeed.initialize, an evaluation
    reported beside the loop's own line, and the end."""
    return _edited(DEEPSPEED, [
        ("import deepspeed\n", "import deepspeed\nfrom vcp_callbacks.deepspeed import follow\n"),
        ("done = 0\n",
         f"reporter = follow(engine, total_steps=STEPS, rank_times_every={rank_times_every})\n"
         "done = 0\n"),
        ("        logging.info(\"epoch",
         "        reporter.eval({'loss': held.item()})\n        logging.info(\"epoch"),
        ("bar.close()\n", "bar.close()\nreporter.finish()\n"),
    ])

"""One JAX training run: set up the mesh and the compiled program, resume, train, checkpoint,
evaluate, export. Every host runs this same code over the same global arrays.

The host never waits for a step it has just dispatched: a step's loss is read once the next
step is on its way (JAX dispatches asynchronously), so the host builds the next batch while the
devices compute. A step that ends in an evaluation, a checkpoint, a stop or the end reads its
loss at once.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import time
from dataclasses import asdict, dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from trainers import events, faults, hypertune, preemption, tracking
from trainers.checkpoint import CheckpointInfo, named_checkpoint, step_of_folder
from trainers.jax.checkpoint import (
    FORMAT,
    TRAINER_FILE,
    JaxCheckpoints,
    read_json,
    read_state,
    write_state,
)
from trainers.jax.config import JaxTrainConfig, mesh_shape
from trainers.jax.mesh import build_mesh
from trainers.jax.program import build_program, compute_dtype, device_batch
from trainers.schedule import lr_at
from trainers.storage import storage_for
from trainers.text import EVAL_STREAM, global_batch, load_text

STRATEGY = "jax"
EXPORTED_PARAMS_DIR = "params"
EXPORTED_CONFIG_FILE = "config.json"


class JaxTrainer:
    def __init__(self, config: JaxTrainConfig, stop: preemption.StopRequest) -> None:
        self.config = config
        self.stop = stop
        self.is_main = jax.process_index() == 0
        self.text = load_text(config.data, config.corpus_max_bytes, config.model.block_size)
        self.shape = mesh_shape(config, jax.device_count())
        self.dtype = compute_dtype(config.precision, jax.default_backend())
        self.program = build_program(config, build_mesh(self.shape), self.dtype)
        self.checkpoints = (
            JaxCheckpoints(config.checkpoint_dir, config.keep, _shared_token())
            if config.checkpoint_dir
            else None
        )
        # Fail now, not after hours of training, when the export destination is unusable.
        self.model_storage = storage_for(config.model_dir) if config.model_dir else None
        self.pending: list[_Dispatched] = []
        self.resumed = False  # whether this run continues from a checkpoint
        self.last_report = time.perf_counter()
        # W&B, when the job carries a team's settings (host 0 only): started once the run is.
        self.tracker: tracking.Tracker = tracking.NoTracker()

    @property
    def precision(self) -> str:
        return "bf16" if self.dtype == jnp.bfloat16 else "fp32"

    # -- the run ---------------------------------------------------------------------------

    def run(self) -> int:
        """Returns the process exit code: 0 when finished, 128+signal when stopped early."""
        code = 1
        try:
            code = self._run()
            return code
        finally:
            self.tracker.finish(exit_code=code)

    def _run(self) -> int:
        started = time.monotonic()
        config = self.config
        resume_from = self._prepare_checkpoints()
        events.run_started(
            jax.process_index(),
            jax.process_count(),
            STRATEGY,
            self.program.parameter_count(),
            resume_from.step if resume_from else None,
            dims=self.shape.as_dict(),
            shape={"n_layer": config.model.n_layer, "n_head": config.model.n_head,
                   "d_model": config.model.n_embd, "seq_len": config.model.block_size,
                   "devices": jax.device_count()},
            precision=self.precision,
        )
        self.tracker = tracking.start(config.to_dict(), jax.process_index())
        step, last_loss = 0, None
        if resume_from:
            state, step, last_loss = self._restore(resume_from)
            self.resumed = True
        else:
            state = self.program.init(jax.random.key(config.seed))
        self.last_report = time.perf_counter()

        while step < config.steps:
            step += 1
            state = self._dispatch_step(state, step)
            self._pause_if_requested(step)
            finishing = step == config.steps
            evaluating = bool(config.eval_every) and (step % config.eval_every == 0 or finishing)
            saving = self.checkpoints is not None and (
                finishing or bool(config.checkpoint_every and step % config.checkpoint_every == 0)
            )
            stop_signal = self._agreed_stop()
            loss = self._report(
                keep_latest=not (evaluating or saving or finishing or stop_signal))
            last_loss = loss if loss is not None else last_loss
            if stop_signal is not None:
                # Written now, within the notice: the process exits right after.
                path = self._save(state, step, last_loss) if self.checkpoints else None
                if self.is_main:
                    events.preempted(stop_signal.name, step, path)
                return preemption.exit_code(stop_signal)
            if evaluating:
                self._evaluate(state, step)
            if saving:
                self._save(state, step, last_loss)

        self._export(state, step, last_loss)
        if self.is_main:
            events.run_finished(step, last_loss, time.monotonic() - started)
        return 0

    def _dispatch_step(self, state: Any, step: int) -> Any:
        config, program = self.config, self.program
        lr = lr_at(step, config)
        x, y = global_batch(
            self.text.train, config.seed, step, config.batch_size, config.model.block_size
        )
        state, loss = program.train_step(
            state, device_batch(program.batch, x), device_batch(program.batch, y), np.float32(lr)
        )
        self.pending.append(_Dispatched(step, loss, lr))
        return state

    def _report(self, keep_latest: bool) -> float | None:
        """Wait for the dispatched steps' losses, oldest first, all or all but the newest;
        print each step's event; return the newest loss read."""
        config = self.config
        loss = None
        while len(self.pending) > (1 if keep_latest else 0):
            done = self.pending.pop(0)
            loss = float(done.loss)  # waits for the step
            now = time.perf_counter()
            seconds, self.last_report = max(now - self.last_report, 1e-9), now
            if self.is_main and (done.step % config.log_every == 0 or done.step == config.steps):
                tokens = config.batch_size * config.model.block_size
                events.step(done.step, config.steps, loss, done.lr, tokens / seconds, seconds)
                self.tracker.log(done.step, {"loss": loss, "lr": done.lr,
                                             "tokens_per_s": tokens / seconds,
                                             "step_time_s": seconds})
        return loss

    def _pause_if_requested(self, step: int) -> None:
        """Fault injection for tests (TRAINERS_PAUSE_AT=step_end:N, first runs only): wait after
        step N until a stop signal arrives, so a test can stop the run at a known step."""
        if self.resumed or os.environ.get(faults.ENV) != f"step_end:{step}":
            return
        events.emit("paused", f"paused at the end of step {step} ({faults.ENV})",
                    point="step_end", step=step, rank=jax.process_index())
        deadline = time.monotonic() + faults.PAUSE_S
        while self.stop.received is None and time.monotonic() < deadline:
            time.sleep(0.02)

    def _agreed_stop(self) -> Any:
        """The signal every host stops for after this step (SIGTERM may reach only one VM)."""
        flags = self.stop.flags()
        if jax.process_count() > 1:
            from jax.experimental import multihost_utils

            gathered = multihost_utils.process_allgather(np.asarray(flags, np.float32))
            flags = np.asarray(gathered).reshape(-1, len(flags)).sum(axis=0).tolist()
        return preemption.agreed_signal(flags)

    def _evaluate(self, state: Any, step: int) -> None:
        """Mean loss on the same held-out global batches at every evaluation."""
        config, program = self.config, self.program
        total = 0.0
        for i in range(config.eval_batches):
            x, y = global_batch(self.text.val, config.seed, i, config.batch_size,
                                config.model.block_size, stream=EVAL_STREAM)
            total += float(program.eval_step(
                state["params"], device_batch(program.batch, x), device_batch(program.batch, y)))
        val_loss = total / max(1, config.eval_batches)
        if self.is_main:
            metrics = {"val_loss": val_loss, "val_perplexity": math.exp(min(val_loss, 50.0))}
            events.evaluation(step, metrics)
            self.tracker.log(step, metrics)
            # A tuning trial's objective, where Vertex reads it (trainers/hypertune.py).
            hypertune.report(metrics, step)

    # -- checkpoints ---------------------------------------------------------------------------

    def _prepare_checkpoints(self) -> CheckpointInfo | None:
        """The newest complete checkpoint of the run's own folder (a restarted run), else the
        one the job names (`resume_from`, a resubmission), which must be complete."""
        found = None
        if self.checkpoints:
            found, removed = self.checkpoints.prepare()
            for path in removed:
                events.emit("checkpoint_discarded", f"removed incomplete checkpoint {path}",
                            severity="WARNING", path=path)
        if found is None and self.config.resume_from:
            found = named_checkpoint(self.config.resume_from)
        return found

    def _save(self, state: Any, step: int, loss: float | None) -> str:
        assert self.checkpoints is not None
        started = time.monotonic()
        info = self.checkpoints.save(
            step,
            state,
            trainer_state={
                "step": step,
                "loss": loss,
                "model": asdict(self.config.model),
                # Batches are a function of (seed, step): the position is the next step.
                "data": {"next_step": step + 1, "seed": self.config.seed,
                         **self.text.describe()},
            },
            config=self.config.to_dict(),
            metadata={
                "world_size": jax.process_count(),
                "devices": jax.device_count(),
                "strategy": STRATEGY,
                "dims": self.shape.as_dict(),
                "format": FORMAT,
                "precision": self.precision,
                "loss": loss,
            },
        )
        if self.is_main:
            events.checkpoint_saved(info.step, info.path, info.metadata.get("bytes", 0),
                                    time.monotonic() - started)
            for path in info.pruned:  # the control plane lists only what still exists
                events.checkpoint_deleted(step_of_folder(path), path)
        return info.path

    def _restore(self, info: CheckpointInfo) -> tuple[Any, int, float | None]:
        written_as = info.metadata.get("format")
        if written_as != FORMAT:
            raise ValueError(f"checkpoint {info.path} is in format {written_as!r} (the PyTorch "
                             f"trainer's); the JAX trainer resumes only from {FORMAT!r} ones")
        trainer_state = read_json(info.path, TRAINER_FILE)
        if trainer_state["model"] != asdict(self.config.model):
            raise ValueError(f"checkpoint {info.path} holds a model {trainer_state['model']}, "
                             f"this run builds {asdict(self.config.model)}: use another "
                             "checkpoint directory")
        # Laid out for this run's mesh, whatever mesh wrote it.
        state = read_state(info.path, self.program.abstract)
        data = trainer_state["data"]
        if self.is_main and (data["sha256"], data["seed"]) != (self.text.sha256,
                                                               self.config.seed):
            events.emit("data_changed", "the corpus or seed differs from the checkpoint's: "
                        "the resumed run sees other batches", severity="WARNING",
                        checkpoint=data, current=self.text.describe())
        if self.is_main:
            events.resumed(trainer_state["step"], info.path)
        return state, int(trainer_state["step"]), trainer_state["loss"]

    # -- export ---------------------------------------------------------------------------------

    def _export(self, state: Any, step: int, loss: float | None) -> None:
        """The final parameters (Orbax) and config for serving; the config is written last, so
        a model folder with a config.json holds a complete model."""
        if not (self.model_storage and self.config.model_dir):
            return
        storage, folder = self.model_storage, self.config.model_dir
        params_path = storage.join(folder, EXPORTED_PARAMS_DIR)
        if self.is_main:
            storage.make_dirs(folder)
            storage.remove_tree(params_path)  # Orbax never overwrites
        write_state(storage, params_path, state["params"])
        if self.is_main:
            exported = {
                "model": asdict(self.config.model),
                "tokenizer": "bytes",  # token = byte value 0..255
                "format": FORMAT,
                "step": step,
                "final_loss": loss,
                "train": self.config.to_dict(),
            }
            storage.replace_file(storage.join(folder, EXPORTED_CONFIG_FILE),
                                 json.dumps(exported, indent=1).encode())


def _shared_token() -> str:
    """A random name part every host agrees on (host 0's)."""
    value = secrets.randbits(31)
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        value = int(multihost_utils.broadcast_one_to_all(np.int32(value)))
    return f"{value:08x}"


@dataclass
class _Dispatched:
    """A step on its way: its loss is a device array until read."""

    step: int
    loss: jax.Array
    lr: float

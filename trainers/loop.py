"""One training run, the same for every trainer: start, resume, steps, evaluation, checkpoint
cadence, preemption, finish. What a step computes, how a checkpoint is written and how the
processes agree is each framework's (`TrainingLoop`'s abstract methods): the PyTorch trainer
(trainers/torch/trainer.py, also on an XLA device) and the JAX trainer (trainers/jax/trainer.py).

A step is dispatched, then read: the host never waits for a step it has just dispatched. Its
loss (and, for the PyTorch trainer, its all-reduce with every rank's stop flags) is read once
the next step is on its way, unless the step ends in an evaluation, a checkpoint, a stop or
the end, where it is read at once. Step events are printed as steps are read, in order.

Events (trainers/events.py): run_started, then resumed (from a checkpoint), step (rank 0,
every log_every steps and the last), eval, checkpoint_saved / checkpoint_deleted, then
run_finished, or preempted: the stop signal every process agreed on, after an emergency
checkpoint, with exit code 128 + signal.

`phase` events (the contract's; vertexplan/goodput.py counts each apart from productive steps):
restore, eval and checkpoint_save as each ends (eval and checkpoint_save also when they begin),
and what happens inside steps: `data_wait` (the time a step waited for its batch, measured
around the framework's data iterator) and `compile` (the framework compiler's own clock while
a step was dispatched: the first step's compile, and any recompile). Those two are summed
and printed just before a step event, so each ends in the span of steps it was measured in:
compile at the first step event after it, data_wait at most once every PHASE_REPORT_STEPS
steps (and at the last), so a run that logs every step does not print a line a step.
"""

from __future__ import annotations

import json
import math
import os
import signal
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from contract import events as contract_events
from trainers import events
from trainers.checkpoint import CheckpointInfo, named_checkpoint, step_of_folder
from trainers.config import RunConfig
from trainers.corpus import Corpus
from trainers.job import faults, hypertune, preemption, tracking
from trainers.storage import Storage, storage_for

EXPORTED_CONFIG_FILE = "config.json"
# The phases measured inside steps, summed until a step event reports them (module docstring).
IN_STEP_PHASES = ("compile", "data_wait")
PHASE_REPORT_STEPS = 10


class ScheduleConfig(Protocol):
    lr: float
    min_lr_ratio: float
    warmup_steps: int
    steps: int


def lr_at(step: int, config: ScheduleConfig) -> float:
    """Learning rate for optimizer step `step` (1-based): linear warmup, then cosine decay. A
    pure function of the step, so a resumed run needs no scheduler state."""
    if config.warmup_steps and step <= config.warmup_steps:
        return config.lr * step / config.warmup_steps
    min_lr = config.lr * config.min_lr_ratio
    span = max(1, config.steps - config.warmup_steps)
    progress = min(1.0, (step - config.warmup_steps) / span)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (config.lr - min_lr)


class Checkpoints(Protocol):
    """A run's checkpoint folder, as the processes of one framework share it."""

    root: str
    storage: Storage

    def prepare(self) -> tuple[CheckpointInfo | None, list[str]]:
        """Remove what killed writes left; the newest complete checkpoint, and what was removed."""


@dataclass
class Dispatched:
    """A step on its way: `handle` is what its loss is read from (the framework's)."""

    step: int
    lr: float
    handle: Any
    seconds: float | None = None  # the host's time for the step, where measured at dispatch


@dataclass(frozen=True)
class StepRead:
    loss: float  # the mean over every data-parallel rank
    seconds: float
    stop: signal.Signals | None = None  # a stop every process agreed on with this step
    # Each rank's own time in the step, rank 0 first, where the ranks gathered them.
    rank_times: tuple[float, ...] | None = None


class TrainingLoop(ABC):
    """The run on one process; every process runs it, and they meet in the same order."""

    def __init__(self, config: RunConfig, stop: preemption.StopRequest, corpus: Corpus,
                 rank: int, world_size: int) -> None:
        self.config = config
        self.stop = stop
        self.corpus = corpus
        self.rank = rank
        self.world_size = world_size
        self.is_main = rank == 0
        self.resumed = False  # whether this run continues from a checkpoint
        self.checkpoints: Checkpoints | None = None
        # Fail now, not after hours of training, when the export destination is unusable.
        self.model_storage = storage_for(config.model_dir) if config.model_dir else None
        self.pending: list[Dispatched] = []  # dispatched steps not read yet, oldest first
        # W&B, when the job carries a team's settings (rank 0 only): started once the run is.
        self.tracker: tracking.Tracker = tracking.NoTracker()
        # Seconds of IN_STEP_PHASES not printed yet, and the step data_wait was last printed at.
        self.in_steps = dict.fromkeys(IN_STEP_PHASES, 0.0)
        self.in_steps_reported = 0

    # -- what each framework does ---------------------------------------------------------------

    @abstractmethod
    def started_fields(self) -> dict[str, Any]:
        """run_started's framework fields: strategy, params, dims, precision, and the extras of
        its shape."""

    @abstractmethod
    def begin(self, resumed: bool) -> None:
        """Ready to step: the initial state when nothing was restored."""

    @abstractmethod
    def dispatch(self, step: int, lr: float) -> Dispatched:
        """Start optimizer step `step` at learning rate `lr`, without waiting for it."""

    @abstractmethod
    def read(self, done: Dispatched) -> StepRead:
        """Wait for a dispatched step (the oldest not read yet)."""

    def compile_seconds(self) -> float:
        """The seconds this process's compiler has spent so far, by its own clock (0 for a
        framework that compiles nothing or cannot say): the loop counts what it grows by while
        a step is dispatched as the `compile` phase."""
        return 0.0

    @contextmanager
    def waiting_for_data(self) -> Iterator[None]:
        """Around the fetch of a step's batch: the time it takes is the step's data_wait."""
        began = time.perf_counter()
        try:
            yield
        finally:
            self.in_steps["data_wait"] += time.perf_counter() - began

    def agreed_stop(self) -> signal.Signals | None:
        """A stop signal every process agrees on right after this step; None where the stop
        flags travel with the steps' own reductions instead (`StepRead.stop`)."""
        return None

    @abstractmethod
    def validation_loss(self) -> float:
        """The mean loss over the held-out batches, the same on every process."""

    @abstractmethod
    def save(self, step: int, loss: float | None, background: bool = False) -> str:
        """Checkpoint `step` on every process; returns its path. In the background the path is
        where it will be once committed; `saved` reports it then."""

    def finish_saves(self) -> None:  # noqa: B027 (a framework without background saves)
        """Commit any checkpoint still being written in the background."""

    @abstractmethod
    def read_trainer_state(self, info: CheckpointInfo) -> dict[str, Any]:
        """The trainer state of a checkpoint this framework can resume (a ValueError saying why
        not otherwise): step, loss, model, data."""

    @abstractmethod
    def load(self, info: CheckpointInfo, trainer_state: dict[str, Any]) -> None:
        """Restore the weights and optimizer state (and what else the framework saved)."""

    @abstractmethod
    def export(self, step: int, loss: float | None) -> None:
        """Write the final model to config.model_dir for serving (`write_export_config` last)."""

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
        self._run_started(resume_from)
        self.tracker = tracking.start(config.to_dict(), self.rank)
        step, last_loss = 0, None
        if resume_from:
            step, last_loss = self._restore(resume_from)
        self.begin(resumed=resume_from is not None)

        while step < config.steps:
            step += 1
            compiled = self.compile_seconds()
            self.pending.append(self.dispatch(step, lr_at(step, config)))
            # A reset compiler starts its clock again: never a negative compile.
            self.in_steps["compile"] += max(self.compile_seconds() - compiled, 0.0)
            self._pause_if_requested(step)
            finishing = step == config.steps
            evaluating = bool(config.eval_every) and (step % config.eval_every == 0 or finishing)
            saving = self.checkpoints is not None and (
                finishing or bool(config.checkpoint_every and step % config.checkpoint_every == 0)
            )
            stop_signal = self.agreed_stop()
            # The newest step stays in flight unless it ends in an evaluation, a checkpoint, a
            # stop or the end: then its loss is needed now (and the last step's event must be
            # printed before run_finished, whatever else the run does).
            loss, read_stop = self._read_steps(
                keep_latest=not (evaluating or saving or finishing or stop_signal is not None))
            last_loss = loss if loss is not None else last_loss
            stop_signal = stop_signal or read_stop
            if stop_signal is not None:
                loss, _ = self._read_steps(keep_latest=False)
                last_loss = loss if loss is not None else last_loss
                # The emergency checkpoint is written now, not in the background: the process
                # exits right after, within the preemption notice.
                path = self.save(step, last_loss) if self.checkpoints else None
                if self.is_main:
                    events.preempted(stop_signal.name, step, path)
                return preemption.exit_code(stop_signal)
            if evaluating:
                self._evaluate(step)
            if saving:
                self._phase_begins("checkpoint_save", step)
                began = time.monotonic()
                self.save(step, last_loss, background=self.saves_in_background() and not finishing)
                self._phase("checkpoint_save", began, step)  # what the steps waited for

        began = time.monotonic()
        self.finish_saves()
        if self.saves_in_background():  # the wait for the last background save
            self._phase("checkpoint_save", began, step)
        # Every rank, before the export: its fields may be gathered, and they describe the
        # training (an export gathers the model into the host's memory, not a device's).
        finished = self.finished_fields()
        self.export(step, last_loss)
        if self.is_main:
            events.run_finished(step, last_loss, time.monotonic() - started, **finished)
        return 0

    def finished_fields(self) -> dict[str, Any]:
        """Fields of run_finished beyond the contract's (every rank calls it)."""
        return {}

    def saves_in_background(self) -> bool:
        """Whether periodic checkpoints are written while training goes on."""
        return False

    def _run_started(self, resume_from: CheckpointInfo | None) -> None:
        m = self.config.model
        fields = self.started_fields()
        events.run_started(
            self.rank,
            self.world_size,
            fields.pop("strategy"),
            fields.pop("params"),
            resume_from.step if resume_from else None,
            dims=fields.pop("dims"),
            shape={"n_layer": m.n_layer, "n_head": m.n_head, "d_model": m.n_embd,
                   "seq_len": m.block_size, **fields.pop("shape", {})},
            precision=fields.pop("precision"),
        )

    def _read_steps(self, keep_latest: bool) -> tuple[float | None, signal.Signals | None]:
        """Read the dispatched steps, oldest first, all of them or all but the newest; print
        each step's event; return the newest loss read and any stop agreed with them."""
        config = self.config
        loss: float | None = None
        stop_signal: signal.Signals | None = None
        while len(self.pending) > (1 if keep_latest else 0):
            done = self.pending.pop(0)
            read = self.read(done)
            loss = read.loss
            stop_signal = stop_signal or read.stop
            if self.is_main and (done.step % config.log_every == 0 or done.step == config.steps):
                self._in_step_phases(done.step)
                tokens = config.batch_size * config.model.block_size
                events.step(done.step, config.steps, loss, done.lr, tokens / read.seconds,
                            read.seconds, rank_step_time_s=read.rank_times)
                self.tracker.log(done.step, {"loss": loss, "lr": done.lr,
                                             "tokens_per_s": tokens / read.seconds,
                                             "step_time_s": read.seconds})
        return loss, stop_signal

    def _pause_if_requested(self, step: int) -> None:
        """Fault injection for tests (TRAINERS_PAUSE_AT=step_end:N, first runs only): wait after
        step N until a stop signal arrives, so a test can stop the run at a known step."""
        if self.resumed or os.environ.get(faults.ENV) != f"step_end:{step}":
            return
        events.emit(contract_events.PAUSED, f"paused at the end of step {step} ({faults.ENV})",
                    point="step_end", step=step, rank=self.rank)
        deadline = time.monotonic() + faults.PAUSE_S
        while self.stop.received is None and time.monotonic() < deadline:
            time.sleep(0.02)

    def _evaluate(self, step: int) -> None:
        """Mean loss on held-out text: the same global batches at every evaluation, so the figure
        does not depend on how the run is split."""
        self._phase_begins("eval", step)
        began = time.monotonic()
        val_loss = self.validation_loss()
        if self.is_main:
            metrics = {"val_loss": val_loss, "val_perplexity": math.exp(min(val_loss, 50.0))}
            events.evaluation(step, metrics)
            self._phase("eval", began, step)
            self.tracker.log(step, metrics)
            # A tuning trial's objective, where Vertex reads it (trainers/job/hypertune.py).
            hypertune.report(metrics, step)

    def _in_step_phases(self, step: int) -> None:
        """Rank 0 prints the compile and data_wait seconds summed since they were last
        printed, before the step event of STEP (module docstring): compile whenever there is
        some, data_wait every PHASE_REPORT_STEPS steps and at the last step."""
        due = step == self.config.steps or \
            step - self.in_steps_reported >= PHASE_REPORT_STEPS
        for name in IN_STEP_PHASES:
            seconds = round(self.in_steps[name], 3)
            if seconds > 0 and (due or name == "compile"):
                events.emit(contract_events.PHASE,
                            f"{name} took {seconds:.3f} s up to step {step}", phase=name,
                            seconds=seconds, step=step)
                self.in_steps[name] = 0.0
        if due:
            self.in_steps_reported = step

    def _phase_begins(self, name: str, step: int) -> None:
        """Rank 0 says a phase that prints nothing for a while starts now (`begins`): the
        control plane does not take a long evaluation or checkpoint save for a hang."""
        if self.is_main:
            events.emit(contract_events.PHASE, f"{name} begins", phase=name, seconds=0,
                        step=step, begins=True)

    def _phase(self, name: str, began: float, step: int) -> None:
        """Rank 0 prints how long a span that is no training step took (the contract's `phase`:
        the job's goodput counts it apart). The emergency save at a stop prints none: it runs in
        the preemption notice, which is not billed."""
        if self.is_main:
            seconds = time.monotonic() - began
            events.emit(contract_events.PHASE, f"{name} took {seconds:.2f} s", phase=name,
                        seconds=round(seconds, 3), step=step)

    # -- checkpoints ---------------------------------------------------------------------------

    def _prepare_checkpoints(self) -> CheckpointInfo | None:
        """The checkpoint to start from: the newest complete one in the run's own folder (a
        restarted or recovered run), else the one the job names (`resume_from`, a
        resubmission), which must be complete."""
        found = None
        if self.checkpoints:
            found, removed = self.checkpoints.prepare()
            for path in removed:
                events.emit(contract_events.CHECKPOINT_DISCARDED,
                            f"removed incomplete checkpoint {path}",
                            severity="WARNING", path=path)
        if found is None and self.config.resume_from:
            found = named_checkpoint(self.config.resume_from)
        return found

    def saved(self, info: CheckpointInfo, started: float) -> None:
        """Report a committed checkpoint, and what rotation removed for it."""
        if self.is_main:
            events.checkpoint_saved(info.step, info.path, info.metadata.get("bytes", 0),
                                    time.monotonic() - started)
            # Rotation: the control plane lists only the checkpoints that still exist.
            for path in info.pruned:
                events.checkpoint_deleted(step_of_folder(path), path)

    def trainer_state(self, step: int, loss: float | None) -> dict[str, Any]:
        """What a checkpoint holds besides the weights and the optimizer."""
        return {
            "step": step,
            "loss": loss,
            "model": asdict(self.config.model),
            # The batches are a function of (seed, step): the position is the next step.
            "data": {"next_step": step + 1, "seed": self.config.seed, **self.corpus.describe()},
        }

    def _restore(self, info: CheckpointInfo) -> tuple[int, float | None]:
        began = time.monotonic()
        state = self.read_trainer_state(info)
        if state["model"] != asdict(self.config.model):
            raise ValueError(
                f"checkpoint {info.path} holds a model {state['model']}, this run builds "
                f"{asdict(self.config.model)}: use another checkpoint directory"
            )
        self.load(info, state)
        data = state["data"]
        if self.is_main and (data["sha256"], data["seed"]) != (
            self.corpus.sha256,
            self.config.seed,
        ):
            events.emit(
                contract_events.DATA_CHANGED,
                "the corpus or seed differs from the checkpoint's: the "
                "resumed run sees other batches",
                severity="WARNING",
                checkpoint=data,
                current=self.corpus.describe(),
            )
        if self.is_main:
            events.resumed(state["step"], info.path)
            self._phase("restore", began, int(state["step"]))
        self.resumed = True
        return int(state["step"]), state["loss"]

    # -- export ---------------------------------------------------------------------------------

    def write_export_config(self, step: int, loss: float | None, **fields: Any) -> None:
        """The exported model's config.json, written last: a model folder with a config.json
        holds a complete model."""
        assert self.model_storage is not None and self.config.model_dir is not None
        storage, folder = self.model_storage, self.config.model_dir
        exported = {
            "model": asdict(self.config.model),
            "tokenizer": "bytes",  # token = byte value 0..255
            **fields,
            "step": step,
            "final_loss": loss,
            "train": self.config.to_dict(),
        }
        storage.replace_file(storage.join(folder, EXPORTED_CONFIG_FILE),
                             json.dumps(exported, indent=1).encode())

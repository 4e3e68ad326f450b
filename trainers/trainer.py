"""One training run on one rank: set up, resume, train, checkpoint, evaluate, export.

Every rank runs this same code; the process group is already joined. Collectives happen in the
same order on every rank (one all-reduce per step for the loss, the stop flags and whether a
background checkpoint write has finished; one per evaluation; the checkpoint manager's
broadcasts), so no rank waits for a call another rank never makes.
"""

from __future__ import annotations

import io
import json
import math
import random
import signal
import time
from concurrent.futures import Future
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from trainers import events, faults, hypertune, preemption, run_state, strategies, tracking
from trainers.checkpoint import (
    CheckpointInfo,
    CheckpointManager,
    describe_failure,
    named_checkpoint,
    skip_zip_crc32,
    step_folder_name,
    step_of_folder,
)
from trainers.cluster import Process
from trainers.config import TrainConfig
from trainers.data import EVAL_STREAM, Corpus, load_corpus, local_batch
from trainers.model import GPT
from trainers.optim import lr_at, set_lr
from trainers.storage import Storage, storage_for

CONFIG_FILE = "config.json"
EXPORTED_MODEL_FILE = "model.pt"
EXPORTED_CONFIG_FILE = "config.json"


class Trainer:
    def __init__(
        self, config: TrainConfig, process: Process, device: str, stop: preemption.StopRequest
    ) -> None:
        self.config = config
        self.process = process
        self.device = device
        self.stop = stop
        self.is_main = process.is_main
        # Whether this run continues from a checkpoint (fault injection acts on first runs only).
        self.resumed = False
        # W&B, when the job carries a team's settings (rank 0 only): started once the run is.
        self.tracker: tracking.Tracker = tracking.NoTracker()

        # Global RNGs are seeded (and checkpointed) for whatever uses them; the data and the
        # initial weights come from their own seeded generators.
        torch.manual_seed(config.seed)
        random.seed(config.seed)
        np.random.seed(config.seed)

        self.corpus: Corpus = load_corpus(
            config.data, config.corpus_max_bytes, config.model.block_size
        )
        self.strategy = strategies.create(config, process, device)
        model = GPT(config.model, seed=config.seed).to(device)
        self.params = model.num_parameters()
        self.model, self.optimizer = self.strategy.setup(model)
        self.pending: _PendingSave | None = None  # a checkpoint being written in the background
        self.reductions: list[_Reduction] = []  # steps' all-reduces not waited for yet
        # The per-step reduction has a process group of its own, so it never queues in front
        # of (or behind) the strategy's gradient collectives on the default group.
        self.stats_group = dist.new_group()
        self.checkpoints = (
            CheckpointManager(config.checkpoint_dir, config.keep, process.rank, process.world_size)
            if config.checkpoint_dir
            else None
        )
        skip_zip_crc32()  # checkpoints must be written fast: a preemption gives 30 s
        # Fail now, not after hours of training, when the export destination is unusable.
        self.model_storage = storage_for(config.model_dir) if config.model_dir else None

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
        config, process = self.config, self.process
        resume_from = self._prepare_checkpoints()
        events.run_started(
            process.rank,
            process.world_size,
            config.strategy,
            self.params,
            resume_from.step if resume_from else None,
            dims=self.strategy.dims_event(),
            shape={"n_layer": config.model.n_layer, "n_head": config.model.n_head,
                   "d_model": config.model.n_embd, "seq_len": config.model.block_size},
            precision=config.precision,
        )
        self.tracker = tracking.start(config.to_dict(), process.rank)
        step, last_loss = 0, None
        if resume_from:
            step, last_loss = self._restore(resume_from)

        while step < config.steps:
            step += 1
            self._train_step(step)
            finishing = step == config.steps
            evaluating = bool(config.eval_every) and (step % config.eval_every == 0 or finishing)
            saving = self.checkpoints is not None and (
                finishing or bool(config.checkpoint_every and step % config.checkpoint_every == 0)
            )
            # This step's reduction is left in flight unless the step ends in an evaluation, a
            # checkpoint or the end: then its loss is needed now (and the last step's event
            # must be printed before run_finished, whatever else the run does).
            loss, stop_signal = self._complete_reductions(
                keep_latest=not (evaluating or saving or finishing))
            last_loss = loss if loss is not None else last_loss
            if stop_signal is not None:
                loss, _ = self._complete_reductions(keep_latest=False)
                last_loss = loss if loss is not None else last_loss
                # The emergency checkpoint is written now, not in the background: the process
                # exits right after, within the preemption notice.
                path = self._save(step, last_loss) if self.checkpoints else None
                if self.is_main:
                    events.preempted(stop_signal.name, step, path)
                return preemption.exit_code(stop_signal)
            if evaluating:
                self._evaluate(step)
            if saving:
                self._save(step, last_loss, background=config.async_checkpoint and not finishing)

        self._finish_pending()
        self._export(step, last_loss)
        if self.is_main:
            events.run_finished(step, last_loss, time.monotonic() - started)
        return 0

    def _train_step(self, step: int) -> None:
        """One optimizer step, then its reduction (mean loss, every rank's stop flags, whether
        its part of a background checkpoint is written) started without waiting for it."""
        config = self.config
        started = time.perf_counter()
        lr = lr_at(step, config)
        set_lr(self.optimizer, lr)

        shard, shards = self.strategy.data_shard()
        x, y = local_batch(
            self.corpus.train,
            config.seed,
            step,
            config.batch_size,
            config.model.block_size,
            shard,
            shards,
        )
        x, y = x.to(self.device), y.to(self.device)
        strategy, model = self.strategy, self.model
        loss = strategy.forward_backward(model, x, y)
        strategy.optimizer_step(model, self.optimizer)

        written = self.pending is not None and self.pending.future.done()
        flags = torch.tensor(
            [*self.stop.flags(), float(written)], dtype=torch.float64, device=self.device
        )
        stats = torch.cat([loss.reshape(1), flags])
        work = dist.all_reduce(stats, group=self.stats_group, async_op=True)
        self.reductions.append(_Reduction(step, stats, work, lr, time.perf_counter() - started))

    def _complete_reductions(self, keep_latest: bool) -> tuple[float | None, signal.Signals | None]:
        """Wait for the steps' reductions, oldest first, all of them or all but the newest;
        report each step; return the newest completed step's mean loss and the signal every
        rank agreed to stop for (None to go on).

        A blocking all-reduce at the end of every step costs a few percent of throughput: the
        ranks meet there on top of the strategy's own collectives. Waiting one step later, the
        reduction has long finished. Every rank completes the same reductions at the same
        step, so they still agree on when to stop; a stop is seen one step later, well within
        a preemption notice."""
        config, process = self.config, self.process
        loss: float | None = None
        stop_signal: signal.Signals | None = None
        while len(self.reductions) > (1 if keep_latest else 0):
            done = self.reductions.pop(0)
            done.work.wait()
            stats = done.stats.tolist()
            loss = stats[0] / process.world_size
            stop_signal = stop_signal or preemption.agreed_signal(stats[1:-1])
            if stats[-1] == process.world_size:
                self._finish_pending()  # every rank is done writing: commit without waiting
            if self.is_main and (done.step % config.log_every == 0 or done.step == config.steps):
                tokens = config.batch_size * config.model.block_size
                events.step(
                    done.step, config.steps, loss, done.lr, tokens / done.seconds, done.seconds
                )
                self.tracker.log(done.step, {"loss": loss, "lr": done.lr,
                                             "tokens_per_s": tokens / done.seconds,
                                             "step_time_s": done.seconds})
        return loss, stop_signal

    @torch.no_grad()
    def _evaluate(self, step: int) -> None:
        """Mean loss on held-out text: the same global batches at every evaluation, sliced
        across ranks like training batches, so the figure does not depend on the world size."""
        config, process = self.config, self.process
        self.model.eval()
        total = torch.zeros(1, dtype=torch.float64, device=self.device)
        shard, shards = self.strategy.data_shard()
        for i in range(config.eval_batches):
            x, y = local_batch(
                self.corpus.val,
                config.seed,
                i,
                config.batch_size,
                config.model.block_size,
                shard,
                shards,
                stream=EVAL_STREAM,
            )
            total += self.strategy.eval_loss(self.model, x.to(self.device), y.to(self.device))
        self.model.train()
        dist.all_reduce(total)
        val_loss = total.item() / (process.world_size * max(1, config.eval_batches))
        if self.is_main:
            metrics = {"val_loss": val_loss, "val_perplexity": math.exp(min(val_loss, 50.0))}
            events.evaluation(step, metrics)
            self.tracker.log(step, metrics)
            # A tuning trial's objective, where Vertex reads it (trainers/hypertune.py).
            hypertune.report(metrics, step)

    # -- checkpoints ---------------------------------------------------------------------------

    def _prepare_checkpoints(self) -> CheckpointInfo | None:
        """The checkpoint to start from: the newest complete one in the run's own folder (a
        restarted or recovered run), else the one the job names (`resume_from`, a
        resubmission), which must be complete."""
        found = None
        if self.checkpoints:
            found, removed = self.checkpoints.prepare()
            for path in removed:
                events.emit(
                    "checkpoint_discarded",
                    f"removed incomplete checkpoint {path}",
                    severity="WARNING",
                    path=path,
                )
        if found is None and self.config.resume_from:
            found = named_checkpoint(self.config.resume_from)
        return found

    def _save(self, step: int, loss: float | None, background: bool = False) -> str:
        """Checkpoint `step` on every rank; returns its path. In the background, the path is
        where it will be once committed (at a later step boundary, see `_train_step`)."""
        assert self.checkpoints is not None
        self._finish_pending()  # one checkpoint in flight at a time, committed in order
        started = time.monotonic()
        storage = self.checkpoints.storage
        if background:
            folder = self.checkpoints.begin(step)
            try:
                self._write_trainer_state(storage, folder, step, loss)
                future = self.strategy.save_async(storage, folder, self.model, self.optimizer)
            except Exception as exc:
                future = Future()
                future.set_exception(exc)
            self.pending = _PendingSave(step, folder, loss, future, started)
            return storage.join(self.checkpoints.root, step_folder_name(step))

        def write(storage: Storage, folder: str) -> None:
            self.strategy.save(storage, folder, self.model, self.optimizer)
            faults.pause_if_requested(
                "checkpoint_write", step, self.process.rank, folder, resumed=self.resumed
            )
            self._write_trainer_state(storage, folder, step, loss)

        info = self.checkpoints.save(step, write, self._metadata(loss))
        self._saved(info, started)
        return info.path

    def _finish_pending(self) -> None:
        """Commit the background checkpoint, waiting for its write if needed (every rank)."""
        pending, self.pending = self.pending, None
        if pending is None or self.checkpoints is None:
            return
        failure = None
        try:
            pending.future.result()
        except Exception as exc:
            failure = describe_failure(self.process.rank, exc)
        info = self.checkpoints.finish(
            pending.step, pending.folder, failure, self._metadata(pending.loss)
        )
        self._saved(info, pending.started)

    def _saved(self, info: CheckpointInfo, started: float) -> None:
        if self.is_main:
            events.checkpoint_saved(
                info.step, info.path, info.metadata["bytes"], time.monotonic() - started
            )
            # Rotation: the control plane lists only the checkpoints that still exist.
            for path in info.pruned:
                events.checkpoint_deleted(step_of_folder(path), path)

    def _metadata(self, loss: float | None) -> dict[str, Any]:
        return {
            "world_size": self.process.world_size,
            "strategy": self.config.strategy,
            "dims": self.strategy.dims_event(),
            "format": self.strategy.checkpoint_format,
            "loss": loss,
        }

    def _write_trainer_state(
        self, storage: Storage, folder: str, step: int, loss: float | None
    ) -> None:
        run_state.write(storage, folder, self.process.rank, self._trainer_state(step, loss))
        if self.is_main:
            storage.write_bytes(
                storage.join(folder, CONFIG_FILE),
                json.dumps(self.config.to_dict(), indent=1).encode(),
            )

    def _trainer_state(self, step: int, loss: float | None) -> dict[str, Any]:
        return {
            "step": step,
            "loss": loss,
            "model": asdict(self.config.model),
            # The batches are a function of (seed, step): the position is the next step.
            "data": {"next_step": step + 1, "seed": self.config.seed, **self.corpus.describe()},
            "rng": run_state.capture_rng(self.device),
        }

    def _restore(self, info: CheckpointInfo) -> tuple[int, float | None]:
        # A named checkpoint may live outside this run's own folder (an earlier job's, perhaps
        # on other storage): read it through its own.
        own = self.checkpoints is not None and info.path.startswith(self.checkpoints.root)
        storage = self.checkpoints.storage if own else storage_for(info.path)
        self.strategy.check_resumable(info.metadata, info.path)
        state = run_state.read(storage, info.path, self.process.rank)
        if state["model"] != asdict(self.config.model):
            raise ValueError(
                f"checkpoint {info.path} holds a model {state['model']}, this run builds "
                f"{asdict(self.config.model)}: use another checkpoint directory"
            )
        self.strategy.load(storage, info.path, self.model, self.optimizer)
        run_state.restore_rng(state["rng"], self.device)
        data = state["data"]
        if self.is_main and (data["sha256"], data["seed"]) != (
            self.corpus.sha256,
            self.config.seed,
        ):
            events.emit(
                "data_changed",
                "the corpus or seed differs from the checkpoint's: the "
                "resumed run sees other batches",
                severity="WARNING",
                checkpoint=data,
                current=self.corpus.describe(),
            )
        if self.is_main:
            events.resumed(state["step"], info.path)
        self.resumed = True
        return int(state["step"]), state["loss"]

    # -- export ---------------------------------------------------------------------------------

    def _export(self, step: int, loss: float | None) -> None:
        """The final weights and config for serving. The config is written last: a model
        folder with a config.json holds a complete model."""
        weights = self.strategy.full_state_dict(self.model)
        if not (self.is_main and self.model_storage and self.config.model_dir):
            return
        storage, folder = self.model_storage, self.config.model_dir
        storage.make_dirs(folder)
        buffer = io.BytesIO()
        torch.save(weights, buffer)
        storage.replace_file(storage.join(folder, EXPORTED_MODEL_FILE), buffer.getvalue())
        exported = {
            "model": asdict(self.config.model),
            "tokenizer": "bytes",  # token = byte value 0..255
            "step": step,
            "final_loss": loss,
            "train": self.config.to_dict(),
        }
        storage.replace_file(
            storage.join(folder, EXPORTED_CONFIG_FILE), json.dumps(exported, indent=1).encode()
        )


@dataclass
class _Reduction:
    """A step's all-reduce in flight, and what its step event will say."""

    step: int
    stats: torch.Tensor
    work: Any  # torch.distributed's Work handle
    lr: float
    seconds: float


@dataclass
class _PendingSave:
    step: int
    folder: str
    loss: float | None
    future: Future[None]
    started: float

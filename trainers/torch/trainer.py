"""The PyTorch trainer's run on one rank: the loop of trainers/loop.py over a strategy.

Every rank runs this same code; the process group is already joined. Collectives happen in the
same order on every rank (one all-reduce per step for the loss, the stop flags and whether a
background checkpoint write has finished; one per evaluation; the checkpoint manager's
broadcasts), so no rank waits for a call another rank never makes.

A step's all-reduce is started without waiting for it: a blocking all-reduce at the end of
every step costs a few percent of throughput (the ranks meet there on top of the strategy's own
collectives), and read one step later it has long finished. Every rank reads the same
reductions at the same step, so they still agree on when to stop; a stop is seen one step
later, well within a preemption notice.
"""

from __future__ import annotations

import io
import json
import random
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from trainers.checkpoint import CheckpointInfo, step_folder_name
from trainers.corpus import EVAL_STREAM, load_corpus
from trainers.job import faults, preemption
from trainers.job.cluster import Process
from trainers.loop import Dispatched, StepRead, TrainingLoop
from trainers.storage import Storage, storage_for
from trainers.torch import compile_time, memory_meter, run_state, strategies, streamed, vlm_data
from trainers.torch.checkpoints import CheckpointManager, describe_failure, skip_zip_crc32
from trainers.torch.config import TrainConfig
from trainers.torch.data import local_batch
from trainers.torch.models import build_model, hf_spec, hf_weights, on_device, tokens, vlm
from trainers.torch.optim import set_lr
from trainers.torch.strategies.base import Strategy

CONFIG_FILE = "config.json"
EXPORTED_MODEL_FILE = "model.pt"


class Trainer(TrainingLoop):
    def __init__(
        self,
        config: TrainConfig,
        process: Process,
        device: str,
        stop: preemption.StopRequest,
        strategy: Strategy | None = None,
    ) -> None:
        """`strategy`: how the model is split and stepped; by default the one the config
        names (the PyTorch/XLA trainer brings its own)."""
        # Global RNGs are seeded (and checkpointed) for whatever uses them; the data and the
        # initial weights come from their own seeded generators.
        torch.manual_seed(config.seed)
        random.seed(config.seed)
        np.random.seed(config.seed)
        config = vlm_data.evaluated(streamed.evaluated(config))
        corpus = load_corpus(config.data, config.corpus_max_bytes, config.model.block_size)
        # Streamed data are tokenized as read: the corpus (unused then) is not, which takes
        # seconds on every rank.
        if config.tokenizer and not (config.stream.data_files or config.vlm_data):
            corpus = tokens.tokenized(corpus, config.tokenizer, config.model.block_size)
        super().__init__(config, stop, corpus, process.rank, process.world_size)
        self.config: TrainConfig = config
        self.process = process
        self.device = device

        self.strategy = strategy or strategies.create(config, process, device)
        # The preset's GPT, or a Hugging Face model (built on the meta device, given its
        # weights by the strategy once split) that is exported in Hugging Face's layout.
        self.hf_spec = hf_spec(config)
        self.hf_export = (config.export_hf or config.model_dir) if self.hf_spec else None
        # Measured from the model's build on: a sharded layout never holds the whole model.
        self.meter = memory_meter.start(config.memory_limit_mib, config.measure_memory,
                                        process.rank)
        model = build_model(config, self.strategy.build_context())
        self.params = model.num_parameters()  # before any device unties the embeddings
        self.model, self.optimizer = self.strategy.setup(on_device(model, device))
        # --data-files: this rank's share of the streamed files instead of the corpus (after
        # setup: a tensor x pipeline strategy knows its data-parallel rank from its mesh).
        self.streamed = streamed.open_batches(
            config, *self.strategy.data_shard(), tokenizer=config.tokenizer,
            vocab_size=self.hf_spec.vocab_size if self.hf_spec else config.model.vocab_size,
            device=device)
        if config.vlm_data:  # --vlm-data: image + text pairs, batched by (seed, step)
            assert self.hf_spec is not None
            self.streamed = vlm_data.open_batches(
                config, *self.strategy.data_shard(), self.hf_spec, device)
        self.pending_save: _PendingSave | None = None  # a checkpoint written in the background
        self.stats_group = self._stats_group()
        self.checkpoints = self._checkpoint_manager() if config.checkpoint_dir else None
        skip_zip_crc32()  # checkpoints must be written fast: a preemption gives 30 s
        self.storage_of_restored: Storage | None = None
        # When this rank's newest forward pass ended: its own time in a step ends there (what
        # follows waits for the other ranks in the gradient collectives).
        self.forward_done = 0.0
        # This rank's own time in the steps since the last report, and how many: a report is
        # their mean, so one step's scheduling jitter (a shared core) names no straggler.
        self.own_seconds, self.own_steps = 0.0, 0
        if isinstance(self.model, torch.nn.Module):
            self.model.register_forward_hook(self._note_forward)

    def _note_forward(self, *_: Any) -> None:
        self.forward_done = time.perf_counter()

    def _stats_group(self) -> Any:
        # The per-step reduction has a process group of its own, so it never queues in front
        # of (or behind) the strategy's gradient collectives on the default group.
        return dist.new_group()

    def _checkpoint_manager(self) -> CheckpointManager:
        assert self.config.checkpoint_dir
        return CheckpointManager(
            self.config.checkpoint_dir, self.config.keep, self.process.rank,
            self.process.world_size)

    # -- steps ---------------------------------------------------------------------------------

    def started_fields(self) -> dict[str, Any]:
        return {"strategy": self.config.strategy, "params": self.params,
                "dims": self.strategy.dims_event(), "precision": self.config.precision,
                "shape": {**self._model_shape(), **self.strategy.started_shape()}}

    def _model_shape(self) -> dict[str, Any]:
        """A Hugging Face model's shape in run_started (the GPT's comes from config.model)."""
        spec = self.hf_spec
        if spec is None:
            return {}
        return {"n_layer": spec.n_layer, "n_head": spec.n_head, "d_model": spec.hidden_size,
                "n_kv_head": spec.n_kv_head, "architecture": spec.architecture}

    def run(self) -> int:
        try:
            return super().run()
        finally:
            if self.meter is not None:
                self.meter.close()

    def finished_fields(self) -> dict[str, Any]:
        """With a meter: every rank's peak tensor memory (rank 0 first)."""
        if self.meter is None:
            return {}
        self.meter.close()
        peaks = torch.tensor([self.meter.peak_bytes], dtype=torch.int64, device=self.device)
        gathered = [torch.zeros_like(peaks) for _ in range(self.process.world_size)]
        dist.all_gather(gathered, peaks)
        return {"peak_tensor_bytes": [int(p.item()) for p in gathered]}

    def begin(self, resumed: bool) -> None:
        """The model and optimizer are built (and restored) already."""

    def dispatch(self, step: int, lr: float) -> Dispatched:
        """One optimizer step, then its reduction (mean loss, every rank's stop flags, whether
        its part of a background checkpoint is written) started without waiting for it."""
        strategy = self.strategy
        started = time.perf_counter()
        self._injected_faults(step)
        set_lr(self.optimizer, lr)
        with self.waiting_for_data():
            x, y = self._next_batch(step)
        loss = strategy.forward_backward(self.model, strategy.to_device(x), strategy.to_device(y))
        own = (self.forward_done if self.forward_done > started else time.perf_counter()) - started
        strategy.optimizer_step(self.model, self.optimizer)
        written = self.pending_save is not None and self.pending_save.future.done()
        handle = self._reduce(loss, [*self.stop.flags(), float(written)],
                              self._rank_slots(step, own))
        return Dispatched(step, lr, handle, time.perf_counter() - started)

    def _next_batch(self, step: int) -> tuple[Any, torch.Tensor]:
        """This rank's batch of STEP, on the CPU: streamed (a VLM's too), or the corpus's."""
        config = self.config
        if config.debug_slow_data_seconds > 0:
            time.sleep(config.debug_slow_data_seconds)  # a slow input pipeline (tests)
        if self.streamed:
            return self.streamed.next_batch()
        shard, shards = self.strategy.data_shard()
        return local_batch(self.corpus.train, config.seed, step, config.batch_size,
                           config.model.block_size, shard, shards)

    def compile_seconds(self) -> float:
        """torch.compile's time so far (--compile-blocks), by TorchDynamo's own clock."""
        return compile_time.seconds() if self.config.compile_blocks else 0.0

    def _rank_slots(self, step: int, own: float) -> list[float]:
        """On a step whose event carries the per-rank times, one slot per rank with this rank's
        own time in its slot (its mean over the steps since the last report): summed by the
        step's all-reduce, they are every rank's times (an all-gather in the collective the
        step makes anyway). Every rank decides alike."""
        config = self.config
        every = config.rank_times_every
        self.own_seconds += own
        self.own_steps += 1
        if not every or self.world_size < 2 or step % every or step % config.log_every:
            return []
        slots = [0.0] * self.world_size
        slots[self.rank] = self.own_seconds / self.own_steps
        self.own_seconds, self.own_steps = 0.0, 0
        return slots

    def _injected_faults(self, step: int) -> None:
        """--debug-hang-at-step and --debug-slow-rank (tests of hang and straggler detection)."""
        config = self.config
        if config.debug_hang_at_step == step and not self.resumed and \
                self.rank == self.world_size - 1:
            # Blocks as a collective whose peer died does: no output, no exit, until killed.
            while True:
                time.sleep(3600)
        if config.debug_slow_rank == self.rank and config.debug_slow_seconds > 0:
            time.sleep(config.debug_slow_seconds)

    def _reduce(self, loss: torch.Tensor, flags: list[float], slots: list[float]) -> Any:
        stats = torch.cat([loss.reshape(1), torch.tensor(
            [*flags, *slots], dtype=torch.float64, device=self.device)])
        return stats, dist.all_reduce(stats, group=self.stats_group, async_op=True), len(slots)

    def read(self, done: Dispatched) -> StepRead:
        stats, work, ranks = done.handle
        work.wait()
        summed = stats.tolist()
        rank_times = tuple(summed[len(summed) - ranks:]) if ranks else None
        summed = summed[:len(summed) - ranks]
        if summed[-1] == self.world_size:
            self.finish_saves()  # every rank is done writing: commit without waiting
        assert done.seconds is not None
        return StepRead(summed[0] / self.world_size, done.seconds,
                        preemption.agreed_signal(summed[1:-1]), rank_times)

    @torch.no_grad()
    def validation_loss(self) -> float:
        """The same global batches at every evaluation, sliced across ranks like training
        batches, so the figure does not depend on the world size."""
        config, strategy = self.config, self.strategy
        self.model.eval()
        total = torch.zeros(1, dtype=torch.float64, device=self.device)
        for i in range(config.eval_batches):
            x, y = self.eval_batch(i)
            total += strategy.eval_loss(self.model, strategy.to_device(x), strategy.to_device(y))
        self.model.train()
        dist.all_reduce(total)
        return total.item() / (self.world_size * max(1, config.eval_batches))

    def eval_batch(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        """This rank's share of held-out global batch `index`, on the CPU."""
        if self.streamed:
            return self.streamed.eval_batch(index)
        config = self.config
        shard, shards = self.strategy.data_shard()
        return local_batch(self.corpus.val, config.seed, index, config.batch_size,
                           config.model.block_size, shard, shards, stream=EVAL_STREAM)

    # -- checkpoints ---------------------------------------------------------------------------

    def saves_in_background(self) -> bool:
        return self.config.async_checkpoint and self.strategy.supports_async_save

    def save(self, step: int, loss: float | None, background: bool = False) -> str:
        assert self.checkpoints is not None
        self.finish_saves()  # one checkpoint in flight at a time, committed in order
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
            self.pending_save = _PendingSave(step, folder, loss, future, started)
            return storage.join(self.checkpoints.root, step_folder_name(step))

        def write(storage: Storage, folder: str) -> None:
            self.strategy.save(storage, folder, self.model, self.optimizer)
            faults.pause_if_requested(
                "checkpoint_write", step, self.rank, folder, resumed=self.resumed
            )
            self._write_trainer_state(storage, folder, step, loss)

        info = self.checkpoints.save(step, write, self.checkpoint_metadata(loss))
        self.saved(info, started)
        return info.path

    def finish_saves(self) -> None:
        """Commit the background checkpoint, waiting for its write if needed (every rank)."""
        pending, self.pending_save = self.pending_save, None
        if pending is None or self.checkpoints is None:
            return
        failure = None
        try:
            pending.future.result()
        except Exception as exc:
            failure = describe_failure(self.rank, exc)
        info = self.checkpoints.finish(
            pending.step, pending.folder, failure, self.checkpoint_metadata(pending.loss)
        )
        self.saved(info, pending.started)

    def checkpoint_metadata(self, loss: float | None) -> dict[str, Any]:
        return {
            "world_size": self.world_size,
            "strategy": self.config.strategy,
            "dims": self.strategy.dims_event(),
            "format": self.strategy.checkpoint_format,
            "loss": loss,
        }

    def _write_trainer_state(
        self, storage: Storage, folder: str, step: int, loss: float | None
    ) -> None:
        run_state.write(storage, folder, self.rank, self.trainer_state(step, loss))
        if self.is_main:
            storage.write_bytes(
                storage.join(folder, CONFIG_FILE),
                json.dumps(self.config.to_dict(), indent=1).encode(),
            )

    def trainer_state(self, step: int, loss: float | None) -> dict[str, Any]:
        return {**super().trainer_state(step, loss), "rng": run_state.capture_rng(self.device),
                "stream": self.streamed.state() if self.streamed else None}

    def read_trainer_state(self, info: CheckpointInfo) -> dict[str, Any]:
        # A named checkpoint may live outside this run's own folder (an earlier job's, perhaps
        # on other storage): read it through its own.
        own = self.checkpoints is not None and info.path.startswith(self.checkpoints.root)
        storage = self.checkpoints.storage if own and self.checkpoints else storage_for(info.path)
        self.strategy.check_resumable(info.metadata, info.path)
        self.storage_of_restored = storage
        return run_state.read(storage, info.path, self.rank)

    def load(self, info: CheckpointInfo, trainer_state: dict[str, Any]) -> None:
        assert self.storage_of_restored is not None
        self.strategy.load(self.storage_of_restored, info.path, self.model, self.optimizer)
        run_state.restore_rng(trainer_state["rng"], self.device)
        if self.streamed:
            self.streamed.resume(trainer_state.get("stream"), self.rank)

    # -- export ---------------------------------------------------------------------------------

    def export(self, step: int, loss: float | None) -> None:
        """The final weights (gathered by sharded strategies, on every rank) and config."""
        weights = self.strategy.full_state_dict(self.model)
        if self.hf_spec is not None:
            if self.is_main and self.hf_export:
                if vlm.is_vlm(self.hf_spec):  # saved under the published checkpoints' names
                    weights = vlm.saved_names(weights)
                hf_weights.export(storage_for(self.hf_export), self.hf_export, weights,
                                  self.hf_spec, self.config.tokenizer,
                                  self.config.export_shard_bytes)
            return
        if not (self.is_main and self.model_storage and self.config.model_dir):
            return
        storage, folder = self.model_storage, self.config.model_dir
        storage.make_dirs(folder)
        buffer = io.BytesIO()
        torch.save(weights, buffer)
        storage.replace_file(storage.join(folder, EXPORTED_MODEL_FILE), buffer.getvalue())
        self.write_export_config(step, loss)


@dataclass
class _PendingSave:
    step: int
    folder: str
    loss: float | None
    future: Future[None]
    started: float

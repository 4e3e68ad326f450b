"""One training run of the XLA trainer on this host: set up, resume, train, checkpoint, export.

The arithmetic is the PyTorch trainer's (trainers/trainer.py, strategy ddp): the same GPT built
on the CPU from the seed (so the same initial weights), the same batches (a function of seed and
step), AdamW with the same groups, the same clipping and learning-rate schedule. Only where it
runs differs: one SPMD program over the mesh (trainers/xla/mesh.py), compiled by XLA.

Checkpoints are the ddp strategy's `torch` format (model.pt, optimizer.pt, trainer.pt,
config.json in a committed `step-N/` folder): the PyTorch trainer resumes them and this one
resumes its. Host 0 writes them (every host holds the whole state on a replicated mesh).
"""

from __future__ import annotations

import io
import json
import math
import os
import random
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from trainers import events, faults, preemption, run_state
from trainers.checkpoint import (
    CheckpointInfo,
    CheckpointManager,
    latest,
    named_checkpoint,
    skip_zip_crc32,
    step_of_folder,
)
from trainers.config import TrainConfig
from trainers.data import EVAL_STREAM, load_corpus, local_batch
from trainers.model import GPT
from trainers.optim import build_optimizer, lr_at, set_lr
from trainers.storage import Storage, storage_for
from trainers.trainer import CONFIG_FILE, EXPORTED_CONFIG_FILE, EXPORTED_MODEL_FILE
from trainers.xla import mesh as meshes

STRATEGY = "xla"
CHECKPOINT_FORMAT = "torch"  # the ddp strategy's files: trainers/strategies/ddp.py
MODEL_FILE = "model.pt"
OPTIMIZER_FILE = "optimizer.pt"


@dataclass
class _Done:
    """A step whose loss is still on the device: read one step later, once the next step's
    program is queued, so the host never waits for the device in between."""

    step: int
    loss: torch.Tensor
    lr: float
    seconds: float


class XlaTrainer:
    def __init__(self, config: TrainConfig, shape: meshes.MeshShape,
                 stop: preemption.StopRequest) -> None:
        self.config = config
        self.shape = shape
        self.stop = stop
        self.host = xr.process_index()
        self.hosts = xr.process_count()
        self.is_main = self.host == 0
        self.device = torch_xla.device()
        torch.manual_seed(config.seed)
        random.seed(config.seed)
        np.random.seed(config.seed)
        self.corpus = load_corpus(config.data, config.corpus_max_bytes, config.model.block_size)
        self.mesh = meshes.build(shape)
        # Host 0 reads and writes the checkpoint folder; the others only read what it chose.
        self.checkpoints = (
            CheckpointManager(config.checkpoint_dir, config.keep, rank=0, world_size=1)
            if config.checkpoint_dir else None
        )
        skip_zip_crc32()  # checkpoints must be written fast: a preemption gives 30 s
        self.model_storage = storage_for(config.model_dir) if config.model_dir else None
        self.pending: _Done | None = None

    def run(self) -> int:
        """Returns the process exit code: 0 when finished, 128+signal when stopped early."""
        started = time.monotonic()
        config = self.config
        resume_from = self._prepare_checkpoints()
        step, last_loss, restored = 0, None, None
        model = GPT(config.model, seed=config.seed)  # on the CPU: the eager trainer's weights
        if resume_from:
            restored = self._read(resume_from)
            model.load_state_dict(restored["model"])
        self.model = model.to(self.device)
        # Moving to an XLA device makes new parameter objects module by module, which unties
        # the output head from the embedding: tie them again, or they would train apart.
        self.model.lm_head.weight = self.model.wte.weight
        split = meshes.shard_parameters(self.model, self.mesh, self.shape)
        self.optimizer = build_optimizer(self.model, config)
        if restored:
            self.optimizer.load_state_dict(restored["optimizer"])
            run_state.restore_rng(restored["state"]["rng"], "cpu")
            step, last_loss = int(restored["state"]["step"]), restored["state"]["loss"]
        events.run_started(
            self.host, self.hosts, STRATEGY, model.num_parameters(),
            resume_from.step if resume_from else None,
            dims=self.shape.as_dict(),
            shape={"n_layer": config.model.n_layer, "n_head": config.model.n_head,
                   "d_model": config.model.n_embd, "seq_len": config.model.block_size,
                   "devices": self.shape.devices, "sharded_parameters": split},
            precision=config.precision,
        )
        if restored and self.is_main:
            events.resumed(step, resume_from.path)

        while step < config.steps:
            step += 1
            loss = self._train_step(step)
            last_loss = loss if loss is not None else last_loss
            self._pause_if_requested(step, resumed=restored is not None)
            finishing = step == config.steps
            evaluating = bool(config.eval_every) and (step % config.eval_every == 0 or finishing)
            saving = self.checkpoints is not None and (
                finishing or bool(config.checkpoint_every and step % config.checkpoint_every == 0))
            if self.stop.received is not None or evaluating or saving or finishing:
                last_loss = self._report_pending() or last_loss
            if self.stop.received is not None:
                # Written now: the process exits right after, within the preemption notice.
                path = self._save(step, last_loss) if self.checkpoints else None
                if self.is_main:
                    events.preempted(self.stop.received.name, step, path)
                return preemption.exit_code(self.stop.received)
            if evaluating:
                self._evaluate(step)
            if saving:
                self._save(step, last_loss)

        self._export(step, last_loss)
        if self.is_main:
            events.run_finished(step, last_loss, time.monotonic() - started)
        return 0

    # -- steps -------------------------------------------------------------------------------

    def _train_step(self, step: int) -> float | None:
        """One optimizer step over the global batch (in micro-steps of micro_batch_size
        sequences per device); returns the previous step's loss once it is read."""
        config = self.config
        started = time.perf_counter()
        lr = lr_at(step, config)
        set_lr(self.optimizer, lr)
        x, y = local_batch(self.corpus.train, config.seed, step, config.batch_size,
                           config.model.block_size, 0, 1)
        micro = config.micro_batch_size * self.shape.devices or len(x)
        accumulation = len(x) // micro
        total = None
        for i in range(accumulation):
            rows = slice(i * micro, (i + 1) * micro)
            loss = self._loss(x[rows], y[rows])
            (loss / accumulation).backward()
            total = loss.detach() if total is None else total + loss.detach()
        if config.grad_clip:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), config.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        torch_xla.sync()  # the step's graph is cut here and runs as one compiled program
        previous = self._report_pending()
        assert total is not None
        self.pending = _Done(step, total / accumulation, lr, time.perf_counter() - started)
        return previous

    def _loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x, y = x.to(self.device), y.to(self.device)
        meshes.shard_batch(x, self.mesh)
        meshes.shard_batch(y, self.mesh)
        if self.config.precision == "bf16":
            with torch.autocast("xla", dtype=torch.bfloat16):
                return self.model(x, y)[1]
        return self.model(x, y)[1]

    def _report_pending(self) -> float | None:
        done, self.pending = self.pending, None
        if done is None:
            return None
        loss = float(done.loss.item())
        config = self.config
        if self.is_main and (done.step % config.log_every == 0 or done.step == config.steps):
            tokens = config.batch_size * config.model.block_size
            events.step(done.step, config.steps, loss, done.lr, tokens / done.seconds,
                        done.seconds)
        return loss

    def _pause_if_requested(self, step: int, resumed: bool) -> None:
        """Fault injection for tests (TRAINERS_PAUSE_AT=step_end:N, first runs only): wait after
        step N until a stop signal arrives, so a test can stop the run at a known step."""
        if resumed or os.environ.get(faults.ENV) != f"step_end:{step}":
            return
        events.emit("paused", f"paused at the end of step {step} ({faults.ENV})",
                    point="step_end", step=step, rank=self.host)
        deadline = time.monotonic() + faults.PAUSE_S
        while self.stop.received is None and time.monotonic() < deadline:
            time.sleep(0.02)

    @torch.no_grad()
    def _evaluate(self, step: int) -> None:
        """Mean loss on the same held-out global batches as the PyTorch trainer's."""
        config = self.config
        self.model.eval()
        total = 0.0
        for i in range(config.eval_batches):
            x, y = local_batch(self.corpus.val, config.seed, i, config.batch_size,
                               config.model.block_size, 0, 1, stream=EVAL_STREAM)
            total += float(self._loss(x, y).item())
        self.model.train()
        val_loss = total / max(1, config.eval_batches)
        if self.is_main:
            events.evaluation(step, {"val_loss": val_loss,
                                     "val_perplexity": math.exp(min(val_loss, 50.0))})

    # -- checkpoints -------------------------------------------------------------------------

    def _prepare_checkpoints(self) -> CheckpointInfo | None:
        found = None
        if self.checkpoints:
            if self.is_main:
                found, removed = self.checkpoints.prepare()
                for path in removed:
                    events.emit("checkpoint_discarded", f"removed incomplete checkpoint {path}",
                                severity="WARNING", path=path)
            if self.hosts > 1:
                xm.rendezvous("checkpoints-prepared")  # host 0 has removed the leftovers
                if not self.is_main:
                    found = latest(self.checkpoints.storage, self.checkpoints.root)
        if found is None and self.config.resume_from:
            found = named_checkpoint(self.config.resume_from)
        return found

    def _read(self, info: CheckpointInfo) -> dict[str, Any]:
        found = info.metadata.get("format", "torch")
        if found != CHECKPOINT_FORMAT:
            raise ValueError(f"checkpoint {info.path} was written by strategy "
                             f"{info.metadata.get('strategy')!r} ({found} format); the XLA "
                             f"trainer reads {CHECKPOINT_FORMAT} checkpoints (ddp, single, "
                             "xla): use another checkpoint directory")
        storage = storage_for(info.path)
        state = run_state.read(storage, info.path, 0)
        if state["model"] != asdict(self.config.model):
            raise ValueError(f"checkpoint {info.path} holds a model {state['model']}, this run "
                             f"builds {asdict(self.config.model)}: use another checkpoint "
                             "directory")
        data = state["data"]
        if self.is_main and (data["sha256"], data["seed"]) != (self.corpus.sha256,
                                                               self.config.seed):
            events.emit("data_changed", "the corpus or seed differs from the checkpoint's: the "
                        "resumed run sees other batches", severity="WARNING", checkpoint=data,
                        current=self.corpus.describe())
        return {"state": state,
                "model": _load(storage, storage.join(info.path, MODEL_FILE)),
                "optimizer": _load(storage, storage.join(info.path, OPTIMIZER_FILE))}

    def _save(self, step: int, loss: float | None) -> str | None:
        assert self.checkpoints is not None
        started = time.monotonic()
        # Every host takes part in moving the state off the devices; host 0 writes it.
        model_state = _cpu(self.model.state_dict())
        optimizer_state = _cpu(self.optimizer.state_dict())
        path = None
        if self.is_main:
            def write(storage: Storage, folder: str) -> None:
                for name, obj in ((MODEL_FILE, model_state), (OPTIMIZER_FILE, optimizer_state)):
                    with storage.open_write(storage.join(folder, name)) as f:
                        torch.save(obj, f)
                run_state.write(storage, folder, 0, self._trainer_state(step, loss))
                storage.write_bytes(storage.join(folder, CONFIG_FILE),
                                    json.dumps(self.config.to_dict(), indent=1).encode())

            info = self.checkpoints.save(step, write, {
                "world_size": self.shape.devices, "strategy": STRATEGY,
                "dims": self.shape.as_dict(), "format": CHECKPOINT_FORMAT, "loss": loss})
            events.checkpoint_saved(info.step, info.path, info.metadata["bytes"],
                                    time.monotonic() - started)
            for pruned in info.pruned:
                events.checkpoint_deleted(step_of_folder(pruned), pruned)
            path = info.path
        if self.hosts > 1:
            xm.rendezvous(f"checkpoint-{step}")  # no host runs ahead of an unwritten save
        return path

    def _trainer_state(self, step: int, loss: float | None) -> dict[str, Any]:
        return {
            "step": step,
            "loss": loss,
            "model": asdict(self.config.model),
            "data": {"next_step": step + 1, "seed": self.config.seed, **self.corpus.describe()},
            "rng": run_state.capture_rng("cpu"),
        }

    def _export(self, step: int, loss: float | None) -> None:
        """The final weights and config for serving, as the PyTorch trainer exports them."""
        weights = _cpu(self.model.state_dict())
        if not (self.is_main and self.model_storage and self.config.model_dir):
            return
        storage, folder = self.model_storage, self.config.model_dir
        storage.make_dirs(folder)
        buffer = io.BytesIO()
        torch.save(weights, buffer)
        storage.replace_file(storage.join(folder, EXPORTED_MODEL_FILE), buffer.getvalue())
        exported = {"model": asdict(self.config.model), "tokenizer": "bytes", "step": step,
                    "final_loss": loss, "train": self.config.to_dict()}
        storage.replace_file(storage.join(folder, EXPORTED_CONFIG_FILE),
                             json.dumps(exported, indent=1).encode())


def _cpu(value: Any) -> Any:
    """A copy with every tensor on the CPU (a sharded tensor is gathered whole)."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
    if isinstance(value, dict):
        return {k: _cpu(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_cpu(v) for v in value)
    return value


def _load(storage: Storage, path: str) -> dict[str, Any]:
    with storage.open_read(path) as f:
        return torch.load(f, map_location="cpu", weights_only=True)

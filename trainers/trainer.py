"""One training run on one rank: set up, resume, train, checkpoint, evaluate, export.

Every rank runs this same code; the process group is already joined. Collectives happen in the
same order on every rank (one all-reduce per step for the loss and the stop flags, one per
evaluation, and the checkpoint manager's broadcasts), so no rank waits for a call another rank
never makes.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import random
import signal
import time
from dataclasses import asdict
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from trainers import events, preemption, strategies
from trainers.checkpoint import CheckpointInfo, CheckpointManager
from trainers.cluster import Process
from trainers.config import TrainConfig
from trainers.data import EVAL_STREAM, Corpus, load_corpus, local_batch
from trainers.model import GPT
from trainers.optim import build_optimizer, lr_at, set_lr
from trainers.storage import Storage, storage_for

TRAINER_STATE_FILE = "trainer.pt"
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

        # Global RNGs are seeded (and checkpointed) for whatever uses them; the data and the
        # initial weights come from their own seeded generators.
        torch.manual_seed(config.seed)
        random.seed(config.seed)
        np.random.seed(config.seed)

        self.corpus: Corpus = load_corpus(
            config.data, config.corpus_max_bytes, config.model.block_size
        )
        self.strategy = strategies.create(config.strategy, process, device)
        model = GPT(config.model, seed=config.seed).to(device)
        self.params = model.num_parameters()
        self.model = self.strategy.wrap(model)
        self.optimizer = build_optimizer(self.model, config)
        self.autocast = (
            torch.autocast(torch.device(device).type, dtype=torch.bfloat16)
            if config.precision == "bf16"
            else contextlib.nullcontext()
        )
        self.checkpoints = (
            CheckpointManager(config.checkpoint_dir, config.keep, process.rank, process.world_size)
            if config.checkpoint_dir
            else None
        )
        # Fail now, not after hours of training, when the export destination is unusable.
        self.model_storage = storage_for(config.model_dir) if config.model_dir else None

    # -- the run ---------------------------------------------------------------------------

    def run(self) -> int:
        """Returns the process exit code: 0 when finished, 128+signal when stopped early."""
        started = time.monotonic()
        config, process = self.config, self.process
        resume_from = self._prepare_checkpoints()
        events.run_started(
            process.rank,
            process.world_size,
            config.strategy,
            self.params,
            resume_from.step if resume_from else None,
        )
        step, last_loss = 0, None
        if resume_from:
            step, last_loss = self._restore(resume_from)

        while step < config.steps:
            step += 1
            last_loss, stop_signal = self._train_step(step)
            if stop_signal is not None:
                path = self._save(step, last_loss) if self.checkpoints else None
                if self.is_main:
                    events.preempted(stop_signal.name, step, path)
                return preemption.exit_code(stop_signal)
            finishing = step == config.steps
            if config.eval_every and (step % config.eval_every == 0 or finishing):
                self._evaluate(step)
            if self.checkpoints and (
                finishing or (config.checkpoint_every and step % config.checkpoint_every == 0)
            ):
                self._save(step, last_loss)

        self._export(step, last_loss)
        if self.is_main:
            events.run_finished(step, last_loss, time.monotonic() - started)
        return 0

    def _train_step(self, step: int) -> tuple[float, signal.Signals | None]:
        """One optimizer step; returns the mean loss over ranks and the signal all ranks stop
        for (None to go on)."""
        config, process = self.config, self.process
        started = time.perf_counter()
        lr = lr_at(step, config)
        set_lr(self.optimizer, lr)

        x, y = local_batch(
            self.corpus.train,
            config.seed,
            step,
            config.batch_size,
            config.model.block_size,
            process.rank,
            process.world_size,
        )
        x, y = x.to(self.device), y.to(self.device)
        per_rank = len(x)
        micro = config.micro_batch_size or per_rank
        accumulation = per_rank // micro
        loss_sum = torch.zeros((), dtype=torch.float64, device=self.device)
        for i in range(accumulation):
            rows = slice(i * micro, (i + 1) * micro)
            last = i == accumulation - 1
            # Gradients are averaged across ranks only on the last micro-step.
            with contextlib.nullcontext() if last else self.strategy.no_sync(self.model):
                with self.autocast:
                    _, loss = self.model(x[rows], y[rows])
                (loss / accumulation).backward()
            loss_sum += loss.detach().double()
        if config.grad_clip:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), config.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

        # One all-reduce per step carries the loss and every rank's stop flags.
        flags = torch.tensor(self.stop.flags(), dtype=torch.float64, device=self.device)
        stats = torch.cat([(loss_sum / accumulation).reshape(1), flags])
        dist.all_reduce(stats)
        stats = stats.tolist()
        loss = stats[0] / process.world_size
        stop_signal = preemption.agreed_signal(stats[1:])

        elapsed = time.perf_counter() - started
        if self.is_main and (step % config.log_every == 0 or step == config.steps):
            tokens = config.batch_size * config.model.block_size
            events.step(step, config.steps, loss, lr, tokens / elapsed, elapsed)
        return loss, stop_signal

    @torch.no_grad()
    def _evaluate(self, step: int) -> None:
        """Mean loss on held-out text: the same global batches at every evaluation, sliced
        across ranks like training batches, so the figure does not depend on the world size."""
        config, process = self.config, self.process
        self.model.eval()
        total = torch.zeros(1, dtype=torch.float64, device=self.device)
        for i in range(config.eval_batches):
            x, y = local_batch(
                self.corpus.val,
                config.seed,
                i,
                config.batch_size,
                config.model.block_size,
                process.rank,
                process.world_size,
                stream=EVAL_STREAM,
            )
            with self.autocast:
                _, loss = self.model(x.to(self.device), y.to(self.device))
            total += loss.double()
        self.model.train()
        dist.all_reduce(total)
        val_loss = total.item() / (process.world_size * max(1, config.eval_batches))
        if self.is_main:
            events.evaluation(
                step, {"val_loss": val_loss, "val_perplexity": math.exp(min(val_loss, 50.0))}
            )

    # -- checkpoints ---------------------------------------------------------------------------

    def _prepare_checkpoints(self) -> CheckpointInfo | None:
        if not self.checkpoints:
            return None
        found, removed = self.checkpoints.prepare()
        for path in removed:
            events.emit(
                "checkpoint_discarded",
                f"removed incomplete checkpoint {path}",
                severity="WARNING",
                path=path,
            )
        return found

    def _save(self, step: int, loss: float | None) -> str:
        assert self.checkpoints is not None
        started = time.monotonic()

        def write(storage: Storage, folder: str) -> None:
            self.strategy.save(storage, folder, self.model, self.optimizer)
            if self.is_main:
                with storage.open_write(storage.join(folder, TRAINER_STATE_FILE)) as f:
                    torch.save(self._trainer_state(step, loss), f)
                storage.write_bytes(
                    storage.join(folder, CONFIG_FILE),
                    json.dumps(self.config.to_dict(), indent=1).encode(),
                )

        info = self.checkpoints.save(
            step,
            write,
            {
                "world_size": self.process.world_size,
                "strategy": self.config.strategy,
                "loss": loss,
            },
        )
        if self.is_main:
            events.checkpoint_saved(
                step, info.path, info.metadata["bytes"], time.monotonic() - started
            )
        return info.path

    def _trainer_state(self, step: int, loss: float | None) -> dict[str, Any]:
        return {
            "step": step,
            "loss": loss,
            "model": asdict(self.config.model),
            # The batches are a function of (seed, step): the position is the next step.
            "data": {"next_step": step + 1, "seed": self.config.seed, **self.corpus.describe()},
            "rng": _capture_rng(self.device),
        }

    def _restore(self, info: CheckpointInfo) -> tuple[int, float | None]:
        assert self.checkpoints is not None
        storage = self.checkpoints.storage
        with storage.open_read(storage.join(info.path, TRAINER_STATE_FILE)) as f:
            state = torch.load(f, map_location="cpu", weights_only=True)
        if state["model"] != asdict(self.config.model):
            raise ValueError(
                f"checkpoint {info.path} holds a model {state['model']}, this run builds "
                f"{asdict(self.config.model)}: use another checkpoint directory"
            )
        self.strategy.load(storage, info.path, self.model, self.optimizer)
        _restore_rng(state["rng"], self.device)
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


def _capture_rng(device: str) -> dict[str, Any]:
    name, key, pos, has_gauss, cached = np.random.get_state()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state(device) if device.startswith("cuda") else None,
        "python": random.getstate(),
        # As a tensor: checkpoints load with weights_only=True, which refuses numpy arrays.
        "numpy": {
            "name": name,
            "key": torch.from_numpy(key.astype(np.int64)),
            "pos": pos,
            "has_gauss": has_gauss,
            "cached_gaussian": cached,
        },
    }


def _restore_rng(state: dict[str, Any], device: str) -> None:
    torch.set_rng_state(state["torch"])
    if state["cuda"] is not None and device.startswith("cuda"):
        torch.cuda.set_rng_state(state["cuda"], device)
    random.setstate(state["python"])
    n = state["numpy"]
    np.random.set_state(
        (
            n["name"],
            n["key"].numpy().astype(np.uint32),
            n["pos"],
            n["has_gauss"],
            n["cached_gaussian"],
        )
    )

"""The JAX trainer's run on one host: the loop of trainers/loop.py over a compiled program on a
mesh. Every host runs this same code over the same global arrays.

A step's loss is a device array until read: JAX dispatches asynchronously, so the host builds
the next batch while the devices compute, and a step's time is the time between two reads.
SIGTERM may reach only one VM of a slice: the hosts gather their stop flags after every step.

Per-host step times (straggler detection): a host's own time in a step is its dispatch: its
batch and handing the step to the devices (the compile left out: that is the `compile` phase).
What follows is a wait, for the devices and, through their collectives, for the other hosts (the
gather of stop flags is a device program queued behind the step), the same on every host; a
host slow to dispatch (its input pipeline, its Python) is what the others wait for. So, like the
PyTorch trainer's per-rank times, it is a host's time without its waits. Every rank_times_every
logged steps each host's mean over the steps since the last report travels in that step's
gather (one number more in a collective the step makes anyway), and host 0's step event prints
them, host 0 first (`rank_step_time_s`). A run's first step is left out of the means: its
first calls (transfers, caches) cost tenths of a second that say nothing of a host's speed, and
would outweigh nine steps of milliseconds. One host reports none, as the PyTorch trainer's
single process does.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from trainers.checkpoint import CheckpointInfo
from trainers.corpus import EVAL_STREAM, global_batch, load_corpus
from trainers.jax import compile_time
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
from trainers.job import preemption
from trainers.loop import Dispatched, StepRead, TrainingLoop

STRATEGY = "jax"
EXPORTED_PARAMS_DIR = "params"


class JaxTrainer(TrainingLoop):
    def __init__(self, config: JaxTrainConfig, stop: preemption.StopRequest) -> None:
        corpus = load_corpus(config.data, config.corpus_max_bytes, config.model.block_size)
        super().__init__(config, stop, corpus, jax.process_index(), jax.process_count())
        self.config: JaxTrainConfig = config
        self.shape = mesh_shape(config, jax.device_count())
        self.dtype = compute_dtype(config.precision, jax.default_backend())
        self.program = build_program(config, build_mesh(self.shape), self.dtype)
        self.checkpoints = (
            JaxCheckpoints(config.checkpoint_dir, config.keep, _shared_token())
            if config.checkpoint_dir
            else None
        )
        self.state: Any = None  # parameters and optimizer state, on the mesh
        self.last_read = time.perf_counter()
        # This host's own seconds in the steps since its last report, and how many steps; on a
        # report step, (step, mean) for the step's gather of stop flags to carry; and each
        # reported step's gathered times until the step is read.
        self.own_seconds, self.own_steps = 0.0, 0
        self.own_report: tuple[int, float] | None = None
        self.warm = False  # whether this run has dispatched a step yet
        self.host_times: dict[int, tuple[float, ...]] = {}

    @property
    def precision(self) -> str:
        return "bf16" if self.dtype == jnp.bfloat16 else "fp32"

    # -- steps ---------------------------------------------------------------------------------

    def started_fields(self) -> dict[str, Any]:
        return {"strategy": STRATEGY, "params": self.program.parameter_count(),
                "dims": self.shape.as_dict(), "precision": self.precision,
                "shape": {"devices": jax.device_count()}}

    def begin(self, resumed: bool) -> None:
        if not resumed:
            self.state = self.program.init(jax.random.key(self.config.seed))
        self.last_read = time.perf_counter()

    def dispatch(self, step: int, lr: float) -> Dispatched:
        config, program = self.config, self.program
        started, compiled = time.perf_counter(), compile_time.seconds()
        if config.debug_slow_rank == self.rank and config.debug_slow_seconds > 0:
            time.sleep(config.debug_slow_seconds)  # a straggler (tests)
        with self.waiting_for_data():
            x, y = global_batch(
                self.corpus.train, config.seed, step, config.batch_size, config.model.block_size
            )
        self.state, loss = program.train_step(
            self.state, device_batch(program.batch, x), device_batch(program.batch, y),
            np.float32(lr),
        )
        if self.warm:  # the run's first step is left out (module docstring)
            own = time.perf_counter() - started - (compile_time.seconds() - compiled)
            self.own_seconds += max(own, 0.0)
            self.own_steps += 1
        self.warm = True
        self._due_report(step)
        return Dispatched(step, lr, loss)

    def _due_report(self, step: int) -> None:
        """On a report step (every host decides alike), this host's mean own time since the
        last report is what the step's gather of stop flags carries."""
        config = self.config
        every = config.rank_times_every
        # own_steps is alike on every host too: they all dispatch the same steps.
        if not every or self.world_size < 2 or step % every or step % config.log_every or \
                not self.own_steps:
            return
        self.own_report = (step, self.own_seconds / self.own_steps)
        self.own_seconds, self.own_steps = 0.0, 0

    def compile_seconds(self) -> float:
        """jit's compile time so far (the first step's, and any recompile)."""
        return compile_time.seconds()

    def read(self, done: Dispatched) -> StepRead:
        loss = float(done.handle)  # waits for the step
        now = time.perf_counter()
        seconds, self.last_read = max(now - self.last_read, 1e-9), now
        return StepRead(loss, seconds, rank_times=self.host_times.pop(done.step, None))

    def agreed_stop(self) -> Any:
        """The signal every host stops for after this step (SIGTERM may reach only one VM),
        and on a report step every host's own time in it (module docstring)."""
        flags = self.stop.flags()
        if jax.process_count() > 1:
            # Only a slice of several hosts has anything to gather.
            from jax.experimental import multihost_utils

            report, self.own_report = self.own_report, None
            sent = [*flags, report[1]] if report else flags
            gathered = multihost_utils.process_allgather(np.asarray(sent, np.float32))
            rows = np.asarray(gathered).reshape(-1, len(sent))  # host 0's row first
            if report:
                self.host_times[report[0]] = tuple(float(t) for t in rows[:, len(flags)])
            flags = rows[:, :len(flags)].sum(axis=0).tolist()
        return preemption.agreed_signal(flags)

    def validation_loss(self) -> float:
        """Mean loss on the same held-out global batches at every evaluation."""
        config, program = self.config, self.program
        total = 0.0
        for i in range(config.eval_batches):
            x, y = global_batch(self.corpus.val, config.seed, i, config.batch_size,
                                config.model.block_size, stream=EVAL_STREAM)
            total += float(program.eval_step(
                self.state["params"], device_batch(program.batch, x),
                device_batch(program.batch, y)))
        return total / max(1, config.eval_batches)

    # -- checkpoints ---------------------------------------------------------------------------

    def save(self, step: int, loss: float | None, background: bool = False) -> str:
        assert self.checkpoints is not None
        started = time.monotonic()
        info = self.checkpoints.save(
            step,
            self.state,
            trainer_state=self.trainer_state(step, loss),
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
        self.saved(info, started)
        return info.path

    def read_trainer_state(self, info: CheckpointInfo) -> dict[str, Any]:
        written_as = info.metadata.get("format")
        if written_as != FORMAT:
            raise ValueError(f"checkpoint {info.path} is in format {written_as!r} (the PyTorch "
                             f"trainer's); the JAX trainer resumes only from {FORMAT!r} ones")
        return read_json(info.path, TRAINER_FILE)

    def load(self, info: CheckpointInfo, trainer_state: dict[str, Any]) -> None:
        # Laid out for this run's mesh, whatever mesh wrote it.
        self.state = read_state(info.path, self.program.abstract)

    # -- export ---------------------------------------------------------------------------------

    def export(self, step: int, loss: float | None) -> None:
        """The final parameters (Orbax, every host writing its shards) and config."""
        if not (self.model_storage and self.config.model_dir):
            return
        storage, folder = self.model_storage, self.config.model_dir
        params_path = storage.join(folder, EXPORTED_PARAMS_DIR)
        if self.is_main:
            storage.make_dirs(folder)
            storage.remove_tree(params_path)  # Orbax never overwrites
        write_state(storage, params_path, self.state["params"])
        if self.is_main:
            self.write_export_config(step, loss, format=FORMAT)


def _shared_token() -> str:
    """A random name part every host agrees on (host 0's)."""
    value = secrets.randbits(31)
    if jax.process_count() > 1:
        # Only a slice of several hosts has anything to agree on.
        from jax.experimental import multihost_utils

        value = int(multihost_utils.broadcast_one_to_all(np.int32(value)))
    return f"{value:08x}"

"""The JAX trainer's configuration: every trainer's fields (trainers/config.py, so a `tiny` run
is the same job on either framework) and a mesh in place of the PyTorch trainer's strategies;
`--set field=value` reaches every field here.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainers.config import CHECKPOINTING_MODES, RunConfig, refuse, run_problems
from trainers.config import preset as shared_preset
from trainers.jax.mesh import MeshShape, fit_problems, resolve_mesh

PRECISIONS = ("auto", "fp32", "bf16")


@dataclass(frozen=True)
class JaxTrainConfig(RunConfig):
    # auto: bf16 arithmetic where the device has it (TPU, GPU), fp32 on CPU. Parameters and
    # optimizer state are fp32 in every case.
    precision: str = "auto"

    # Mesh degrees (data, fsdp, tensor; `--mesh D,F,T`): they multiply to the job's device
    # count, all hosts together.
    mesh_data: int = 0  # 0 = the devices fsdp and tensor leave
    mesh_fsdp: int = 1
    mesh_tensor: int = 1

    # Each block rematerialised in backward (`jax.checkpoint`): none | selective | full.
    activation_checkpointing: str = "none"

    # Every this many steps (a logged one) the hosts gather each one's own time in a step (its
    # batch and the step's dispatch, the compile left out: not its wait for the devices, which
    # wait for the slowest host), its mean over the steps since the last report (the run's
    # first step left out), printed as the step event's rank_step_time_s for straggler
    # detection; 0 = never. The PyTorch trainer's field, with its default
    # (trainers/jax/trainer.py says more).
    rank_times_every: int = 10
    # A fault for tests: host debug_slow_rank sleeps debug_slow_seconds in every step.
    debug_slow_rank: int = -1
    debug_slow_seconds: float = 0.0


def preset(name: str) -> JaxTrainConfig:
    return shared_preset(name, JaxTrainConfig)


def mesh_shape(config: JaxTrainConfig, device_count: int) -> MeshShape:
    return resolve_mesh(config.mesh_data, config.mesh_fsdp, config.mesh_tensor, device_count)


def validate(config: JaxTrainConfig, device_count: int) -> None:
    """Fail before any work starts, with a message that says what to change."""
    shape = mesh_shape(config, device_count)  # raises when the degrees do not fit
    m = config.model
    problems = fit_problems(shape, m.n_embd, m.n_head, m.vocab_size, config.batch_size)
    if m.dropout:
        problems.append("model.dropout must be 0 for the JAX trainer (runs stay reproducible "
                        "across meshes)")
    if config.activation_checkpointing not in CHECKPOINTING_MODES:
        problems.append(f"activation_checkpointing must be one of "
                        f"{', '.join(CHECKPOINTING_MODES)}, "
                        f"not {config.activation_checkpointing!r}")
    if config.precision not in PRECISIONS:
        problems.append(f"precision must be one of {', '.join(PRECISIONS)}, "
                        f"not {config.precision!r}")
    if config.rank_times_every < 0:
        problems.append(f"rank_times_every must be >= 0 (0 = never), "
                        f"not {config.rank_times_every}")
    if not config.debug_slow_seconds >= 0:
        problems.append(f"debug_slow_seconds must be >= 0, not {config.debug_slow_seconds!r}")
    refuse(problems + run_problems(config))

"""The PyTorch trainer's checks of a run's configuration against its world size, before any
process group exists: the degrees, the batch, the model (a Hugging Face model's files are read
and checked here), the data and the schedule. Every problem found is said at once, each with
what to change (trainers/config.py `refuse`).

Apart from trainers/torch/config.py, which holds the settings alone: these checks read the
model families (trainers/torch/models/, through model_checks.py), which take the settings as
their input.
"""

from __future__ import annotations

import dataclasses

from trainers.config import CHECKPOINTING_MODES, refuse, run_problems
from trainers.stream.config import stream_problems
from trainers.torch import model_checks
from trainers.torch.config import TrainConfig
from trainers.torch.parallel import model_fit_problems, resolve_dims


def validate(config: TrainConfig, world_size: int) -> None:
    """Fail before any work starts, with a message that says what to change."""
    dims = resolve_dims(config.dp, config.tp, config.pp, world_size)  # raises on its own
    m = config.model
    # A Hugging Face model's files are read and checked first (each raises naming the file).
    hf = model_checks.checked_spec(config, dims)
    problems = []
    if config.batch_size < 1 or config.batch_size % dims.dp:
        problems.append(
            f"batch_size {config.batch_size} (global) must be a positive multiple of the "
            f"data-parallel size {dims.dp}"
        )
    else:
        per_rank = config.batch_size // dims.dp
        if config.micro_batch_size < 0 or (
            config.micro_batch_size and per_rank % config.micro_batch_size
        ):
            problems.append(
                f"micro_batch_size {config.micro_batch_size} must divide the per-rank batch "
                f"{per_rank}"
            )
    problems += model_fit_problems(
        dims,
        n_head=hf.n_head if hf else m.n_head,
        n_layer=hf.n_layer if hf else m.n_layer,
        vocab_size=hf.vocab_size if hf else m.vocab_size,
        block_size=m.block_size,
        schedule=config.pp_schedule,
        virtual_stages=config.pp_virtual_stages,
        sequence_parallel=config.sequence_parallel,
        rank_batch=config.batch_size // dims.dp if config.batch_size % dims.dp == 0 else 0,
        micro_batch_size=config.micro_batch_size,
    )
    if config.device not in ("auto", "cpu", "cuda"):
        problems.append(f"device must be auto, cpu or cuda, not {config.device!r}")
    if config.activation_checkpointing not in CHECKPOINTING_MODES:
        problems.append(
            f"activation_checkpointing must be one of {', '.join(CHECKPOINTING_MODES)}, "
            f"not {config.activation_checkpointing!r}")
    if config.precision not in ("fp32", "bf16"):
        problems.append(f"precision must be fp32 or bf16, not {config.precision!r}")
    problems += stream_problems(config.stream, config.data)
    # Zero steps with an export: the weights are converted (read, then written), not trained.
    converting = config.steps == 0 and bool(config.export_hf)
    refuse(problems + run_problems(dataclasses.replace(config, steps=1) if converting else config))

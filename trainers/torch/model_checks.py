"""The checks of a Hugging Face model run that validation.py's `validate` makes before any
process group exists: its files (config.json, weights, tokenizer: models/hf_config.py) and how the
model splits at the run's parallel degrees. Each failure is one ValueError naming the file and
the key, so the run ends with exit 2 before anything is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainers.torch import vlm_data
from trainers.torch.models.hf_config import ModelSpec, check_tokenizer, check_weights, spec_for
from trainers.torch.models.vlm import expected_shapes as vlm_shapes
from trainers.torch.models.vlm import is_vlm
from trainers.torch.models.vlm import split_problems as vlm_split_problems
from trainers.torch.parallel import ParallelDims

if TYPE_CHECKING:
    from trainers.torch.config import TrainConfig


def checked_spec(config: TrainConfig, dims: ParallelDims) -> ModelSpec | None:
    """The model's checked config (None for the preset's GPT), its weights and tokenizer
    checked against it."""
    if not (config.hf_config or config.init_from):
        for flag, value in (("--tokenizer", config.tokenizer), ("--export-hf", config.export_hf),
                            ("--vlm-data", config.vlm_data)):
            if value:
                raise ValueError(
                    f"{flag} applies to a Hugging Face model: name its config.json with "
                    "--model-config or its weights with --init-from")
        return None
    spec = spec_for(config.hf_config, config.init_from)
    if config.init_from:
        from trainers.torch.models.hf_weights import expected_shapes

        if "://" in config.init_from:
            raise ValueError(
                f"init-from {config.init_from}: a local folder is read (each rank reads its "
                "slices of the files); on Vertex name the bucket's /gcs/... mount instead")
        tied = bool(getattr(spec.transformers_config(), "tie_word_embeddings", False))
        shapes = (vlm_shapes if is_vlm(spec) else expected_shapes)(spec)
        check_weights(config.init_from, shapes, tied)
    if config.tokenizer:
        check_tokenizer(config.tokenizer, spec)
    problems = split_problems(spec, dims, config)
    if problems:
        raise ValueError(f"model config {spec.path}: " + "; ".join(problems))
    return spec


def split_problems(
    spec: ModelSpec, dims: ParallelDims, config: TrainConfig
) -> list[str]:
    """What keeps the model from running at these degrees and this sequence length (the
    heads, layers and vocabulary are checked with the GPT's in parallel.model_fit_problems)."""
    if is_vlm(spec):
        return vlm_split_problems(dims.tp, dims.pp) + vlm_data.data_problems(spec, config)
    problems = vlm_data.data_problems(spec, config)
    tp = dims.tp
    if tp > 1:
        from trainers.torch.models.hf_tensor_parallel import plan_problems

        if spec.n_kv_head % tp:
            problems.append(
                f"key 'num_key_value_heads' {spec.n_kv_head}: tp {tp} must divide it (each "
                "tensor-parallel rank holds whole key/value heads of grouped-query attention)")
        if spec.values["intermediate_size"] % tp:
            problems.append(
                f"key 'intermediate_size' {spec.values['intermediate_size']}: tp {tp} must "
                "divide it (the MLP is split by its width)")
        problems += plan_problems(spec.transformers_config())
    if config.sequence_parallel:
        problems.append("sequence_parallel is implemented for the GPT only: drop it")
    window = spec.sliding_window()
    if window and config.model.block_size > window:
        problems.append(
            f"key 'sliding_window' {window} is shorter than the sequence (model.block_size "
            f"{config.model.block_size}): sliding-window attention is not implemented, "
            f"set model.block_size <= {window}")
    return problems

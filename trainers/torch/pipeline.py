"""Pipeline parallelism (`torch.distributed.pipelining`): stages cut by layer, a schedule by name.

The model's blocks are cut into pp x v consecutive stages of equal size (v = stages per pipeline
rank, `pp_virtual_stages`). Pipeline rank r holds stages r, r + pp, r + 2pp, ... (the "loop"
placement the interleaved schedules expect); the first stage also holds the embeddings, the
last the final norm and the head. Each stage (a `GPTStage`, or a Hugging Face model's
`CausalLMStage`) keeps the full model's parameter names, so checkpoints of any pipeline layout
share one set of names.

Schedules (`pp_schedule`): gpipe (all forwards, then all backwards: simplest, the most
activations in flight), 1f1b (one forward, one backward once the pipeline is full: activations
for at most pp micro-batches), interleaved_1f1b (1F1B over several stages per rank: a smaller
bubble, (pp - 1) / (v x m) of the step instead of (pp - 1) / m, for more point-to-point
traffic).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.distributed import ProcessGroup
from torch.distributed.pipelining import (
    PipelineStage,
    Schedule1F1B,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
)

SCHEDULE_CLASSES = {
    "gpipe": ScheduleGPipe,
    "1f1b": Schedule1F1B,
    "interleaved_1f1b": ScheduleInterleaved1F1B,
}


def stage_indices(pp_rank: int, pp: int, virtual_stages: int) -> list[int]:
    """The stages pipeline rank `pp_rank` holds, in order."""
    return [pp_rank + i * pp for i in range(virtual_stages)]


def stage_layers(stage: int, stages: int, n_layer: int) -> range:
    per_stage = n_layer // stages
    return range(stage * per_stage, (stage + 1) * per_stage)


def build_stage_models(
    make_stage: Callable[[range, bool, bool], torch.nn.Module],
    n_layer: int,
    pp_rank: int,
    pp: int,
    virtual_stages: int,
) -> list[tuple[int, torch.nn.Module]]:
    """(stage index, its part of the model) for every stage this rank holds, each made by
    `make_stage(layers, first, last)` (trainers/torch/models.pipeline_stage)."""
    stages = pp * virtual_stages
    return [
        (
            index,
            make_stage(stage_layers(index, stages, n_layer), index == 0, index == stages - 1),
        )
        for index in stage_indices(pp_rank, pp, virtual_stages)
    ]


def build_schedule(
    name: str,
    parts: list[tuple[int, torch.nn.Module]],
    stages: int,
    device: torch.device,
    group: ProcessGroup,
    microbatches: int,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
):
    """The schedule that runs this rank's stages. Its losses are each micro-batch's mean;
    gradients are scaled by 1 / micro-batches, so a step equals one pass over the batch."""
    pipeline_stages = [
        PipelineStage(module, index, stages, device, group=group) for index, module in parts
    ]
    cls = SCHEDULE_CLASSES[name]
    if len(pipeline_stages) == 1 and name != "interleaved_1f1b":
        return cls(pipeline_stages[0], n_microbatches=microbatches, loss_fn=loss_fn)
    return cls(pipeline_stages, n_microbatches=microbatches, loss_fn=loss_fn)

"""Whose model a memory plan describes (issue 33: "the compose form's model fields describe a
different job than the one that runs").

The plan and the estimate size the request's `model` section. When the job runs the product's
trainer, its arguments say what it trains (contract/trainer_models.py): a plan of other sizes
would price and fit a model that never runs, so the plan says so with the trainer's figures.
When the job runs the team's own code, nothing can be read from it: the plan says it sizes the
model as entered.
"""

from __future__ import annotations

from dataclasses import dataclass

from contract.trainer_models import OTHER_MODEL_FLAGS, flags_and_sets, preset_model
from vertexplan.composer.build import Built
from vertexplan.composer.parallelism import DEFAULT_TRAINER_ARGS
from vertexplan.composer.request import JobRequest

# Model fields within this share of the trainer's own count describe its model (they may be
# rounded); beyond it they describe another one.
TOLERANCE = 0.10
SET_HINT = ("--preset small, or --set model.n_layer=N --set model.n_embd=N "
            "--set model.block_size=N")


@dataclass(frozen=True)
class Subject:
    note: str
    warning: str | None = None


def whose_model(request: JobRequest, built: Built, parameters: int) -> Subject:
    if not built.launch.builtin:
        return Subject("This plan sizes the model entered in the model fields for your own "
                       "code: the control plane cannot read what your code builds.")
    args = DEFAULT_TRAINER_ARGS if request.args is None else request.args
    if not isinstance(args, list):
        return Subject("This plan sizes the model entered in the model fields.")
    flags, sets = flags_and_sets([str(a) for a in args])
    trained = preset_model(flags, sets)
    if trained is None:
        named = next((f for f in OTHER_MODEL_FLAGS if f in flags), "--preset")
        return Subject(f"This plan sizes the model entered in the model fields; the trainer "
                       f"builds its model from {named}, which the plan does not read.")
    note = (f"The trainer trains {trained.description}, {trained.parameters:,} parameters.")
    if abs(trained.parameters - parameters) <= TOLERANCE * max(trained.parameters, parameters):
        return Subject(note)
    return Subject(note, (
        f"the trainer trains {trained.description}: {trained.parameters:,} parameters, not the "
        f"{parameters:,} of the model fields, so this plan and its estimate describe another "
        f"job; give the trainer that model in its arguments ({SET_HINT}) or clear the model "
        f"fields"))

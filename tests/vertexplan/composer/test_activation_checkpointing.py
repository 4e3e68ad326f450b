"""model.activation_checkpointing (none | selective | full) reaches the built-in trainers'
command lines, never a command of the user's own; the older true/false still reads; a value
that is no mode is refused by name, with the valid ones."""

from __future__ import annotations

from typing import Any

import pytest

from tests.vertexplan.composer.helpers import A100_8, IMAGE, compose_request, job, pools
from vertexplan import interop
from vertexplan.composer import fields
from vertexplan.composer.request import normalize

MODEL = {"parameters": 1_000_000_000, "hidden_size": 2048, "layers": 16,
         "sequence_length": 2048, "attention_heads": 16}
V5E_2X2 = {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "2x2"}
REGION = "us-central1"


def _args(request: dict[str, Any]) -> list[str]:
    result = compose_request(request)
    assert result.ok, result.errors
    return pools(result.custom_job)[0]["containerSpec"]["args"]


def _flag(args: list[str]) -> str | None:
    if "--activation-checkpointing" not in args:
        return None
    return args[args.index("--activation-checkpointing") + 1]


@pytest.mark.parametrize(("given", "flag"), [
    ("selective", "selective"), ("full", "full"), ("none", None), (None, None),
    (True, "full"), (False, None),  # requests saved before there were modes
])
def test_the_built_in_trainer_gets_the_mode(given, flag) -> None:
    model = dict(MODEL) if given is None else {**MODEL, "activation_checkpointing": given}
    assert _flag(_args(job(strategy="fsdp", chief=dict(A100_8), model=model))) == flag


def test_the_tpu_trainers_get_it_too_and_a_command_of_ones_own_nothing() -> None:
    selective = {**MODEL, "activation_checkpointing": "selective"}
    small = {**selective, "parameters": 100_000_000}
    assert _flag(_args(job(strategy="tpu_jax", chief=dict(V5E_2X2), model=small))) == (
        "selective")
    full = {**small, "activation_checkpointing": "full"}
    assert _flag(_args(job(strategy="tpu_xla", chief=dict(V5E_2X2), model=full))) == "full"
    own = _args(job(strategy="ddp", chief=dict(A100_8), image_uri=IMAGE, command=["python",
                    "train.py"], args=["--epochs", "3"], model=selective))
    assert own == ["--epochs", "3"]


def test_the_memory_plan_and_step_time_use_the_same_mode() -> None:
    plans = {}
    for mode in ("none", "selective", "full"):
        result = compose_request(job(strategy="fsdp", chief=dict(A100_8), precision="bf16",
                                     model={**MODEL, "activation_checkpointing": mode}))
        assert result.ok, result.errors
        plans[mode] = (result.memory_plan.activations_gib, result.expected_step.seconds)
    assert plans["none"][0] > plans["selective"][0] > plans["full"][0]
    assert plans["none"][1] < plans["selective"][1] < plans["full"][1]


@pytest.mark.parametrize(("strategy", "chief", "mode", "why"), [
    ("ddp", A100_8, "partial", "must be one of none, selective, full, not 'partial'"),
    ("ddp", A100_8, 1, "must be one of none, selective, full, not 1"),
    ("zero3", A100_8, "selective", "refuses zero3 with selective checkpointing"),
    ("tpu_xla", V5E_2X2, "selective", "PyTorch/XLA trainer recomputes whole blocks only"),
])
def test_what_the_trainer_cannot_do_is_refused_on_the_field(strategy, chief, mode, why) -> None:
    result = compose_request(job(strategy=strategy, chief=dict(chief),
                                 model={**MODEL, "activation_checkpointing": mode}))
    assert not result.ok
    assert any(why in m for m in result.errors["model.activation_checkpointing"])


def test_a_stored_request_in_the_older_shape_reads_as_a_mode() -> None:
    old = job(model={**MODEL, "activation_checkpointing": True})
    assert normalize(old)[0]["model"]["activation_checkpointing"] == "full"
    assert "activation_checkpointing" not in normalize(
        job(model={**MODEL, "activation_checkpointing": False}))[0]["model"]
    assert "model" not in normalize(job(model={"activation_checkpointing": False}))[0]
    # The form shows it as the mode, and nothing is left over for the advanced JSON.
    assert fields.fields_from_request(old)["model_activation_checkpointing"] == "full"
    assert "activation_checkpointing" not in fields.leftovers(old).get("model", {})


@pytest.mark.parametrize(("strategy", "chief", "mode"), [
    ("zero2", A100_8, "selective"), ("tpu_jax", V5E_2X2, "full")])
def test_an_exported_job_imports_with_its_mode(strategy, chief, mode) -> None:
    """The generated flag reads back as the request's mode, not as an argument of the user's:
    the imported job composes to the same CustomJob."""
    composed = compose_request(job(strategy=strategy, chief=dict(chief), precision="bf16",
                                   args=["--steps", "20"],
                                   model={"parameters": 100_000_000,
                                          "activation_checkpointing": mode}))
    assert composed.ok, composed.errors
    text = interop.export(composed.custom_job, "yaml", region=REGION)
    again = interop.import_text(text, region=REGION)
    assert again.errors == {}
    assert again.request["model"] == {"activation_checkpointing": mode}
    assert again.request["args"] == ["--steps", "20"]
    assert compose_request(again.request).custom_job == composed.custom_job

"""Each preset's local variant (`Preset.scaled_down`): the same strategy, parallel degrees,
machines and pools as the preset, a model small enough for this machine, and a request that
composes without a finding; the slugs of the replaced byte-level GPT presets still resolve."""

from __future__ import annotations

import pytest

from vertexplan import composer, presets


def compose(request: dict) -> composer.Composition:
    return composer.compose(composer.JobRequest.from_dict(request))


@pytest.mark.parametrize("preset", presets.PRESETS, ids=lambda p: p.slug)
def test_each_preset_scaled_down_composes_with_its_strategy_and_degrees(
        preset: presets.Preset) -> None:
    full, scaled = preset.job_request(), preset.scaled_down()
    result = compose(scaled)
    assert result.ok, result.errors
    for key in ("strategy", "chief", "workers", "parallelism", "fsdp", "precision", "tpu"):
        assert scaled.get(key) == full.get(key), key
    assert result.world_size == compose(full).world_size
    if preset.scaled is None:
        assert scaled == full  # it already runs locally as it is
        return
    assert scaled["name"] == f"{full['name']}-scaled"
    plan, full_plan = result.memory_plan, compose(full).memory_plan
    # The model's own states shrink a thousandfold at least (the runtime's reserve stays).
    assert plan.model_states_gib < full_plan.model_states_gib / 1_000


def test_the_replaced_slugs_resolve_to_the_presets_that_replaced_them() -> None:
    assert presets.get("gpt-7b-tp2-dp4-a100").slug == "llama3-8b-tp2-fsdp4-a100"
    assert presets.get("gpt-70b-tp8-pp2-dp2-h100").slug == "llama3-70b-tp8-pp2-dp2-h100"
    assert presets.get("no-such-preset") is None

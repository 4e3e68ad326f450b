"""The trainer's model as the composer and the emulator read it from its command line."""

from __future__ import annotations

import dataclasses

from contract.trainer_models import GPT_PRESETS, flags_and_sets, gpt_parameters, preset_model


def test_the_preset_shapes_are_the_trainers_own() -> None:
    # Neither reader imports the trainers (they run in the replicas' environment): the copy of
    # the presets' model shapes must still say what the trainer builds.
    from trainers import config

    for name, shape in GPT_PRESETS.items():
        model = dataclasses.asdict(config.PRESETS[name]().get("model", config.ModelConfig()))
        assert {key: model[key] for key in shape} == shape, name
    assert set(GPT_PRESETS) == set(config.PRESETS)


def test_the_count_is_the_trainers_models() -> None:
    from trainers.config import ModelConfig
    from trainers.torch.model import GPT

    for name, shape in GPT_PRESETS.items():
        for bias in (True, False):
            model = GPT(ModelConfig(**shape, bias=bias), seed=0)
            built = sum(p.numel() for p in model.parameters())
            assert built == gpt_parameters(**shape, bias=bias), (name, bias)
    assert preset_model(*flags_and_sets(["--set", "model.bias=false"])).parameters == \
        gpt_parameters(**GPT_PRESETS["tiny"], bias=False)


def test_the_arguments_name_the_model() -> None:
    assert preset_model(*flags_and_sets([])).parameters == 120_576  # --preset tiny by default
    small = preset_model(*flags_and_sets(["--steps", "3", "--preset=small",
                                          "--set", "model.n_layer=2"]))
    assert small.preset == "small" and small.dims["n_layer"] == 2
    assert small.parameters == gpt_parameters(2, 384, 256, 256) == 3_746_304
    # A switch takes no value, a malformed --set is the preset's own size, an unknown preset
    # and the trainer's other models are not sized here.
    assert preset_model(*flags_and_sets(["--compile-blocks", "--set", "model.n_layer=²"])) \
        .parameters == 120_576
    assert preset_model(*flags_and_sets(["--preset", "huge"])) is None
    assert preset_model(*flags_and_sets(["--model-config", "llama-3-8b"])) is None
    assert preset_model(*flags_and_sets(["--init-from", "gs://b/w"])) is None

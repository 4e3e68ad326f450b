"""The VLM family (Qwen2-VL) in the PyTorch trainer: image + text pairs, transformers as truth.

A tiny Qwen2-VL made by transformers (random weights, `save_pretrained`), a BPE tokenizer.json
with the model's special tokens, a handful of images drawn with numpy and saved by Pillow, and a
JSONL manifest. The trainer runs through its CLI, validation and `Trainer.run()`, several runs
per group of processes (tests/trainers/strategy_group.py): world 1 (the reference, exported;
micro-batches) and world 2 (zero2, zero3, fsdp, ddp stopped and resumed, the preset's scaled
variant). transformers is the external truth: its loss on the same weights and batch, and its
`from_pretrained` of the trainer's export.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.trainers.hf_models import run_group
from tests.trainers.replicas import assert_losses_close
from trainers.torch.main import build_parser, config_from_args

pytestmark = pytest.mark.trainers

SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
           "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>")
IMAGE_ID, VIDEO_ID, START_ID, END_ID = (SPECIAL.index(t) for t in (
    "<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>"))
VOCAB = 320
BLOCK = 64
STEPS = 10
CONFIG = {
    "architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
    "vocab_size": VOCAB, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256,
    "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "tie_word_embeddings": True,
    "rope_scaling": {"type": "mrope", "mrope_section": [2, 1, 1]},
    "bos_token_id": 0, "eos_token_id": 2,
    "image_token_id": IMAGE_ID, "video_token_id": VIDEO_ID,
    "vision_start_token_id": START_ID, "vision_end_token_id": END_ID,
    "vision_config": {"depth": 2, "embed_dim": 32, "hidden_size": 32, "num_heads": 2,
                      "mlp_ratio": 2, "patch_size": 14, "spatial_merge_size": 2,
                      "temporal_patch_size": 2, "in_channels": 3},
}
CAPTIONS = ("a red square on grey", "two blue stripes", "noise in green tones",
            "a bright yellow field", "dark purple corners", "an orange gradient")
SIZES = ((56, 56), (84, 56), (56, 112), (56, 56), (112, 56), (84, 84))  # (width, height)


def make_assets(root: Path) -> dict[str, Path]:
    """The model (transformers' random weights), its tokenizer, images and the manifest."""
    from PIL import Image
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    root.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.train_from_iterator(
        [*CAPTIONS, "What is shown? Describe the image. user assistant"] * 4,
        trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=list(SPECIAL), show_progress=False,
                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer.save(str(root / "tokenizer.json"))

    model_dir = root / "model"
    torch.manual_seed(3)
    model = Qwen2VLForConditionalGeneration(Qwen2VLConfig.from_dict(CONFIG))
    with torch.no_grad():  # norms start at one: give them values to carry
        for name, param in model.named_parameters():
            if "norm" in name:
                param.add_(torch.rand_like(param) * 0.1)
    model.save_pretrained(model_dir)
    (root / "config.json").write_text(json.dumps(CONFIG))

    images = root / "images"
    images.mkdir(exist_ok=True)
    rng = np.random.default_rng(5)
    lines = []
    for i, ((width, height), caption) in enumerate(zip(SIZES, CAPTIONS, strict=True)):
        pixels = (rng.random((height, width, 3)) * 255).astype(np.uint8)
        Image.fromarray(pixels).save(images / f"{i}.png")
        prompt = "What is shown?" if i % 2 else ""
        lines.append({"image": f"images/{i}.png", "prompt": prompt, "text": caption})
    manifest = root / "train.jsonl"
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return {"root": root, "model": model_dir, "tokenizer": root / "tokenizer.json",
            "manifest": manifest, "config": root / "config.json"}


def run_args(assets: dict[str, Path], *extra: str, manifest: Path | None = None) -> list[str]:
    return ["--init-from", str(assets["model"]), "--tokenizer", str(assets["tokenizer"]),
            "--vlm-data", str(manifest or assets["manifest"]), "--seed", "11",
            "--batch-size", "4", "--steps", str(STEPS), "--warmup-steps", "2", "--lr", "3e-3",
            "--set", f"model.block_size={BLOCK}", "--set", "corpus_max_bytes=20000", *extra]


def bad_manifests(assets: dict[str, Path]) -> dict[str, tuple[Path, str]]:
    """name: (a manifest with one bad line, what the error must say)."""
    from PIL import Image

    root = assets["root"]
    good = assets["manifest"].read_text().splitlines()
    (root / "images" / "broken.png").write_bytes(b"not a png at all")
    Image.fromarray(np.zeros((14, 3000, 3), dtype=np.uint8)).save(root / "images" / "wide.png")
    cases = {
        "missing-image": ({"image": "images/absent.png", "text": "x"}, "absent.png"),
        "no-text": ({"image": "images/0.png", "prompt": "?"}, "key 'text'"),
        "broken-image": ({"image": "images/broken.png", "text": "x"}, "broken.png"),
        "refused-image": ({"image": "images/wide.png", "text": "x"}, "aspect ratio"),
    }
    out = {}
    for name, (line, says) in cases.items():
        path = root / f"{name}.jsonl"
        path.write_text("\n".join([*good[:2], json.dumps(line), *good[2:]]) + "\n")
        out[name] = (path, says)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """The trainer's runs: world 1 (reference + export, and the bad manifests), world 2."""
    base = tmp_path_factory.mktemp("vlm")
    assets = make_assets(base / "assets")
    export = base / "export"
    bad = bad_manifests(assets)
    single = [{"name": "ref", "args": run_args(assets, "--strategy", "single",
                                               "--export-hf", str(export))},
              # Four micro-steps of one example: each weighed by the global label-token count.
              {"name": "micro", "args": run_args(assets, "--strategy", "single",
                                                 "--set", "micro_batch_size=1")}]
    one = run_group(base / "w1", single, 1)
    two = run_group(base / "w2", [
        {"name": "zero2", "args": run_args(assets, "--strategy", "zero2")},
        {"name": "zero3", "args": run_args(assets, "--strategy", "zero3")},  # under zero.Init
        {"name": "fsdp", "args": run_args(assets, "--strategy", "fsdp")},
        {"name": "preset-scaled", "args": scaled_preset_args()},
        # Stopped by a SIGTERM at step 5 (a checkpoint there), then resumed to the end.
        {"name": "ddp", "sigterm_at": 5,
         "args": run_args(assets, "--strategy", "ddp", "--checkpoint-dir", str(base / "ckpt"))},
        {"name": "ddp-resumed", "args": run_args(assets, "--strategy", "ddp",
                                                 "--checkpoint-dir", str(base / "ckpt"))},
    ], 2)
    return {"assets": assets, "export": export, "one": one, "two": two, "bad": bad}


def test_first_step_loss_equals_transformers(runs) -> None:
    """The trainer's first loss is transformers' own loss of the same weights on the same
    global batch (its labels: the text tokens; its loss: their mean)."""
    from transformers import Qwen2VLForConditionalGeneration

    assets = runs["assets"]
    batches = _batches(assets)
    batch, labels = batches.batch(0)
    model = Qwen2VLForConditionalGeneration.from_pretrained(assets["model"], dtype=torch.float32)
    with torch.no_grad():
        expected = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                         pixel_values=batch.pixel_values, image_grid_thw=batch.image_grid_thw,
                         mm_token_type_ids=batch.mm_token_type_ids, labels=labels).loss.item()
    assert (labels != -100).sum() < (batch.attention_mask == 1).sum()  # prompt and image masked
    first = runs["one"].losses("ref")[1]
    assert first == pytest.approx(expected, rel=1e-5)


def test_every_data_parallel_strategy_and_micro_batches_equal_world_1(runs) -> None:
    reference = runs["one"].losses("ref")
    assert len(reference) == STEPS and reference[STEPS] < reference[1]
    for strategy in ("zero2", "zero3", "fsdp"):
        assert_losses_close(runs["two"].losses(strategy), reference, rel=1e-4)
    assert_losses_close(runs["one"].losses("micro"), reference, rel=1e-4)
    ddp = {**runs["two"].losses("ddp"), **runs["two"].losses("ddp-resumed")}
    assert len(ddp) == STEPS
    assert_losses_close(ddp, reference, rel=1e-4)  # resumed at step 5: the same batches


def test_export_loads_in_transformers_with_the_trainers_logits(runs) -> None:
    from transformers import Qwen2VLForConditionalGeneration

    from trainers.torch.models import hf_config, hf_weights, vlm

    export = runs["export"]
    batch, _ = _batches(runs["assets"]).batch(3)
    loaded = Qwen2VLForConditionalGeneration.from_pretrained(export, dtype=torch.float32)
    trainer_model = vlm.build(hf_config.read_spec(str(export / "config.json")),
                              hf_weights.source_for(str(export), 0))
    trainer_model.materialise("cpu")
    with torch.no_grad():
        theirs = loaded(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                        pixel_values=batch.pixel_values, image_grid_thw=batch.image_grid_thw,
                        mm_token_type_ids=batch.mm_token_type_ids).logits
        ours = trainer_model.logits(batch)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    original = Qwen2VLForConditionalGeneration.from_pretrained(runs["assets"]["model"])
    trained = dict(loaded.named_parameters())
    assert any(not torch.equal(p, trained[n]) for n, p in original.named_parameters())


@pytest.mark.parametrize("name", ["missing-image", "no-text", "broken-image", "refused-image"])
def test_bad_data_is_refused_before_training(runs, name) -> None:
    """Validation (before any process group) names the manifest's line and what is wrong."""
    from trainers.torch.validation import validate

    path, says = runs["bad"][name]
    config = config_from_args(build_parser().parse_args(
        run_args(runs["assets"], "--strategy", "single", manifest=path)), {})
    with pytest.raises(ValueError) as refused:
        validate(config, 1)
    assert f"{path} line 3" in str(refused.value) and says in str(refused.value)


def test_the_trainer_exits_2_with_one_error_line(runs, tmp_path, capsys) -> None:
    """The trainer's entrypoint (in this process: it stops before any process group)."""
    from trainers.torch.main import main

    path, _ = runs["bad"]["missing-image"]
    handler = signal.getsignal(signal.SIGTERM)  # the trainer installs its own
    try:
        code = main(run_args(runs["assets"], "--strategy", "single", "--model-dir",
                             str(tmp_path / "model"), manifest=path), env={})
    finally:
        signal.signal(signal.SIGTERM, handler)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    assert code == 2
    errors = [e for e in lines if e.get("severity") == "ERROR"]
    assert len(errors) == 1 and f"{path} line 3" in errors[0]["message"]
    assert not any(e.get("event") == "step" for e in lines)
    assert not (tmp_path / "model").exists()


def test_tensor_and_pipeline_parallel_are_refused(runs) -> None:
    from trainers.torch.validation import validate

    config = config_from_args(build_parser().parse_args(
        run_args(runs["assets"], "--strategy", "ddp", "--set", "tp=2")), {})
    with pytest.raises(ValueError, match=r"VLM family .* data parallelism only"):
        validate(config, 2)


PRESET = "vlm-finetune-4x8-a100-zero2"


def scaled_preset_args() -> list[str]:
    """The trainer's arguments in the CustomJob of the preset's scaled-down local variant."""
    from vertexplan import composer, presets

    request = presets.get(PRESET).scaled_down()
    job = composer.compose(composer.JobRequest.from_dict(request))
    assert job.ok, job.errors
    container = job.custom_job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    assert container["command"] == ["python", "-m", "trainers.train"]  # the built-in trainer
    return container["args"]  # bf16, as composed


def test_the_presets_scaled_variant_trains_with_the_built_in_trainer(runs) -> None:
    """On the shipped image + text pairs (vlm-demo), a two-layer Qwen2-VL (ZeRO-2, world 2)."""
    steps = runs["two"].of("preset-scaled", "step")
    assert [e["step"] for e in steps] == [1, 2, 3, 4]
    [started] = runs["two"].of("preset-scaled", "run_started")
    assert started["architecture"] == "Qwen2VLForConditionalGeneration"
    assert started["params"] == presets_model(scaled=True)["parameters"]


@pytest.mark.parametrize("scaled", [False, True])
def test_the_presets_model_section_describes_what_its_args_build(scaled: bool) -> None:
    from trainers.torch.models import hf_config, hf_weights, vlm

    model = presets_model(scaled)
    spec = hf_config.read_spec("qwen2-vl-2b-scaled" if scaled else "qwen2-vl-2b")
    built = vlm.build(spec, hf_weights.FreshWeights(0)).num_parameters()
    assert built == pytest.approx(model["parameters"], rel=0.01)
    assert (model["hidden_size"], model["layers"], model["attention_heads"],
            model["vocab_size"]) == (spec.hidden_size, spec.n_layer, spec.n_head, spec.vocab_size)


def presets_model(scaled: bool) -> dict:
    from vertexplan import presets

    preset = presets.get(PRESET)
    return (preset.scaled_down() if scaled else preset.job_request())["model"]


def _batches(assets: dict[str, Path]):
    from trainers.torch import vlm_data
    from trainers.torch.models import hf_config

    config = config_from_args(build_parser().parse_args(run_args(assets)), {})
    spec = hf_config.read_spec(str(assets["model"] / "config.json"))
    return vlm_data.VLMBatches(config, 0, 1, spec)

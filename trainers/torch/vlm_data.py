"""A VLM's training data (`--vlm-data MANIFEST`): image + text pairs, batched per rank.

The manifest is JSONL, one example per line:

    {"image": "images/0001.png", "prompt": "What is shown?", "text": "A red square."}

`image` is a path relative to the manifest's folder, an absolute path or a gs:// URL; `text` is
what the model learns to answer; `prompt` (optional) is the question asked with the image.
Each example becomes Qwen2-VL's chat turn, as its processor and chat template lay it out:

    <|im_start|>user\\n<|vision_start|><|image_pad|> x N<|vision_end|>PROMPT<|im_end|>\\n
    <|im_start|>assistant\\nTEXT<|im_end|>

N is the image's merged patch count (the image processor resizes it to a multiple of the patch
size, at most `vlm_max_pixels`). The loss is on TEXT<|im_end|> only: the prompt and the image
placeholders are labelled -100, as transformers' fine-tuning recipes do. Every example is
padded to model.block_size (attention mask 0, label -100), so batches have one shape.

Batches are a pure function of (seed, step): the global batch of step s is positions
s*B .. s*B+B-1 of a sequence of per-epoch permutations of the examples, and each data-parallel
rank decodes only its contiguous share. A resumed run sees exactly the batches an uninterrupted
one would (the checkpoint keeps the step, as a stream keeps its position).

`--vlm-data vlm-demo` names the few pairs shipped with the trainer (DEMO_DIR) and, unless
--tokenizer says otherwise, their tokenizer.json.

`check` reads the manifest and every local image's header before any process starts (a missing
image, a line without text, an image the processor refuses, an example longer than the
sequence: one error naming the manifest's line and the file, exit 2). gs:// images are read
when their batch comes (same message, exit 1): a bucket's millions of objects are not fetched
twice.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from trainers.corpus import rank_rows
from trainers.storage import StorageError, storage_for
from trainers.torch.distributed import on_every_rank
from trainers.torch.models import vlm
from trainers.torch.models.hf_config import ModelSpec, read_tokenizer
from trainers.torch.models.vlm import IGNORE, VLMBatch

# `--vlm-data vlm-demo`: a few image + text pairs shipped with the trainer, with the BPE
# tokenizer.json their model (shapes/qwen2-vl-2b-scaled.json) was made for: what a preset's
# scaled-down local variant trains on without any file of the user's.
DEMO = "vlm-demo"
DEMO_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", DEMO)
CHAT_TOKENS = ("<|im_start|>", "<|im_end|>")
VLM_STREAM = 3  # the permutations' seed stream, apart from the corpus's (trainers/corpus.py)
MIN_PIXELS = 56 * 56  # Qwen2-VL's image processor's smallest image


@dataclass(frozen=True)
class Example:
    line: int
    image: str  # resolved: a local path or a gs:// URL
    prompt: str
    text: str


def shipped_manifest(name: str | None) -> str | None:
    """The demo's manifest for its name; any other path as it is."""
    return os.path.join(DEMO_DIR, "train.jsonl") if name == DEMO else name


def shipped_tokenizer(manifest: str | None) -> str | None:
    """The demo's tokenizer.json when --vlm-data names the demo, else None."""
    return os.path.join(DEMO_DIR, "tokenizer.json") if manifest == DEMO else None


def read_manifest(path: str) -> list[Example]:
    try:
        raw = storage_for(path).read_bytes(path).decode()
    except (OSError, StorageError, UnicodeDecodeError) as exc:
        raise ValueError(f"vlm data {path}: cannot be read: {exc}") from None
    folder = path.rsplit("/", 1)[0] if "://" in path else os.path.dirname(path)
    examples = []
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        where = f"vlm data {path} line {number}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{where}: not JSON: {exc}") from None
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected a JSON object")
        for key in ("image", "text"):
            if not (isinstance(row.get(key), str) and row[key].strip()):
                raise ValueError(f"{where}: key {key!r} must be a non-empty string")
        if not isinstance(row.get("prompt", ""), str):
            raise ValueError(f"{where}: key 'prompt' must be a string")
        image = row["image"]
        if "://" not in image and not os.path.isabs(image):
            image = f"{folder}/{image}" if "://" in folder else os.path.join(folder, image)
        examples.append(Example(number, image, row.get("prompt", ""), row["text"]))
    if not examples:
        raise ValueError(f"vlm data {path}: no examples")
    return examples


class Encoder:
    """Examples to token ids, labels and pixel values: the model's image processor (built from
    its config, no hub) and the tokenizer."""

    def __init__(self, spec: ModelSpec, tokenizer: str, max_pixels: int, block_size: int) -> None:
        from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import (
            Qwen2VLImageProcessorPil,
        )

        config = spec.transformers_config()
        vision = config.vision_config
        self.patch, self.merge = vision.patch_size, vision.spatial_merge_size
        self.max_pixels, self.block_size = max_pixels, block_size
        self.processor = Qwen2VLImageProcessorPil(
            min_pixels=MIN_PIXELS, max_pixels=max_pixels, patch_size=self.patch,
            temporal_patch_size=vision.temporal_patch_size, merge_size=self.merge)
        self.tokenizer = read_tokenizer(tokenizer)
        self.image_id, self.start_id, self.end_id = (
            config.image_token_id, config.vision_start_token_id, config.vision_end_token_id)
        for token in CHAT_TOKENS:
            if self.tokenizer.token_to_id(token) is None:
                raise ValueError(f"tokenizer {tokenizer}: lacks the special token {token!r} of "
                                 "Qwen2-VL's chat turns")
        if self.tokenizer.token_to_id("<|image_pad|>") not in (None, self.image_id):
            raise ValueError(
                f"tokenizer {tokenizer}: '<|image_pad|>' is token "
                f"{self.tokenizer.token_to_id('<|image_pad|>')}, but key 'image_token_id' of "
                f"model config {spec.path} is {self.image_id}")
        pad = self.tokenizer.token_to_id("<|endoftext|>")
        self.pad_id = pad if pad is not None else 0
        self.head = self._ids("<|im_start|>user\n")
        self.answers: dict[int, list[int]] = {}

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def answer(self, example: Example) -> list[int]:
        """The labelled tokens: the text and the turn's end."""
        if example.line not in self.answers:
            self.answers[example.line] = self._ids(example.text + "<|im_end|>")
        return self.answers[example.line]

    def prompt(self, example: Example, image_tokens: int) -> list[int]:
        return [*self.head, self.start_id, *[self.image_id] * image_tokens, self.end_id,
                *self._ids(example.prompt + "<|im_end|>\n<|im_start|>assistant\n")]

    def image_tokens(self, size: tuple[int, int]) -> int:
        """How many placeholders an image of (width, height) becomes (the processor's resize)."""
        from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import smart_resize

        width, height = size
        h, w = smart_resize(height, width, factor=self.patch * self.merge,
                            min_pixels=MIN_PIXELS, max_pixels=self.max_pixels)
        return (h // self.patch) * (w // self.patch) // self.merge**2

    def check(self, example: Example, manifest: str) -> None:
        """The example's image opens and the processor takes it; the whole turn fits."""
        image = self._open(example, manifest, header_only=True)
        try:
            tokens = self.image_tokens(image.size)
        except ValueError as exc:
            raise self._refused(example, manifest, exc) from None
        length = len(self.prompt(example, tokens)) + len(self.answer(example))
        if length > self.block_size:
            raise ValueError(
                f"vlm data {manifest} line {example.line}: image {example.image} and text are "
                f"{length} tokens, more than model.block_size {self.block_size} (lower "
                "vlm_max_pixels or raise model.block_size)")

    def encode(self, example: Example, manifest: str) -> dict[str, Any]:
        image = self._open(example, manifest, header_only=False)
        try:
            pixels = self.processor(images=[image], return_tensors="pt")
        except ValueError as exc:
            raise self._refused(example, manifest, exc) from None
        grid = pixels["image_grid_thw"][0]
        prompt = self.prompt(example, int(grid.prod()) // self.merge**2)
        answer = self.answer(example)
        ids, labels = prompt + answer, [IGNORE] * len(prompt) + answer
        if len(ids) > self.block_size:
            raise ValueError(f"vlm data {manifest} line {example.line}: {len(ids)} tokens, more "
                             f"than model.block_size {self.block_size}")
        padding = self.block_size - len(ids)
        return {"ids": ids + [self.pad_id] * padding, "labels": labels + [IGNORE] * padding,
                "mask": [1] * len(ids) + [0] * padding, "pixels": pixels["pixel_values"],
                "grid": grid}

    def _open(self, example: Example, manifest: str, header_only: bool) -> Any:
        from PIL import Image

        try:
            data = storage_for(example.image).read_bytes(example.image)
        except (OSError, StorageError) as exc:
            raise ValueError(f"vlm data {manifest} line {example.line}: image {example.image} "
                             f"cannot be read: {exc}") from None
        try:
            image = Image.open(io.BytesIO(data))
            if not header_only:
                image = image.convert("RGB")
        except Exception as exc:  # Pillow raises several kinds for a file it cannot decode
            raise self._refused(example, manifest, exc) from None
        return image

    def _refused(self, example: Example, manifest: str, exc: Exception) -> ValueError:
        return ValueError(f"vlm data {manifest} line {example.line}: image {example.image} is "
                          f"refused by the image processor: {exc}")


def check(config: Any, spec: ModelSpec) -> None:
    """Before any process starts: the manifest, the tokenizer's chat tokens and every local
    image (see the module's docstring)."""
    examples = read_manifest(config.vlm_data)
    encoder = Encoder(spec, config.tokenizer, config.vlm_max_pixels, config.model.block_size)
    for example in examples:
        if "://" not in example.image:
            encoder.check(example, config.vlm_data)


class VLMBatches:
    """This rank's share of every global batch; `next_batch` as the streamed batches'."""

    def __init__(self, config: Any, shard: int, shards: int, spec: ModelSpec) -> None:
        self.config, self.shard, self.shards = config, shard, shards
        self.manifest = config.vlm_data
        self.examples = read_manifest(self.manifest)
        self.encoder = Encoder(spec, config.tokenizer, config.vlm_max_pixels,
                               config.model.block_size)
        self.step = 0
        self.order: dict[int, np.ndarray] = {}

    def global_examples(self, step: int) -> list[Example]:
        size, count = self.config.batch_size, len(self.examples)
        chosen = []
        for position in range(step * size, (step + 1) * size):
            epoch = position // count
            if epoch not in self.order:
                rng = np.random.default_rng([self.config.seed, epoch, VLM_STREAM])
                self.order = {epoch: rng.permutation(count)}  # one epoch's order kept
            chosen.append(self.examples[int(self.order[epoch][position % count])])
        return chosen

    def batch(self, step: int) -> tuple[VLMBatch, torch.Tensor]:
        examples = self.global_examples(step)
        label_tokens = sum(len(self.encoder.answer(e)) for e in examples)
        mine = [self.encoder.encode(e, self.manifest)
                for e in examples[rank_rows(len(examples), self.shard, self.shards)]]
        batch = VLMBatch(
            input_ids=torch.tensor([m["ids"] for m in mine]),
            attention_mask=torch.tensor([m["mask"] for m in mine]),
            mm_token_type_ids=torch.tensor(
                [[int(t == self.encoder.image_id) for t in m["ids"]] for m in mine]),
            pixel_values=torch.cat([m["pixels"] for m in mine]),
            image_grid_thw=torch.stack([m["grid"] for m in mine]),
            loss_tokens=label_tokens / len(examples))
        return batch, torch.tensor([m["labels"] for m in mine])

    def next_batch(self) -> tuple[VLMBatch, torch.Tensor]:
        self.step += 1
        return self.batch(self.step - 1)

    def eval_batch(self, index: int) -> tuple[VLMBatch, torch.Tensor]:
        raise ValueError("a VLM run is not evaluated (eval_every is 0)")

    def state(self) -> dict[str, Any]:
        return {"vlm_step": self.step}

    def resume(self, state: dict[str, Any] | None, rank: int) -> None:
        self.step = int((state or {}).get("vlm_step", 0))


def evaluated(config: Any) -> Any:
    """A VLM run is not evaluated: the default corpus is text without images."""
    from dataclasses import replace

    return replace(config, eval_every=0) if config.vlm_data else config


def open_batches(config: Any, shard: int, shards: int, spec: ModelSpec,
                 device: str) -> VLMBatches:
    """Every rank reads its first batch before training; the ranks agree on whether all could
    (a rank whose data is fine would otherwise wait in the first collective)."""
    def first_batch_read() -> VLMBatches:
        batches = VLMBatches(config, shard, shards, spec)
        batches.batch(0)
        return batches

    return on_every_rank(first_batch_read, device, "the VLM data")


def data_problems(spec: ModelSpec, config: Any) -> list[str]:
    """A VLM trains on --vlm-data's image + text pairs, tokenized with --tokenizer; other
    models do not read them."""
    if not vlm.is_vlm(spec):
        if config.vlm_data:
            kinds = ", ".join(vlm.ARCHITECTURES)
            return [f"--vlm-data (image + text pairs) trains a VLM ({kinds}), "
                    f"not {spec.architecture}"]
        return []
    problems = []
    if not config.vlm_data:
        problems.append(f"{spec.architecture} is a VLM: give its image + text pairs with "
                        "--vlm-data MANIFEST")
    if not config.tokenizer:
        problems.append(f"{spec.architecture} needs its tokenizer.json (--tokenizer)")
    if config.stream.data_files:
        problems.append("--data-files streams text: a VLM trains on --vlm-data")
    if not problems:
        check(config, spec)  # raises, naming the manifest's line and the file
    return problems

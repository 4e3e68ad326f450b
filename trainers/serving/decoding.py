"""The decoding loop a server runs: many sequences, one new token for each of them per step,
sequences joining and leaving between any two steps (continuous batching).

A token is a byte for the byte-level GPT and a tokenizer's id for a Hugging Face export
(codec.py, which also gives the generated text); the loop is the same. A Hugging Face model
(hf_model.py) has a context that no request passes (its codec refuses one that would), so
none of it ever slides.

A sequence joins with a prefill: its prompt through the model once, from position 0 (with
every other prompt joining at that step), its keys and values written to its slot of the cache
(kv_cache.py); that forward's last logits give its first byte. Every later step feeds each
running sequence only its last byte, at its own position, against its own cached keys:
producing byte t costs O(t), not the O(t^2) of running the whole context again.

Positions are learned and end at block_size. The contract lets a prompt and its continuation
run past that (a prompt may be MAX_PROMPT_BYTES long whatever the model; the control plane's
triton loop and the tests rely on it), and the server always answered such a request by
sliding the window: each byte predicted from the last block_size bytes, at positions from 0.
That is kept, for those steps only: a sequence longer than the window leaves its slot and is
run whole, cropped to its last block_size bytes, as before (a window that moves shifts every
position, so nothing cached can be reused). Models without a cached forward (an AOTInductor
package) and `cache=False` run every step that way: the no-cache path, which greedy decoding
with the cache equals byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from contract.prediction import Instance, held_back, stop_start
from trainers.serving.codec import BYTES, Codec
from trainers.serving.kv_cache import SlotCache
from trainers.serving.sampling import choose

LENGTH = "length"  # finish reasons, as OpenAI's API names them
STOP = "stop"


@dataclass(eq=False)
class Sequence:
    """One instance being generated. `on_token` and `on_done` run on the decoding thread."""

    instance: Instance
    on_done: Callable[[Sequence], None] | None = None
    on_token: Callable[[Sequence], None] | None = None
    tokens: list[int] = field(default_factory=list)  # the prompt, then what is generated
    generated: list[int] = field(default_factory=list)
    prompt_ids: list[int] | None = None  # the prompt encoded (by the decoder if not given)
    out: bytes = b""  # the generated text's bytes so far (codec.py): only ever grows
    generator: torch.Generator | None = None
    slot: int | None = None
    cached: int = 0  # positions whose keys and values are in the slot
    finish_reason: str | None = None
    text_end: int | None = None  # where a stop sequence began
    cancelled: bool = False  # set by another thread: the sequence leaves at the next step

    @property
    def done(self) -> bool:
        return self.finish_reason is not None

    def answer(self) -> dict:
        """The contract's prediction of what was generated: its text and token count."""
        return {"text": self.text(), "tokens": len(self.generated)}

    def ready(self) -> int:
        """How many bytes of `out` a stream may send so far: all but a tail that could
        still become a stop sequence; once done, the text's (the stop left out). Read it on
        the decoding thread (in on_token): `out` only grows, so the bytes up to it can be
        read from any thread later."""
        if self.done:
            return len(self.out) if self.text_end is None else self.text_end
        return len(self.out) - held_back(self.out, self.instance.stop)

    def text(self) -> str:
        return self.out[:self.text_end].decode("utf-8", "replace")


class Decoder:
    """Runs up to `slots` sequences together; `join` adds one, `step` advances all by a token.
    Not thread-safe: one thread (the batcher's) drives it."""

    def __init__(self, model: nn.Module, slots: int, cache: bool = True,
                 codec: Codec = BYTES) -> None:
        self.model = model
        self.codec = codec
        # A Hugging Face model names its context; the GPT's is its block_size.
        self.block = getattr(model, "context", None) or model.config.block_size
        # A packaged model (the aot runtime) holds no parameters of its own: it names its device.
        self.device = getattr(model, "device", None) or next(model.parameters()).device
        self.cached_forward = getattr(model, "forward_cached", None) if cache else None
        self.cache = SlotCache(model, slots) if self.cached_forward is not None else None
        self.slots = slots
        self.running: list[Sequence] = []
        self._joining: list[Sequence] = []

    @property
    def free(self) -> int:
        return self.slots - len(self.running) - len(self._joining)

    @property
    def idle(self) -> bool:
        return not self.running and not self._joining

    def join(self, sequence: Sequence) -> None:
        if self.free <= 0:
            raise RuntimeError(f"the decoder runs {self.slots} sequences at most")
        instance = sequence.instance
        if sequence.prompt_ids is None:
            sequence.prompt_ids = self.codec.encode(instance)
        sequence.tokens = list(sequence.prompt_ids)
        if instance.seed is not None:
            sequence.generator = torch.Generator(device=self.device).manual_seed(instance.seed)
        self._joining.append(sequence)

    @torch.inference_mode()
    def step(self) -> list[Sequence]:
        """One byte for every sequence; the sequences that ended (or were cancelled)."""
        ended = [s for s in (*self.running, *self._joining) if s.cancelled]
        for sequence in ended:
            self._leave(sequence)
        joining, self._joining = self._joining, []
        decoding = list(self.running)
        self.running.extend(joining)
        groups: list[tuple[list[Sequence], torch.Tensor]] = []  # sequences, their logits
        windowed, prefill = [], []
        for sequence in joining:
            if self.cache is not None and len(sequence.tokens) <= self.block:
                sequence.slot = self.cache.take()
                prefill.append(sequence)
            else:
                windowed.append(sequence)
        in_cache = []
        for sequence in decoding:
            if sequence.slot is not None and len(sequence.tokens) > self.block:
                self.cache.give_back(sequence.slot)  # past the window: slide from now on
                sequence.slot = None
            (in_cache if sequence.slot is not None else windowed).append(sequence)
        if prefill:
            groups.append((prefill, self._prefill(prefill)))
        if in_cache:
            in_cache.sort(key=lambda s: s.slot)  # consecutive slots are read without a copy
            groups.append((in_cache, self._decode(in_cache)))
        if windowed:
            groups.append((windowed, self._window(windowed)))
        for sequences, logits in groups:
            logits = logits.float()
            greedy = torch.argmax(logits, dim=-1).tolist()  # one call for the whole group
            for row, sequence in enumerate(sequences):
                instance = sequence.instance
                token = greedy[row] if instance.temperature == 0 else choose(
                    logits[row], instance.temperature, instance.top_p, sequence.generator)
                self._append(sequence, token)
                if sequence.done:
                    self._leave(sequence)
                    ended.append(sequence)
        return ended

    def _prefill(self, sequences: list[Sequence]) -> torch.Tensor:
        """The prompts that join at this step, in one forward from position 0, right-padded
        to the longest: a padded position's keys are never attended (each query sees its own
        sequence's positions up to its own), and the step that reaches that position
        overwrites them."""
        lengths = torch.tensor([len(s.tokens) for s in sequences], device=self.device)
        prompts = torch.zeros((len(sequences), int(lengths.max())), dtype=torch.long,
                              device=self.device)
        for row, sequence in enumerate(sequences):
            prompts[row, :len(sequence.tokens)] = torch.tensor(sequence.tokens)
            sequence.cached = len(sequence.tokens)
        rows = torch.tensor([s.slot for s in sequences], device=self.device)
        start = torch.zeros(len(sequences), dtype=torch.long, device=self.device)
        out = self.cached_forward(prompts, rows, start, self.cache.layers)
        return out[torch.arange(len(sequences), device=self.device), lengths - 1]

    def _decode(self, sequences: list[Sequence]) -> torch.Tensor:
        last = torch.tensor([[s.tokens[-1]] for s in sequences], device=self.device)
        rows = torch.tensor([s.slot for s in sequences], device=self.device)
        start = torch.tensor([s.cached for s in sequences], device=self.device)
        out = self.cached_forward(last, rows, start, self.cache.layers)
        for sequence in sequences:
            sequence.cached += 1
        return out[:, -1]

    def _window(self, sequences: list[Sequence]) -> torch.Tensor:
        """The no-cache forward: every context cropped to the last block_size bytes and
        right-padded to the longest (attention is causal, so padding after a context's last
        byte never changes that byte's logits), each from position 0 as in training."""
        contexts = [s.tokens[-self.block:] for s in sequences]
        lengths = torch.tensor([len(c) for c in contexts], device=self.device)
        batch = torch.zeros((len(contexts), int(lengths.max())), dtype=torch.long,
                            device=self.device)
        for row, context in enumerate(contexts):
            batch[row, :len(context)] = torch.tensor(context, dtype=torch.long)
        out, _ = self.model(batch)
        return out[torch.arange(len(contexts), device=self.device), lengths - 1]

    def _append(self, sequence: Sequence, token: int) -> None:
        instance = sequence.instance
        sequence.tokens.append(token)
        sequence.generated.append(token)
        if token in self.codec.eos:  # the model ended it: the token is counted, not shown
            sequence.finish_reason = STOP
            sequence.out = self.codec.text(sequence.generated[:-1], final=True)
        else:
            sequence.out = self.codec.text(sequence.generated, final=False)
            stop = stop_start(sequence.out, instance.stop) if instance.stop else None
            if stop is not None:
                sequence.finish_reason, sequence.text_end = STOP, stop
            elif len(sequence.generated) >= instance.max_tokens:
                sequence.finish_reason = LENGTH
                sequence.out = self.codec.text(sequence.generated, final=True)
        if sequence.on_token is not None:
            sequence.on_token(sequence)

    def _leave(self, sequence: Sequence) -> None:
        if sequence in self.running:
            self.running.remove(sequence)
        if sequence in self._joining:
            self._joining.remove(sequence)
        if sequence.slot is not None:
            self.cache.give_back(sequence.slot)
            sequence.slot = None
        if sequence.on_done is not None:
            sequence.on_done(sequence)

    def abandon(self) -> list[Sequence]:
        """Every sequence out, slots freed, none finished (after the model failed)."""
        left = [*self.running, *self._joining]
        for sequence in left:
            if sequence.slot is not None:
                self.cache.give_back(sequence.slot)
                sequence.slot = None
        self.running, self._joining = [], []
        return left

"""Hugging Face causal LMs in the trainer: transformers' own modules, on transformers' names.

`CausalLM` holds the parts of an `AutoModelForCausalLM` under the names transformers gives
them (`model.embed_tokens`, `model.layers.N....`, `model.norm`, `lm_head`), so its state dict,
its checkpoints and its export are what `from_pretrained` reads. The decoder layers sit in a
ModuleDict keyed by their index (ModuleList's keys, the same names), so a pipeline stage that
drops the other stages' layers keeps every parameter's name, as the GPT's stages do.

The forward pass runs transformers' modules in transformers' order: embedding (Gemma's scaled
one), rotary position embeddings from the model's own `rotary_emb`, each decoder layer with
causal SDPA attention (no padding: every row is a full window of the corpus), the final norm
and the head. The loss is the trainer's (`lm_loss` on already shifted targets), not
transformers' internal label shift. Attention reads the head count from the width (-1), so a
tensor-parallel rank runs its own heads unchanged.

Weights: built on the meta device, split by the strategy, then `materialise` gives each
parameter this rank's part of its value, one parameter at a time: either a fresh initial
value, a pure function of (seed, module name) so every world size and layout starts from the
same model, or the slice of a safetensors tensor that this rank keeps (hf_weights.py).
"""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from trainers.torch.model import lm_loss

if TYPE_CHECKING:
    from torch.distributed.tensor import DTensor

# Where a tied model keeps the matrix its head shares; transformers saves it under this name.
EMBEDDING = "model.embed_tokens.weight"
HEAD = "lm_head.weight"


class CausalLM(nn.Module):
    """A transformers causal LM (or one pipeline stage of it): `layers` are the decoder layers
    it keeps; the first stage holds the embedding, the last the final norm and the head."""

    def __init__(
        self,
        hf_model: nn.Module,
        pristine: nn.Module,
        source: Any,
        layers: Sequence[int] | None = None,
        first: bool = True,
        last: bool = True,
    ) -> None:
        super().__init__()
        self.config = hf_model.config
        base = hf_model.model
        kept = range(len(base.layers)) if layers is None else layers
        base.layers = nn.ModuleDict({str(i): base.layers[i] for i in kept})
        if not first:
            base.embed_tokens = None
        if not last:
            base.norm = None
        self.model = base
        self.lm_head = hf_model.lm_head if last else None
        self.tied = bool(getattr(self.config, "tie_word_embeddings", False))
        # Not submodules: the untouched meta model (what each module's fresh initial value is
        # computed from) and where the values come from.
        object.__setattr__(self, "_pristine", pristine)
        object.__setattr__(self, "_source", source)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())  # tied ones counted once

    def stage_forward(self, x: torch.Tensor) -> torch.Tensor:
        """Tokens in where it holds the embedding (hidden states otherwise), logits out where
        it holds the head (hidden states otherwise)."""
        base = self.model
        if base.embed_tokens is not None:
            x = base.embed_tokens(x)
        positions = torch.arange(x.shape[1], device=x.device).unsqueeze(0)
        position_embeddings = base.rotary_emb(x, positions)
        for layer in base.layers.values():
            # No mask: transformers' SDPA attention is then causal (is_causal=True).
            x = layer(x, attention_mask=None, position_ids=positions,
                      position_embeddings=position_embeddings)
        if self.lm_head is not None:
            x = self.lm_head(base.norm(x))
        return x

    def forward(
        self, idx: torch.Tensor, targets: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        logits = self.stage_forward(idx)
        return logits, None if targets is None else lm_loss(logits, targets)

    def stage(self, layers: Sequence[int], first: bool, last: bool) -> CausalLMStage:
        """One pipeline stage of this model (still on the meta device): the decoder `layers`,
        the embedding on the first stage, the final norm and head on the last."""
        return CausalLMStage(copy.deepcopy(self._pristine), self._pristine, self._source,
                             layers, first, last)

    # -- weights ---------------------------------------------------------------------------

    @torch.no_grad()
    def materialise(self, device: str) -> None:
        """Allocate this rank's part of every parameter and buffer on `device` and fill it."""
        from torch.distributed.tensor import DTensor  # imported once a model is split

        owners: dict[int, list[tuple[nn.Module, str]]] = {}
        for module in self.modules():
            for attribute, param in module._parameters.items():
                if param is not None:
                    owners.setdefault(id(param), []).append((module, attribute))
        self.to_empty(device=device)
        # to_empty makes a new parameter per module: a tied head would get a matrix of its own.
        for (first, first_attribute), *others in (o for o in owners.values() if len(o) > 1):
            for module, attribute in others:
                module._parameters[attribute] = first._parameters[first_attribute]
        fresh = FreshValues(self._pristine, self._source.seed)
        for name, tensor, owner, attribute in self.named_tensors():
            if isinstance(tensor, DTensor):
                local, index = tensor.to_local(), local_index(tensor)
            else:
                local, index = tensor, tuple(slice(0, n) for n in tensor.shape)
            if self._source.has(name):
                value = self._source.read(name, index)
            else:
                value = fresh.value(owner, attribute)[index]
            local.copy_(value.to(local.dtype))

    def initial_values(self) -> Iterator[tuple[torch.Tensor, Callable[[], torch.Tensor]]]:
        """(tensor, a reader of its whole initial value) for every parameter and buffer: what
        a strategy that builds without the meta device (ZeRO-3) copies into its partitions."""
        fresh = FreshValues(self._pristine, self._source.seed)
        for name, tensor, owner, attribute in self.named_tensors():
            if self._source.has(name):
                yield tensor, functools.partial(self._source.read, name, None)
            else:
                yield tensor, functools.partial(fresh.value, owner, attribute)

    def named_tensors(self) -> Iterator[tuple[str, torch.Tensor, str, str]]:
        """(name its value is stored under, tensor, owning module's name, attribute) for every
        parameter and buffer, each once. A tied head's weight is the embedding's."""
        seen: set[int] = set()
        for module_name, module in self.named_modules():
            owned = [*module._parameters.items(), *module._buffers.items()]
            for attribute, tensor in owned:
                if tensor is None or id(tensor) in seen:
                    continue
                seen.add(id(tensor))
                name = f"{module_name}.{attribute}" if module_name else attribute
                if self.tied and name == HEAD:
                    name = EMBEDDING
                owner, _, attribute = name.rpartition(".")
                yield name, tensor, owner, attribute


class FreshValues:
    """transformers' initial values of each module, drawn from a generator seeded by (seed,
    module name): the same at every world size and layout. One module's CPU copy at a time."""

    def __init__(self, pristine: nn.Module, seed: int) -> None:
        self.pristine = pristine
        self.seed = seed
        self.name: str | None = None
        self.module: nn.Module | None = None

    def value(self, owner: str, attribute: str) -> torch.Tensor:
        if owner != self.name:
            self.name, self.module = owner, self._fresh(owner)
        return getattr(self.module, attribute)

    def _fresh(self, name: str) -> nn.Module:
        module = copy.deepcopy(self.pristine.get_submodule(name)).to_empty(device="cpu")
        for tensor in [*module.parameters(), *module.buffers()]:
            if hasattr(tensor, "_is_hf_initialized"):
                del tensor._is_hf_initialized  # transformers skips tensors it marked done
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(name_seed(self.seed, name))
            for sub in module.modules():
                self.pristine._init_weights(sub)
        return module


class CausalLMStage(CausalLM):
    """A pipeline stage: hidden states (or tokens) in, hidden states (or logits) out."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return self.stage_forward(x)


def name_seed(seed: int, name: str) -> int:
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


def local_index(tensor: DTensor) -> tuple[slice, ...]:
    """The slice of the whole tensor that this rank's shard of `tensor` holds."""
    from torch.distributed.tensor._utils import compute_local_shape_and_global_offset

    shape, offset = compute_local_shape_and_global_offset(
        tensor.shape, tensor.device_mesh, tensor.placements)
    return tuple(slice(o, o + n) for o, n in zip(offset, shape, strict=True))

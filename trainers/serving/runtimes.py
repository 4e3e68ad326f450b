"""How the served model runs its forward pass: the runtime chosen per model entry.

- ``eager``: the module as trained, PyTorch's eager mode.
- ``compiled``: ``torch.compile`` with dynamic shapes (the batch and the context width change
  with every decoding step), compiled before the server answers: a warm-up generation at start
  pays the compilation, so the first request does not, and the health route answers only
  after it (Vertex routes traffic to a replica once its health check passes).
- ``aot``: compiled ahead of time by AOTInductor into a package stored beside the weights,
  built by the model's packaging job (``aot_package.py``; a GPU replica builds its own at
  its first start) and loaded in milliseconds by every replica (``aot.py``).
  A package is generated native code: it is only ever read from the model's own folder,
  which the team that registered the model owns, as it owns the serving image.

All give the same tokens for the same request and seed: compilation fuses kernels, it does
not change the arithmetic enough to flip a greedy choice on this model (the tests compare).

The KV cache (decoding.py) is the module's own `forward_cached`, run eagerly in the ``eager``
and ``compiled`` runtimes alike (the compiled graph serves the no-cache forward that a context
past block_size still needs); an ``aot`` package exports the no-cache forward only, so that
runtime decodes without the cache, continuously batched all the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from contract.prediction import parse_instances
from trainers.serving import aot, generate
from trainers.storage import Storage

RUNTIMES = ("eager", "compiled", "aot")
# Shapes the warm-up runs through: one and several instances, short and long contexts, so the
# dynamic-shape graph (and its guards) exist before traffic does.
_WARMUP_PROMPTS = (["a"], ["def main():\n    return 0\n", "import os\n", "x"])


@dataclass(frozen=True)
class Prepared:
    model: nn.Module  # what generate() calls
    runtime: str
    warmup_s: float  # compilation (or loading the package) before the first request
    built: bool = False  # compiled at this start (False: nothing to compile, or loaded)


def prepare(model: nn.Module, runtime: str, *, folder: str | None = None,
            storage: Storage | None = None, max_batch: int = 32,
            log: Callable[[str], None] | None = None) -> Prepared:
    """``model`` ready to serve in ``runtime``; ValueError for a runtime not in RUNTIMES.
    ``folder`` and ``storage`` (the model's) are where the ``aot`` runtime keeps its package."""
    if runtime not in RUNTIMES:
        raise ValueError(f"unknown runtime {runtime!r}; one of {', '.join(RUNTIMES)}")
    say = log or (lambda _message: None)
    if runtime == "eager":
        return Prepared(model, runtime, 0.0)
    started = time.monotonic()
    if runtime == "aot":
        if folder is None or storage is None:
            raise ValueError("the aot runtime needs the model's folder to keep its package in")
        packaged, built = aot.load_or_build(model, storage, folder, max_batch, say)  # type: ignore[arg-type]
        return Prepared(packaged, runtime, time.monotonic() - started, built=built)
    compiled = torch.compile(model, dynamic=True)
    for prompts in _WARMUP_PROMPTS:
        instances = parse_instances(prompts, {"max_tokens": 2})
        # The compiled graph runs the no-cache forward (a context past the window); the
        # cached steps run the module's own forward_cached, eagerly.
        generate.generate(compiled, instances, cache=False)  # type: ignore[arg-type]
        say(f"compiled for {len(prompts)} instance(s)")
    return Prepared(compiled, runtime, time.monotonic() - started, built=True)  # type: ignore[arg-type]

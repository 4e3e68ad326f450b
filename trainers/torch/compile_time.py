"""How long torch.compile has spent compiling in this process, by TorchDynamo's own clock.

Dynamo times every frame it compiles (tracing, AOTAutograd and the backend: Inductor's code
generation and its C++/Triton builds) and, apart, each backward graph AOTAutograd compiles
lazily at the first backward (`calculate_time_spent()`'s total_wall_time sums the two). That
is the compile itself, not the first step's whole time: a first step is also slow for reasons
that are no compile (allocator warm-up, caches), which a step-time difference would count.
"""

from __future__ import annotations


def seconds() -> float:
    """Cumulative compile seconds in this process (0.0 where this torch keeps no such clock;
    the clock starts again at torch._dynamo.reset())."""
    from torch._dynamo import utils  # only a run that compiles pays for the import

    spent = getattr(utils, "calculate_time_spent", None)
    if spent is None:
        return 0.0
    return float(spent().get("total_wall_time", 0.0))

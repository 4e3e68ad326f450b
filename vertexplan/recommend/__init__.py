"""The recommender: the cheapest valid configurations that fit a model, ranked by cost.

    from vertexplan.recommend import Query, Workload, recommend
    found = recommend(Query(model=ModelShape(7_000_000_000, "bf16"), strategy="any",
                            region="us-central1", workload=Workload(hours=Decimal(10))))

See ``search`` for how configurations are enumerated, fitted, priced and ranked, ``query`` for
how a duration scales across devices, and ``explain`` for the answers in words.
"""

from vertexplan.recommend.hardware import Hardware
from vertexplan.recommend.query import (
    ANY,
    DEFAULT_LIMIT,
    DEFAULT_MAX_NODES,
    GPU_STRATEGIES,
    MAX_NODES,
    SCHEDULES,
    STRATEGY_CHOICES,
    TPU_STRATEGIES,
    Query,
    Recommendation,
    Recommendations,
    Workload,
)
from vertexplan.recommend.search import recommend
from vertexplan.recommend.throughput import DEVICES, PEAK_THROUGHPUT, peak_tflops

__all__ = [
    "ANY",
    "DEFAULT_LIMIT",
    "DEFAULT_MAX_NODES",
    "DEVICES",
    "GPU_STRATEGIES",
    "MAX_NODES",
    "PEAK_THROUGHPUT",
    "SCHEDULES",
    "STRATEGY_CHOICES",
    "TPU_STRATEGIES",
    "Hardware",
    "Query",
    "Recommendation",
    "Recommendations",
    "Workload",
    "peak_tflops",
    "recommend",
]

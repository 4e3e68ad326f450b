"""The recommender: the cheapest valid configurations that fit a model, ranked by cost.

    from vertexplan.recommend import Query, Workload, recommend
    found = recommend(Query(model=ModelShape(7_000_000_000, "bf16"), strategy="any",
                            region="us-central1", workload=Workload(hours=Decimal(10))))

See ``engine`` for how configurations are enumerated, fitted, priced and ranked, and how a
duration scales across devices.
"""

from vertexplan.recommend.engine import (
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
    recommend,
)
from vertexplan.recommend.hardware import Hardware
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

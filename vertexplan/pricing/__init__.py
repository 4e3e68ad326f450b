"""Vertex AI custom-training prices: the shipped table, its rows, and money arithmetic.

Pure Python (no Django, no Google client libraries). ``vertexplan.pricing.job_estimate`` prices
jobs with it:

    from vertexplan.pricing import default_table
    row = default_table().price("machine", "n1-standard-8", "us-central1")
"""

from vertexplan.pricing.estimate import (
    RATE_NAMES,
    STRATEGY_RATES,
    Estimate,
    LineItem,
    PriceProblem,
    PricingError,
    Totals,
    UnitPrices,
)
from vertexplan.pricing.money import (
    MICROS_PER_USD,
    display_usd,
    format_usd,
    micros_to_usd,
    usd_to_micros,
)
from vertexplan.pricing.rows import Fee, PriceRow, TpuPrice
from vertexplan.pricing.table import PriceTable, PriceTableError, default_table, load_table

__all__ = [
    "MICROS_PER_USD",
    "RATE_NAMES",
    "STRATEGY_RATES",
    "Estimate",
    "Fee",
    "LineItem",
    "PriceProblem",
    "PriceRow",
    "PriceTable",
    "PriceTableError",
    "PricingError",
    "Totals",
    "TpuPrice",
    "UnitPrices",
    "default_table",
    "display_usd",
    "format_usd",
    "load_table",
    "micros_to_usd",
    "usd_to_micros",
]

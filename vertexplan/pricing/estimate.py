"""What an hourly estimate is made of: line items, totals per rate, and pricing problems."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from vertexplan.pricing.parse import retrieved_dates

Resource = Literal["machine", "accelerator", "tpu", "disk"]
RateName = Literal["on_demand", "spot", "flex"]
RATE_NAMES: tuple[RateName, ...] = ("on_demand", "spot", "flex")
# Scheduling.Strategy -> the rate it is billed at. The deprecated ON_DEMAND and LOW_COST are
# the old names of STANDARD and SPOT; STRATEGY_UNSPECIFIED means STANDARD.
STRATEGY_RATES: dict[str, RateName] = {
    "STRATEGY_UNSPECIFIED": "on_demand",
    "STANDARD": "on_demand",
    "ON_DEMAND": "on_demand",
    "SPOT": "spot",
    "LOW_COST": "spot",
    "FLEX_START": "flex",
}


@dataclass(frozen=True)
class UnitPrices:
    """USD per unit (hour, chip-hour, GB-month) at each rate; None where it does not apply."""

    on_demand: Decimal
    spot: Decimal | None
    flex: Decimal | None


@dataclass(frozen=True)
class Totals:
    """Micro-dollars at each rate, side by side: per hour in an Estimate, for a duration from
    ``for_duration``. None where the rate does not apply to some part of the job."""

    on_demand: int
    spot: int | None
    flex: int | None

    def get(self, rate: RateName) -> int | None:
        return getattr(self, rate)

    @classmethod
    def sum(cls, parts: Iterable[Totals]) -> Totals:
        parts = tuple(parts)

        def add(rate: RateName) -> int | None:
            values = [p.get(rate) for p in parts]
            return None if None in values else sum(v for v in values if v is not None)

        return cls(sum(p.on_demand for p in parts), add("spot"), add("flex"))

    def map(self, scale: Callable[[int], int]) -> Totals:
        return Totals(
            scale(self.on_demand),
            None if self.spot is None else scale(self.spot),
            None if self.flex is None else scale(self.flex),
        )


@dataclass(frozen=True)
class LineItem:
    """One resource of one worker pool: ``quantity`` units at ``unit_prices`` per unit.

    ``hourly`` is that, in micro-dollars per hour, rounded once, half-up; everything after
    (durations, actual cost) is integer arithmetic on these figures.
    """

    pool: int  # index in workerPoolSpecs
    role: str  # chief, workers, parameter servers, reduction server, evaluators
    resource: Resource
    name: str  # n1-standard-8, NVIDIA_TESLA_T4, TPU_V5_LITEPOD, pd-ssd
    quantity: int  # machines, GPUs or TPU chips (all replicas), or GB of boot disk
    unit: str  # hour, chip_hour, gb_month (730 hours)
    unit_prices: UnitPrices
    hourly: Totals
    source: str
    retrieved: str

    @property
    def description(self) -> str:
        """'2 x NVIDIA_TESLA_T4', '16 TPU_V5_LITEPOD chips', '300 GB pd-ssd boot disk'."""
        if self.resource == "tpu":
            return f"{self.quantity} {self.name} chips"
        if self.resource == "disk":
            return f"{self.quantity} GB {self.name} boot disk"
        return f"{self.quantity} x {self.name}"


@dataclass(frozen=True)
class Estimate:
    """The hourly price of a CustomJob in one region, line by line, at every rate.

    ``strategy`` is the job's Scheduling.Strategy; ``rate()`` gives the hourly figure it is
    billed at, which is what a job stores to compute its actual cost.
    """

    region: str
    strategy: str
    lines: tuple[LineItem, ...]
    notes: tuple[str, ...]  # why a rate is missing, and assumptions a reader should know
    table_source: str

    @property
    def hourly(self) -> Totals:
        """Micro-dollars per hour: by construction the sum of the line items."""
        return Totals.sum(line.hourly for line in self.lines)

    def pool_hourly(self, pool: int) -> Totals:
        return Totals.sum(line.hourly for line in self.lines if line.pool == pool)

    @property
    def rate_name(self) -> RateName:
        return STRATEGY_RATES[self.strategy]

    def rate(self, strategy: str | None = None) -> int | None:
        """Micro-dollars per hour for ``strategy`` (the job's own when None)."""
        return self.hourly.get(STRATEGY_RATES[strategy or self.strategy])

    @property
    def retrieved(self) -> tuple[str, str] | None:
        """(oldest, newest) retrieval date of the prices used, to show beside the estimate."""
        dates = [d for line in self.lines for d in retrieved_dates(line.retrieved)]
        return (min(dates), max(dates)) if dates else None

    @property
    def undated(self) -> tuple[str, ...]:
        """Names of the prices used whose retrieval date is unknown."""
        names = [line.name for line in self.lines if not retrieved_dates(line.retrieved)]
        return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class PriceProblem:
    """Why one resource of a job has no price: what, where, and where it does have one."""

    message: str
    pool: int | None = None
    resource: str | None = None  # machine, accelerator, tpu, disk, or a field of the spec
    name: str | None = None
    region: str | None = None
    priced_in: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"workerPoolSpecs[{self.pool}]: " if self.pool is not None else ""
        return where + self.message


class PricingError(ValueError):
    """The job cannot be priced; ``problems`` lists every reason, one per resource."""

    def __init__(self, problems: Iterable[PriceProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(str(p) for p in self.problems))

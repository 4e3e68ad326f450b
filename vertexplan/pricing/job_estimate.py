"""Cost of a Vertex AI CustomJob: the hourly estimate, and its cost for a duration.

What a job actually cost is ``vertexplan.pricing.actual`` (from its stored price snapshot,
``vertexplan.pricing.snapshot``).

Pure functions on a CustomJob as REST JSON (camelCase), a region and a ``PriceTable``. Money is
integer micro-dollars (1 USD = 1_000_000); prices are Decimal per unit.

How a job is priced (prices README; VERTEX_FACTS.md sections 1, 3):
- per worker pool, per resource, times its replicas:
  machine      the machine's hourly price. A2, A3 and G2 prices include their GPUs, so their
               accelerators are never added on top;
  accelerator  only where GPUs are billed apart from the machine: N1 with P4, P100, T4, V100;
  tpu          chip-hour price x the chips of the machine type and topology (the chip price
               covers the TPU VM);
  disk         the boot disk: GB-month price / 730 hours x its size, one per VM (diskSpec
               defaults: pd-ssd, hyperdisk-balanced on A3 Ultra; 100 GB).
- on_demand: the table's on-demand price.
- spot: the table's spot price, which already is Compute Engine's spot rate plus Vertex's 15%
  management fee on the Compute Engine on-demand price. None for TPU Pod slices (no spot on
  multi-VM slices) and where the table has no spot figure. Boot disks keep their price.
- flex (FLEX_START): DWS bills Compute Engine's DWS rate plus the same 15% fee, read from the
  FLEX_START rates (``flex.py``, each with its source and date). A resource without a published
  rate has no flex price, and a note says so: the on-demand figure is not passed off as the
  flex one. None for a pool without an L4, A100, H100, H200 or B200, which FLEX_START cannot
  run.
Each line's hourly figure is rounded once, half-up, to whole micro-dollars; durations are exact
integer arithmetic on those figures, rounded once at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any

from vertexplan.catalog import (
    UnknownRegionError,
    allowed_accelerators,
    describe_machine_spec,
    get_catalog,
    get_machine_type,
    get_region,
    is_reduction_server_image,
    is_tpu_pod,
)
from vertexplan.catalog.enums import FLEX_START_ACCELERATORS, strategy_name
from vertexplan.catalog.values import as_int
from vertexplan.pricing.estimate import (
    Estimate,
    LineItem,
    PriceProblem,
    PricingError,
    Resource,
    Totals,
    UnitPrices,
)
from vertexplan.pricing.flex import DISCOUNT_NOTE, FlexRates, shipped
from vertexplan.pricing.money import (
    SECONDS_PER_HOUR,
    Quantity,
    cost_of_seconds,
    seconds_of,
    usd_to_micros,
)
from vertexplan.pricing.rows import PriceRow
from vertexplan.pricing.table import PriceTable, default_table

__all__ = [
    "Estimate",
    "LineItem",
    "PriceProblem",
    "PricingError",
    "Totals",
    "for_duration",
    "for_steps",
    "hourly",
]

DEFAULT_BOOT_DISK_GB = 100
# DiskSpec's default type: hyperdisk-balanced on A3 Ultra, pd-ssd on everything else.
_HYPERDISK_DEFAULT_SERIES = ("a3-ultragpu",)
def _no_flex_note(kind: str, name: str, region: str) -> str:
    return (f"FLEX_START: no published rate for {kind} {name} in {region}, so the job has no "
            f"flex price rather than the on-demand one; {DISCOUNT_NOTE}")
POOL_ROLES = ("chief", "workers", "parameter servers", "evaluators")


def hourly(custom_job: Mapping[str, Any], region: str, table: PriceTable | None = None,
           flex_rates: FlexRates | None = None) -> Estimate:
    """The job's price per hour, line by line, at the on-demand, spot and flex rates.

    Raises PricingError listing every resource without a price (with the regions that have
    one) and every spec field that cannot be read.
    """
    table = default_table() if table is None else table
    flex_rates = shipped() if flex_rates is None else flex_rates
    try:
        get_region(region)
    except UnknownRegionError as exc:
        raise PricingError([PriceProblem(str(exc), region=region)]) from None
    spec = _job_spec(custom_job)
    strategy, problems = _strategy(spec)
    if region not in table.regions:
        problems.append(
            PriceProblem(
                f"the price table has no prices for {region}; it has prices for "
                + ", ".join(table.regions),
                region=region,
                priced_in=table.regions,
            )
        )
    lines: list[LineItem] = []
    notes: list[str] = []
    pools = spec.get("workerPoolSpecs")
    if not isinstance(pools, list) or not pools:
        problems.append(PriceProblem("jobSpec.workerPoolSpecs is missing or empty"))
        pools = []
    for index, pool in enumerate(pools):
        if isinstance(pool, Mapping) and pool:
            priced = _Pool(index, pool, region, table, flex_rates)
            lines += priced.lines
            notes += priced.notes
            problems += priced.problems
    if problems:
        raise PricingError(problems)
    return Estimate(
        region=region,
        strategy=strategy,
        lines=tuple(lines),
        notes=tuple(dict.fromkeys(notes)),
        table_source=table.source,
    )


def for_duration(estimate: Estimate, hours: Quantity) -> Totals:
    """Micro-dollars for running the whole job ``hours`` hours, at each rate."""
    seconds = seconds_of(hours) * SECONDS_PER_HOUR
    return estimate.hourly.map(lambda rate: cost_of_seconds(rate, seconds))


def for_steps(estimate: Estimate, steps: int, step_time_s: Quantity | timedelta) -> Totals:
    """Micro-dollars for ``steps`` training steps of ``step_time_s`` seconds each."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a non-negative int, got {steps!r}")
    seconds = steps * seconds_of(step_time_s)
    return estimate.hourly.map(lambda rate: cost_of_seconds(rate, seconds))


# -- reading the job ------------------------------------------------------------------------------


def _job_spec(custom_job: Mapping[str, Any]) -> Mapping[str, Any]:
    """The CustomJobSpec of a CustomJob; a bare CustomJobSpec is accepted as it is."""
    if not isinstance(custom_job, Mapping):
        raise PricingError([PriceProblem("a CustomJob must be a JSON object")])
    spec = custom_job.get("jobSpec", custom_job)
    return spec if isinstance(spec, Mapping) else {}


# The deprecated and unspecified strategies under the names Vertex now uses for them.
_CANONICAL_STRATEGY = {
    "STRATEGY_UNSPECIFIED": "STANDARD",
    "ON_DEMAND": "STANDARD",
    "LOW_COST": "SPOT",
}


def _strategy(spec: Mapping[str, Any]) -> tuple[str, list[PriceProblem]]:
    scheduling = spec.get("scheduling")
    raw = scheduling.get("strategy") if isinstance(scheduling, Mapping) else None
    if raw is None:
        return "STANDARD", []
    name = strategy_name(raw)
    if name is None:
        return "STANDARD", [PriceProblem(f"unknown jobSpec.scheduling.strategy {raw!r}")]
    return _CANONICAL_STRATEGY.get(name, name), []


def _role(index: int, pool: Mapping[str, Any]) -> str:
    if index == 2:
        container = pool.get("containerSpec")
        image = container.get("imageUri") if isinstance(container, Mapping) else None
        if isinstance(image, str) and is_reduction_server_image(image):
            return "reduction server"
    return POOL_ROLES[index] if index < len(POOL_ROLES) else f"pool {index}"


# -- pricing one pool -----------------------------------------------------------------------------


@dataclass
class _Applicable:
    """Which rates a pool can run at at all (a TPU Pod cannot use spot, a CPU pool not flex)."""

    spot: bool
    flex: bool


class _Pool:
    """Prices one worker pool: fills ``lines``, ``notes`` and ``problems``."""

    def __init__(self, index: int, pool: Mapping[str, Any], region: str, table: PriceTable,
                 flex_rates: FlexRates):
        self.index, self.region, self.table = index, region, table
        self.flex_rates = flex_rates
        self.role = _role(index, pool)
        self.lines: list[LineItem] = []
        self.notes: list[str] = []
        self.problems: list[PriceProblem] = []
        self._price(pool)

    def _problem(self, message: str, **where: Any) -> None:
        self.problems.append(PriceProblem(message, pool=self.index, region=self.region, **where))

    def _price(self, pool: Mapping[str, Any]) -> None:
        machine_spec = pool.get("machineSpec")
        if not isinstance(machine_spec, Mapping):
            self._problem("machineSpec is missing", resource="machineSpec")
            return
        try:
            shape = describe_machine_spec(machine_spec)
        except ValueError as exc:
            self._problem(str(exc), resource="machineSpec")
            return
        replicas = self._replicas(pool)
        if not replicas:
            return
        machine = get_machine_type(shape.machine_type)
        assert machine is not None  # describe_machine_spec knows it
        applicable = _Applicable(
            spot=self._spot_allowed(shape.machine_type, machine_spec), flex=True
        )
        accelerator = shape.accelerator_type
        if accelerator is None and machine.accelerators == "required":
            accelerator = next(iter(allowed_accelerators(machine.name)), None)
        if accelerator not in FLEX_START_ACCELERATORS:
            applicable.flex = False
            self.notes.append(
                f"FLEX_START: workerPoolSpecs[{self.index}] ({machine.name}) has no L4, A100, "
                "H100, H200 or B200 GPU, which FLEX_START needs"
            )
        if shape.kind == "tpu":
            self._tpu(shape.machine_type, replicas * shape.devices, applicable)
        else:
            self._row("machine", machine.name, replicas, applicable)
            # N1 GPUs are billed per GPU; A2/A3/G2 machine prices already include theirs.
            if machine.accelerators == "optional" and shape.accelerator_type and shape.devices:
                self._row(
                    "accelerator", shape.accelerator_type, replicas * shape.devices, applicable
                )
        self._disk(pool.get("diskSpec"), machine.series, replicas * shape.vms, applicable)
        if shape.vms > 1:
            self.notes.append(
                f"workerPoolSpecs[{self.index}]: one boot disk per TPU VM ({shape.vms} VMs), "
                "UNCONFIRMED for Vertex TPU slices"
            )

    def _replicas(self, pool: Mapping[str, Any]) -> int:
        raw = pool.get("replicaCount")
        if raw is None:
            # Vertex reads a missing replicaCount as 0: the pool runs nothing and costs nothing.
            self.notes.append(f"workerPoolSpecs[{self.index}] has no replicaCount: 0 replicas")
            return 0
        count = as_int(raw)
        if count is None or count < 0:
            self._problem(f"replicaCount {raw!r} is not a whole number", resource="replicaCount")
            return 0
        return count

    def _spot_allowed(self, machine_type: str, machine_spec: Mapping[str, Any]) -> bool:
        topology = machine_spec.get("tpuTopology")
        if is_tpu_pod(machine_type, topology if isinstance(topology, str) else None):
            self.notes.append(
                f"spot: workerPoolSpecs[{self.index}] is a TPU Pod slice ({machine_type} "
                f"{topology}), which cannot run on spot VMs"
            )
            return False
        return True

    def _tpu(self, machine_type: str, chips: int, applicable: _Applicable) -> None:
        tpu = self.table.tpu_price(machine_type, self.region)
        if tpu is None or tpu.row.on_demand is None:
            self._missing("tpu", machine_type, tpu.row if tpu else None)
            return
        self._line("tpu", tpu.row.key, chips, tpu.row, applicable)

    def _row(self, kind: Resource, name: str, quantity: int, applicable: _Applicable) -> None:
        row = self.table.get(kind, name, self.region)
        if row is None or row.on_demand is None:
            self._missing(kind, name, row)
            return
        self._line(kind, name, quantity, row, applicable)

    def _disk(self, disk_spec: object, series: str, disks: int, applicable: _Applicable) -> None:
        spec = disk_spec if isinstance(disk_spec, Mapping) else {}
        default = "hyperdisk-balanced" if series in _HYPERDISK_DEFAULT_SERIES else "pd-ssd"
        # proto3 JSON: an absent, empty or zero field means the default.
        disk_type = spec.get("bootDiskType") or default
        raw_size = spec.get("bootDiskSizeGb")
        size = DEFAULT_BOOT_DISK_GB if raw_size is None else as_int(raw_size, bits=32)
        if size == 0:
            size = DEFAULT_BOOT_DISK_GB
        if size is None or size < 0:
            self._problem(f"bootDiskSizeGb {raw_size!r} is not a size in GB", resource="diskSpec")
            return
        known = get_catalog().boot_disk_types.get(disk_type) if isinstance(disk_type, str) else None
        if known is None or not known.allowed:
            why = known.refusal if known else "Vertex takes pd-ssd, pd-standard, hyperdisk-balanced"
            self._problem(f"bootDiskType {disk_type!r} cannot be priced: {why}", resource="disk")
            return
        self._row("disk", disk_type, size * disks, applicable)

    def _line(
        self, kind: Resource, name: str, quantity: int, row: PriceRow, applicable: _Applicable
    ) -> None:
        on_demand = row.on_demand
        if on_demand is None:  # callers report these as missing
            return
        if applicable.spot and row.spot is None:
            self.notes.append(f"spot: no spot price for {kind} {name} in {self.region}")
        flex_rate = self.flex_rates.get(kind, name, self.region) if applicable.flex else None
        flex_price = flex_rate.flex_usd if flex_rate is not None else None
        if applicable.flex and kind == "disk":
            flex_price = on_demand  # a boot disk is not a DWS VM: its price does not change
        elif applicable.flex and flex_rate is None:
            self.notes.append(_no_flex_note(kind, name, self.region))
        prices = UnitPrices(
            on_demand=on_demand,
            spot=row.spot if applicable.spot else None,
            flex=flex_price,
        )

        def per_hour(price: Decimal) -> int:
            # Exact: a GB-month price / 730 is not a finite decimal, so divide as a fraction.
            return usd_to_micros(Fraction(price) * quantity / row.hours_per_unit)

        hourly = Totals(
            per_hour(prices.on_demand),
            None if prices.spot is None else per_hour(prices.spot),
            None if prices.flex is None else per_hour(prices.flex),
        )
        self.lines.append(
            LineItem(
                pool=self.index,
                role=self.role,
                resource=kind,
                name=name,
                quantity=quantity,
                unit=row.unit,
                unit_prices=prices,
                hourly=hourly,
                source=row.source if flex_rate is None
                else f"{row.source}; FLEX_START: {flex_rate.source}",
                retrieved=row.retrieved,
            )
        )

    def _missing(self, kind: Resource, name: str, row: PriceRow | None) -> None:
        if kind == "tpu":
            priced_in = self.table.tpu_regions_priced(name)
        else:
            priced_in = self.table.regions_priced(kind, name)
        message = f"no price for {kind} {name} in {self.region}"
        if row is not None:
            message += f" (the table lists it without a figure: {row.source})"
        message += (
            f"; priced in {', '.join(priced_in)}"
            if priced_in
            else "; no region in the price table has one"
        )
        self._problem(message, resource=kind, name=name, priced_in=priced_in)

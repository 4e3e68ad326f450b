"""What a validated job would cost before it is submitted: per hour and for a duration, at every
rate, with the same work on the other kind of accelerator. The estimate endpoint, the compose
page and validate all answer with this."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from rest_framework.exceptions import ValidationError

from controlplane.compose import expected, validation
from controlplane.core import price_table
from controlplane.costs.recommend_api import result_json
from controlplane.teams.models import Team
from vertexplan.digits import ascii_int
from vertexplan.pricing import RATE_NAMES, Estimate, Totals, job_estimate
from vertexplan.pricing.estimate import LineItem
from vertexplan.pricing.money import cost_of_seconds, seconds_of
from vertexplan.recommend import alternatives as tpu_gpu

DURATION_KEYS = ("hours", "steps", "step_time_s")
MAX_HOURS = Decimal(24 * 366)


def totals_json(totals: Totals) -> dict[str, int | None]:
    return {rate: totals.get(rate) for rate in RATE_NAMES}


class Duration:
    """How long the estimate is for: hours, steps x a measured step time, steps x a modelled
    one (``expected``: its model in ``model``), or the job's timeout."""

    def __init__(self, *, hours: Decimal | None = None, steps: int | None = None,
                 step_time_s: Decimal | None = None, timeout: Decimal | None = None,
                 model: str = "") -> None:
        self.steps, self.step_time_s, self.model = steps, step_time_s, model
        if steps is not None and step_time_s is not None:
            self.basis = "expected" if model else "steps"
            self.hours = steps * step_time_s / 3600
        elif hours is not None:
            self.basis, self.hours = "hours", hours
        else:
            self.basis, self.hours = "timeout", timeout or price_table.DEFAULT_TIMEOUT_HOURS

    @property
    def seconds(self) -> Fraction:
        if self.basis in ("steps", "expected"):
            assert self.steps is not None and self.step_time_s is not None
            return self.steps * seconds_of(self.step_time_s)
        return seconds_of(self.hours) * 3600

    def total(self, hourly: Totals) -> Totals:
        """The same arithmetic as vertexplan.pricing.job_estimate.for_duration: one rounding per
        figure."""
        seconds = self.seconds
        return hourly.map(lambda rate: cost_of_seconds(rate, seconds))

    def as_dict(self) -> dict[str, Any]:
        out = {"basis": self.basis, "hours": _decimal_text(self.hours), "steps": self.steps,
               "step_time_s": _decimal_text(self.step_time_s)}
        if self.basis == "expected":
            out["label"] = (f"expected: {self.steps} steps x a {self.step_time_s} s step, "
                            f"{self.model}; no step of this job shape has been measured yet")
        if self.basis == "timeout":
            out["label"] = ("ceiling: the job's timeout, the most Vertex lets it run; give "
                            "hours, or steps and step_time_s, for what it is expected to cost")
        return out


def _decimal_text(value: Decimal | None) -> str | None:
    if value is None:
        return None
    return f"{value.quantize(Decimal('0.000001')).normalize():f}"


def _line_json(line: LineItem, duration: Duration) -> dict[str, Any]:
    prices_ = line.unit_prices
    return {
        "resource": line.resource, "name": line.name, "quantity": line.quantity,
        "description": line.description, "unit": line.unit,
        "unit_prices_usd": {rate: None if value is None else format(value, "f") for rate, value
                            in (("on_demand", prices_.on_demand), ("spot", prices_.spot),
                                ("flex", prices_.flex))},
        "hourly": totals_json(line.hourly),
        "total": totals_json(duration.total(line.hourly)),
        "source": line.source, "retrieved": line.retrieved,
    }


def estimate_json(estimate: Estimate, duration: Duration,
                  alternatives: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The estimate in micro-dollars, per hour and for ``duration``, total and per pool."""
    pools = []
    for pool in sorted({line.pool for line in estimate.lines}):
        lines = [line for line in estimate.lines if line.pool == pool]
        hourly = estimate.pool_hourly(pool)
        pools.append({"pool": pool, "role": lines[0].role, "hourly": totals_json(hourly),
                      "total": totals_json(duration.total(hourly)),
                      "resources": [_line_json(line, duration) for line in lines]})
    return {
        "currency": "USD",
        "money": "integer micro-dollars (1 USD = 1000000)",
        "region": estimate.region,
        "strategy": estimate.strategy,
        "rate": estimate.rate_name,
        "duration": duration.as_dict(),
        "hourly": totals_json(estimate.hourly),
        "total": totals_json(duration.total(estimate.hourly)),
        "pools": pools,
        "price_table": price_table.table_info(estimate=estimate),
        "notes": list(estimate.notes),
        "alternatives": alternatives or [],
        "alternatives_basis": tpu_gpu.BASIS,
    }


def alternatives_of(checked: validation.CheckedRequest,
                    duration: Duration) -> list[dict[str, Any]]:
    """The same job on TPU instead of GPU (or the reverse), in its region, as recommender
    results."""
    if checked.composition is None:
        return []
    found = tpu_gpu.alternatives(checked.composition, duration.seconds,
                                 price_table.current_table())
    return [result_json(r) for r in found]


def estimate_of_checked(checked: validation.CheckedRequest,
                        hours: Decimal | None = None,
                        team: Team | None = None) -> dict[str, Any] | None:
    """Validate's ``estimate`` section: for ``hours``, else the built-in trainer's steps x the
    step time measured on the same job shape, else x the step time modelled from the model's
    size and the devices' peak (labelled so), else the job's timeout as a labelled ceiling;
    ``error`` when it cannot be priced; None when there is no CustomJob to price."""
    if checked.composition is None:
        return None
    custom_job = checked.composition.custom_job
    region = checked.composition.request.region
    try:
        estimate = price_table.estimate(custom_job, region)
    except job_estimate.PricingError as exc:
        return {"error": str(exc), "price_table": price_table.table_info()}
    timeout = price_table.timeout_hours(custom_job)
    steps = expected.trainer_steps(custom_job) if hours is None else None
    team = team if team is not None else checked.team
    step_time = expected.measured_step_time(team, custom_job) if steps is not None else None
    model = ""
    if steps is not None and step_time is None:
        step_time, model = expected.modelled_step_time(checked.composition)
    duration = Duration(hours=hours, steps=steps if step_time is not None else None,
                        step_time_s=step_time, timeout=timeout, model=model)
    out = estimate_json(estimate, duration, alternatives_of(checked, duration))
    # The timeout is always there as what it is: the most the job can cost.
    ceiling = Duration(timeout=timeout)
    out["ceiling"] = {**ceiling.as_dict(), "total": totals_json(ceiling.total(estimate.hourly)),
                      "timeout_text": timeout_text(timeout)}
    if duration.basis == "timeout":
        # Priced for its timeout only because nothing says how long it runs: the page shows the
        # hourly rate and this cap, and says why, never the cap as the expected cost.
        out["ceiling"]["why_no_run_time"] = _why_no_run_time(checked.composition, steps)
    return out


def timeout_text(hours: Decimal) -> str:
    """'7-day' for whole days (Vertex's default timeout is 7 days), else '3 h', '0.5 h'."""
    if hours >= 24 and hours % 24 == 0:
        return f"{hours // 24:f}-day"
    return f"{_decimal_text(hours)} h"


def _why_no_run_time(composition: Any, steps: int | None) -> str:
    """Why the run time of a job priced for its timeout could not be estimated."""
    if steps is None:
        return ("the job runs a command of its own, so its steps are unknown; give the hours "
                "it should take")
    modelled = composition.expected_step
    if isinstance(modelled, str) and modelled:
        return (f"no step of this job shape has been measured and the step time cannot be "
                f"modelled ({modelled}); give the hours it should take")
    return ("no step of this job shape has been measured and no model size is given to model "
            "one from; give the model's size (parameters, layers, hidden size, sequence "
            "length) or the hours it should take")


def hours_or_none(text: str | None) -> Decimal | None:
    """The compose page's optional 'estimate for' hours; blank or invalid: None."""
    try:
        return _positive({"hours": text}, "hours", MAX_HOURS)
    except ValidationError:
        return None


# --- parsing the extra fields -----------------------------------------------------------

def _positive(data: dict[str, Any], key: str, limit: Decimal) -> Decimal | None:
    raw = data.get(key)
    if raw is None or raw == "":
        return None
    if isinstance(raw, bool):
        raw = "bad"
    try:
        value = Decimal(str(raw))
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite() or value <= 0 or value > limit:
        raise ValidationError({key: [f"{raw!r} is not valid: a number greater than 0 and at "
                                     f"most {limit}"]})
    return value


def parse_duration(data: dict[str, Any], timeout: Decimal) -> Duration:
    hours = _positive(data, "hours", MAX_HOURS)
    step_time = _positive(data, "step_time_s", Decimal(86400))
    raw_steps = data.get("steps")
    steps = None
    if raw_steps not in (None, ""):
        steps = None if isinstance(raw_steps, bool) else ascii_int(str(raw_steps))
        if not steps:
            raise ValidationError({"steps": [f"{str(raw_steps)[:40]!r} is not valid: a whole "
                                             "number of training steps, at least 1 (ASCII "
                                             "digits)"]})
    if (steps is None) != (step_time is None):
        missing = "step_time_s" if step_time is None else "steps"
        raise ValidationError({missing: ["give steps and step_time_s together (or hours)"]})
    if hours is not None and steps is not None:
        raise ValidationError({"hours": ["give hours, or steps and step_time_s, not both"]})
    return Duration(hours=hours, steps=steps, step_time_s=step_time, timeout=timeout)


def parse_region(region: Any) -> str:
    priced = price_table.current_table().regions
    if not isinstance(region, str) or region not in priced:
        raise ValidationError({"region": [f"{region!r} has no prices; valid regions: "
                                          f"{', '.join(priced)}"]})
    return region

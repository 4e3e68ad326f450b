"""The sweep form: the trial job is the compose form itself (JobForm, every field and rule),
with the study beside it: the metric and goal, a table of parameters, the algorithm and the
trial counts.

As with jobs, these forms only read their inputs (a number is a number, a parent names a row
of the table). Whether the study and the trial job make a valid HyperparameterTuningJob is
decided by controlplane.sweeps.lifecycle.check, exactly as for the API; ``sweep_request.py``
builds the request and puts that check's messages on the fields they name.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

from django import forms

from controlplane.compose import recovery_fields
from controlplane.compose.forms import JobForm
from controlplane.core import idempotency
from controlplane.teams.models import Team
from vertexplan.sweeps import GOALS, PARAMETER_TYPES
from vertexplan.sweeps.study import MEASUREMENT_SELECTIONS

MAX_PARAMETERS = 24
ROWS_SHOWN = 4
ALGORITHM_CHOICES = [
    ("ALGORITHM_UNSPECIFIED", "Bayesian optimisation (Vertex's default)"),
    ("RANDOM_SEARCH", "Random search"),
    ("GRID_SEARCH", "Grid search (integer, discrete and categorical parameters)"),
]
TYPE_CHOICES = [("", "choose"), *((t, t.lower()) for t in PARAMETER_TYPES)]
SCALE_CHOICES = [("", "none"), ("UNIT_LINEAR_SCALE", "linear"), ("UNIT_LOG_SCALE", "log"),
                 ("UNIT_REVERSE_LOG_SCALE", "reverse log")]
RANGE_TYPES = ("DOUBLE", "INTEGER")
# A row the user left empty: none of these filled in.
ROW_KEYS = ("parameter_id", "type", "min_value", "max_value", "values", "parent")


class TrialJobForm(JobForm):
    """The compose form as a sweep's trial job. Its name is the sweep's (Vertex names the
    trials' CustomJobs after the tuning job), and a trial has no recovery policy of its own
    (Vertex retries failed trials up to max_failed_trial_count). It is checked within the
    sweep, so its own check only keeps the request it reads as."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("name", *recovery_fields.FORM_FIELDS):
            del self.fields[name]
        self.trial_request: dict[str, Any] | None = None

    def check_request(self, request: dict[str, Any], team: Team | None) -> None:
        request.pop("name", None)
        self.trial_request = request


def number(text: str, *, whole: bool) -> int | float:
    """A number as typed: an int when WHOLE or when written as one, else a finite float.
    Raises ValueError with what is wrong."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        if whole:
            raise ValueError(f"{text!r} is not a whole number") from None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


def _filled(value: Any) -> bool:
    return value not in (None, "", []) and (not isinstance(value, str) or bool(value.strip()))


def split_list(text: str) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


class ParameterForm(forms.Form):
    """One parameter. A row with a parent is conditional: it is searched only in trials where
    the parent takes one of the parent values."""

    parameter_id = forms.CharField(label="Parameter id", required=False, max_length=64)
    type = forms.ChoiceField(label="Type", required=False, choices=TYPE_CHOICES)
    min_value = forms.CharField(label="Min", required=False, max_length=40)
    max_value = forms.CharField(label="Max", required=False, max_length=40)
    values = forms.CharField(label="Values", required=False, max_length=4000)
    scale_type = forms.ChoiceField(label="Scale", required=False, choices=SCALE_CHOICES)
    parent = forms.CharField(label="Parent parameter", required=False, max_length=64)
    parent_values = forms.CharField(label="Parent values", required=False, max_length=4000)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The rows are a table: each input is named by its column for screen readers.
        for field in self.fields.values():
            field.widget.attrs["aria-label"] = str(field.label)

    def is_blank(self) -> bool:
        data = getattr(self, "cleaned_data", {})
        return not any(_filled(data.get(key)) for key in ROW_KEYS)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        kind = cleaned.get("type") or ""
        if kind in RANGE_TYPES:
            for name in ("min_value", "max_value"):
                text = cleaned.get(name) or ""
                if text.strip():
                    try:
                        cleaned[name] = number(text, whole=kind == "INTEGER")
                    except ValueError as exc:
                        self.add_error(name, str(exc))
                else:
                    cleaned[name] = None  # the study's check names it missing
            if split_list(cleaned.get("values") or ""):
                self.add_error("values", f"a {kind} parameter is a range: give min and max, "
                                         "not values")
        elif kind:
            if (cleaned.get("min_value") or "").strip() or (cleaned.get("max_value") or
                                                             "").strip():
                self.add_error("min_value", f"a {kind} parameter lists its values: give "
                                            "them under values, not min and max")
            values = split_list(cleaned.get("values") or "")
            if kind == "DISCRETE":
                try:
                    values = [number(v, whole=False) for v in values]
                except ValueError as exc:
                    self.add_error("values", str(exc))
            cleaned["values"] = values
        if (cleaned.get("parent_values") or "").strip() and not (cleaned.get("parent") or
                                                                 "").strip():
            self.add_error("parent", "name the parent parameter these values belong to")
        return cleaned

    def as_parameter(self) -> dict[str, Any]:
        """The parameter as the API takes it (without its conditional children)."""
        data = self.cleaned_data
        out: dict[str, Any] = {"parameter_id": data["parameter_id"].strip(),
                               "type": data.get("type") or None}
        if out["type"] in RANGE_TYPES:
            out["min_value"], out["max_value"] = data["min_value"], data["max_value"]
        elif out["type"]:
            out["values"] = data["values"]
        if data.get("scale_type"):
            out["scale_type"] = data["scale_type"]
        return out


ParameterFormSet = forms.formset_factory(ParameterForm, extra=0, max_num=MAX_PARAMETERS,
                                         absolute_max=MAX_PARAMETERS, validate_max=True)
FIRST_ROWS = [{"parameter_id": "lr", "type": "DOUBLE", "min_value": "0.0001",
               "max_value": "0.01", "scale_type": "UNIT_LOG_SCALE"}]


def parameter_formset(data: Any = None, *, initial: list[dict[str, Any]] | None = None,
                      rows: int = ROWS_SHOWN) -> Any:
    """The parameter rows: bound to DATA, or INITIAL (a first example) and blank rows."""
    if data is not None:
        return ParameterFormSet(data, prefix="parameters")
    initial = FIRST_ROWS if initial is None else initial
    extra = max(min(rows, MAX_PARAMETERS) - len(initial), 1)
    return forms.formset_factory(ParameterForm, extra=extra, max_num=MAX_PARAMETERS)(
        initial=initial, prefix="parameters")


def _count(label: str, initial: int, help_text: str) -> forms.IntegerField:
    # No bounds here: the sweep's check says what the counts may be, in its own words.
    return forms.IntegerField(label=label, required=False, initial=initial,
                              help_text=help_text)


class StudyForm(forms.Form):
    display_name = forms.CharField(label="Sweep name", required=False, max_length=128,
                                   help_text="The tuning job's display name; its trials are "
                                             "named after it.")
    metric_id = forms.CharField(label="Metric id", required=False, max_length=64,
                                initial="val_loss", help_text="The tag the trainer reports "
                                "with cloudml-hypertune (the built-in trainer: val_loss).")
    goal = forms.ChoiceField(label="Goal", choices=[(g, g.lower()) for g in GOALS],
                             initial="MINIMIZE")
    algorithm = forms.ChoiceField(label="Algorithm", choices=ALGORITHM_CHOICES,
                                  initial="ALGORITHM_UNSPECIFIED")
    measurement_selection = forms.ChoiceField(
        label="Measurement", required=False,
        choices=[("", "Vertex's default (the best)"),
                 *((m, m.replace("_", " ").lower()) for m in MEASUREMENT_SELECTIONS)])
    max_trial_count = _count("Max trials", 10, "Trials in all.")
    parallel_trial_count = _count("Parallel trials", 2, "At most max trials.")
    max_failed_trial_count = _count("Max failed trials", 0, "The sweep fails past this "
                                    "many; 0: Vertex decides.")
    trial_hours = forms.CharField(label="Hours per trial (estimate)", required=False,
                                  max_length=20, help_text="Blank: the trial job's timeout, "
                                  "the most a trial can run.")
    # Made when the page is shown; a second submission of the same page finds the first one's
    # sweep (controlplane/core/idempotency.py) instead of creating another.
    idempotency_key = forms.CharField(widget=forms.HiddenInput, max_length=255)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("initial", {}).setdefault("idempotency_key", uuid.uuid4().hex)
        super().__init__(*args, **kwargs)

    def clean_idempotency_key(self) -> str:
        return idempotency.form_key(self.cleaned_data["idempotency_key"])

"""The create-cluster form: the fields the API takes (controlplane/clusters/serializers.py),
flat, with one row per resource pool; and the cluster page's Ray job form.

Only the shape of each value is checked here (a number is a number, the team is one the user
may create in). Whether the pools, machines, accelerators, disks and Ray runtime make a valid
PersistentResource is vertexplan.clusters' decision, made by lifecycle.check_cluster exactly
as for the API; its messages (`pools[1].accelerator_type`, `ray.version`) are put on the
fields they name.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import uuid
from typing import Any

from django import forms

from controlplane.core import idempotency
from controlplane.teams import access
from controlplane.teams.models import Team
from vertexplan import catalog
from vertexplan.clusters import DEFAULT_VERSION, OFFERED
from vertexplan.digits import ascii_int

MAX_POOLS = 16
ROWS_SHOWN = 3
# The longest command line and environment the Ray job form takes (the API's limits: 64
# arguments of 1,000 characters; 64 variables, names of 128 characters, values of 4,096).
MAX_ENTRYPOINT_CHARS = 64 * 1001
MAX_ENV_CHARS = 64 * (128 + 4096 + 2)
# A pool row the form shows and the user left empty: no id and no machine.
POOL_KEYS = ("id", "machine_type")
NO_RAY = ""
# Where the composer's error paths land on this form (pool paths are mapped row by row).
FIELD_OF_PATH = {
    "name": "name", "display_name": "display_name", "network": "network",
    "service_account": "service_account", "labels": "labels", "ray": "ray_version",
    "ray.version": "ray_version", "ray.python": "ray_python", "ray.image_uri": "ray_image_uri",
    "ray.head_pool_id": "ray_head_pool_id",
}


def _machine_choices() -> list[Any]:
    return [("", "choose"), *catalog.machine_type_choices()]


def _accelerator_choices() -> list[Any]:
    return [("", "none"), *catalog.accelerator_type_choices()]


def _disk_choices() -> list[Any]:
    return [("", "pd-ssd (default)"), *catalog.boot_disk_type_choices()]


def _ray_choices() -> list[Any]:
    return [(NO_RAY, "no Ray runtime (a plain persistent resource)"),
            *((v, f"Ray {v}" + (" (default)" if v == DEFAULT_VERSION else ""))
              for v in reversed(OFFERED))]


def _python_choices() -> list[Any]:
    pythons = sorted({p for ps in OFFERED.values() for p in ps})
    return [("", "the newest the version's image carries"), *((p, p) for p in pythons)]


def _count(label: str, **kwargs: Any) -> forms.IntegerField:
    return forms.IntegerField(label=label, required=False, min_value=0, max_value=1000, **kwargs)


class PoolForm(forms.Form):
    """One resource pool; the first row runs the Ray head unless another is named."""

    id = forms.CharField(label="Pool id", required=False, max_length=63)
    machine_type = forms.ChoiceField(label="Machine type", required=False,
                                     choices=_machine_choices)
    replica_count = _count("Replicas")
    accelerator_type = forms.ChoiceField(label="Accelerator", required=False,
                                         choices=_accelerator_choices)
    accelerator_count = _count("Accelerators per replica")
    min_replica_count = _count("Autoscaling min")
    max_replica_count = _count("Autoscaling max")
    boot_disk_type = forms.ChoiceField(label="Boot disk", required=False, choices=_disk_choices)
    boot_disk_size_gb = forms.IntegerField(label="Boot disk GB", required=False, min_value=1,
                                           max_value=65536)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The rows are a table: each input is named by its column for screen readers.
        for field in self.fields.values():
            field.widget.attrs["aria-label"] = str(field.label)

    def is_blank(self) -> bool:
        data = getattr(self, "cleaned_data", {})
        return not any(data.get(key) for key in POOL_KEYS)

    def as_pool(self) -> dict[str, Any]:
        """The pool as the API takes it: unset fields left out, so the defaults apply."""
        return {key: value for key, value in self.cleaned_data.items()
                if value not in (None, "")}


PoolFormSet = forms.formset_factory(PoolForm, extra=0, max_num=MAX_POOLS, absolute_max=MAX_POOLS,
                                    validate_max=True)
FIRST_POOLS = [{"id": "head", "machine_type": "n1-standard-4", "replica_count": 1},
               {"id": "workers", "machine_type": "n1-standard-8", "replica_count": 2}]


def pool_formset(data: Any = None, rows: int = ROWS_SHOWN) -> Any:
    """The pool rows: bound to DATA, or the first pools and blank rows up to ROWS."""
    if data is not None:
        return PoolFormSet(data, prefix="pools")
    extra = max(min(rows, MAX_POOLS) - len(FIRST_POOLS), 0)
    return forms.formset_factory(PoolForm, extra=extra, max_num=MAX_POOLS)(
        initial=FIRST_POOLS, prefix="pools")


class ClusterForm(forms.Form):
    team = forms.ModelChoiceField(queryset=Team.objects.none(), to_field_name="slug",
                                  empty_label=None)
    name = forms.CharField(max_length=63, help_text="Lowercase letters, digits, hyphens; "
                                                    "unique among your team's live clusters.")
    display_name = forms.CharField(required=False, max_length=128)
    ray_version = forms.ChoiceField(label="Ray", required=False, choices=_ray_choices,
                                    initial=DEFAULT_VERSION)
    ray_python = forms.ChoiceField(label="Python", required=False, choices=_python_choices)
    ray_image_uri = forms.CharField(label="Ray image", required=False, max_length=500,
                                    help_text="Empty: Vertex's prebuilt image for the version.")
    ray_head_pool_id = forms.CharField(label="Head pool id", required=False, max_length=63,
                                       help_text="Empty: the first pool.")
    network = forms.CharField(required=False, max_length=200,
                              help_text="projects/{number}/global/networks/{name}, one "
                                        "your team's policy allows; empty: Google's network.")
    service_account = forms.CharField(required=False, max_length=200,
                                      help_text="One your team's policy allows; empty: the "
                                                "project's default.")
    labels = forms.CharField(required=False, max_length=4000,
                             widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="One key=value a line.")
    # Made when the page is shown; a second submission of the same page finds the first one's
    # cluster (controlplane/core/idempotency.py) instead of creating another.
    idempotency_key = forms.CharField(widget=forms.HiddenInput, max_length=255)

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        kwargs.setdefault("initial", {}).setdefault("idempotency_key", uuid.uuid4().hex)
        super().__init__(*args, **kwargs)
        teams = access.submit_teams(user).order_by("name")
        self.fields["team"].queryset = teams  # type: ignore[attr-defined]
        self.fields["team"].help_text = "Teams where your role may create clusters."

    def clean_idempotency_key(self) -> str:
        return idempotency.form_key(self.cleaned_data["idempotency_key"])

    def clean_labels(self) -> dict[str, str]:
        return key_value_lines(self.cleaned_data["labels"], "key=value")

    def cluster_request(self, pools: Any) -> tuple[dict[str, Any], list[int]]:
        """The request as the API takes it, and which form row each of its pools came from."""
        data = self.cleaned_data
        rows = [i for i, row in enumerate(pools.forms) if not row.is_blank()]
        request: dict[str, Any] = {
            "name": data["name"], "pools": [pools.forms[i].as_pool() for i in rows],
            "ray": None,
        }
        if data["ray_version"] != NO_RAY:
            request["ray"] = {key: data[f"ray_{key}"] for key in
                              ("version", "python", "image_uri", "head_pool_id")
                              if data[f"ray_{key}"]}
        for key in ("display_name", "network", "service_account", "labels"):
            if data[key]:
                request[key] = data[key]
        return request, rows

    def fingerprint(self, request: dict[str, Any]) -> str:
        """What makes two submissions the same: the team and the request."""
        canonical = json.dumps([self.cleaned_data["team"].slug, request], sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()

    def attach(self, errors: dict[str, list[str]], pools: Any, rows: list[int]) -> None:
        """Put the composer's messages on the fields (and pool rows) they name."""
        for path, messages in errors.items():
            for message in messages:
                self._attach_one(path, message, pools, rows)

    def _attach_one(self, path: str, message: str, pools: Any, rows: list[int]) -> None:
        if path.startswith("pools[") and "]" in path:
            index_text, _, rest = path[len("pools["):].partition("]")
            field = rest.lstrip(".")
            index = ascii_int(index_text)
            if index is not None and index < len(rows):
                row = pools.forms[rows[index]]
                row.add_error(field if field in row.fields else None, message)
                return
        # `labels["Key"]` is the labels field's; an unknown path is the whole form's.
        top = re.split(r"[.\[]", path, maxsplit=1)[0]
        self.add_error(FIELD_OF_PATH.get(path) or FIELD_OF_PATH.get(top), message)


class RayJobForm(forms.Form):
    """A Ray job for the cluster page: the fields the API takes (SubmitRayJobSerializer), the
    entrypoint as one command line. Only the shape is checked here; what makes a valid
    entrypoint and environment is lifecycle.submit_ray_job's decision, as for the API, and its
    messages land on the fields they name."""

    entrypoint = forms.CharField(
        max_length=MAX_ENTRYPOINT_CHARS, strip=True,
        widget=forms.TextInput(attrs={"placeholder": "python -m trainers.ray_train --workers 2"
                                                     " -- --preset tiny --steps 40",
                                      "class": "mono"}),
        help_text="The command, split into arguments as a shell splits words (quotes keep "
                  "spaces in one); it runs without a shell: no pipes, $VARS or globs.")
    env_vars = forms.CharField(
        label="Environment", required=False, max_length=MAX_ENV_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "class": "mono"}),
        help_text="Optional: the Ray job's runtime environment variables, one NAME=value a "
                  "line.")
    entrypoint_num_cpus = forms.FloatField(
        label="Driver CPUs", required=False, min_value=0, max_value=64,
        help_text="Optional: CPUs Ray reserves for the entrypoint itself.")
    # As the create form's: a second submission of the same page finds the first one's Ray
    # job instead of starting another run.
    idempotency_key = forms.CharField(widget=forms.HiddenInput, max_length=255)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("initial", {}).setdefault("idempotency_key", uuid.uuid4().hex)
        kwargs.setdefault("prefix", "ray")
        super().__init__(*args, **kwargs)

    def clean_idempotency_key(self) -> str:
        return idempotency.form_key(self.cleaned_data["idempotency_key"])

    def clean_entrypoint(self) -> list[str]:
        # Split only, never run through a shell: the arguments go to Ray as the API's list.
        try:
            return shlex.split(self.cleaned_data["entrypoint"])
        except ValueError as exc:  # an unclosed quote
            raise forms.ValidationError(f"cannot split it into arguments: {exc}") from exc

    def clean_env_vars(self) -> dict[str, str]:
        return key_value_lines(self.cleaned_data["env_vars"], "NAME=value", once=True)

    def ray_job(self) -> dict[str, Any]:
        """The Ray job as lifecycle.submit_ray_job takes it (the API's body, less cluster)."""
        return {key: self.cleaned_data[key]
                for key in ("entrypoint", "env_vars", "entrypoint_num_cpus")}

    def fingerprint(self, cluster_id: int) -> str:
        """What makes two submissions the same: the cluster and the Ray job."""
        canonical = json.dumps([cluster_id, self.ray_job()], sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()

    def attach(self, errors: dict[str, list[str]]) -> None:
        """Put the service's messages on the fields they name (`cluster`: the whole form's)."""
        for name, messages in errors.items():
            for message in messages:
                self.add_error(name if name in self.fields else None, message)


def key_value_lines(text: str, form: str, *, once: bool = False) -> dict[str, str]:
    """A text box of `key=value` lines as a dict, keys and values trimmed as the API's fields
    trim theirs; blank lines skipped. `once`: a key given twice is an error, not the last wins."""
    pairs: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise forms.ValidationError(f"line {number}: write {form}")
        if once and key.strip() in pairs:
            raise forms.ValidationError(f"line {number}: {key.strip()} is set twice")
        pairs[key.strip()] = value.strip()
    return pairs

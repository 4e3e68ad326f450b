"""The compose form: flat fields that map onto a job request (the dict jobs.composer reads).

Only the shape of each value is checked here (an integer is an integer). Whether the machine,
accelerators, disks and replicas make a valid CustomJob is the catalogue's decision, made in
``requests.check`` exactly as for the API, and its messages are attached to the fields.
"""

from __future__ import annotations

import shlex
from typing import Any

from django import forms
from django.conf import settings

from jobs import access, catalog, composer, requests
from jobs.models import Team

NO_ACCELERATOR = "none"
SAME_AS_CHIEF = ""
RESTART_CHOICES = [
    ("auto", "Auto: restart all replicas together when there is more than one"),
    ("yes", "Yes: a failed replica restarts the whole job"),
    ("no", "No: only the failed replica restarts"),
]
_RESTART_VALUES: dict[str, bool | None] = {"auto": None, "yes": True, "no": False}
_RESTART_NAMES = {value: name for name, value in _RESTART_VALUES.items()}

Choices = list[tuple[str, Any]]


# Choices are callables so the catalogue is read when a form is built, not at import.
def _machine_choices() -> Choices:
    return catalog.machine_type_choices()


def _chief_accelerator_choices() -> Choices:
    return [(NO_ACCELERATOR, "none (CPU only)"), *catalog.accelerator_type_choices()]


def _disk_choices() -> Choices:
    return catalog.boot_disk_type_choices()


def _same_as_chief(choices: Choices) -> Choices:
    return [(SAME_AS_CHIEF, "same as chief"), *choices]


def _strategy_choices() -> Choices:
    return [(name, f"{name}: {label}") for name, label in composer.STRATEGIES.items()]


class JobForm(forms.Form):
    team = forms.ModelChoiceField(queryset=Team.objects.none(), to_field_name="slug",
                                  empty_label="choose a team")
    # Not required here: the catalogue says what a job name must be, in its own words.
    name = forms.CharField(max_length=100, required=False)
    strategy = forms.ChoiceField(choices=_strategy_choices, initial="ddp")
    spot = forms.BooleanField(required=False, help_text="Preemptible VMs; the trainer resumes "
                              "from its last checkpoint when a replica is preempted.")
    image_uri = forms.CharField(label="Image URI", required=False, max_length=512)
    args = forms.CharField(required=False, initial=shlex.join(composer.DEFAULT_TRAINER_ARGS),
                           help_text="Trainer arguments, split as a shell would.")

    chief_machine_type = forms.ChoiceField(label="Machine type", choices=_machine_choices,
                                           initial="n1-standard-4")
    chief_accelerator_type = forms.ChoiceField(label="Accelerator",
                                               choices=_chief_accelerator_choices,
                                               initial=NO_ACCELERATOR)
    chief_accelerator_count = forms.IntegerField(label="Accelerators per replica", min_value=0,
                                                 initial=0)
    chief_boot_disk_type = forms.ChoiceField(label="Boot disk", choices=_disk_choices,
                                             initial="pd-ssd")
    # No min_value: the catalogue's limit and message are the ones a user must see.
    chief_boot_disk_size_gb = forms.IntegerField(label="Boot disk GB", initial=100)

    workers_enabled = forms.BooleanField(label="Add a workers pool", required=False)
    workers_replica_count = forms.IntegerField(label="Replicas", initial=1, required=False)
    workers_machine_type = forms.ChoiceField(
        label="Machine type", required=False,
        choices=lambda: _same_as_chief(_machine_choices()))
    workers_accelerator_type = forms.ChoiceField(
        label="Accelerator", required=False,
        choices=lambda: _same_as_chief(catalog.accelerator_type_choices()))
    workers_accelerator_count = forms.IntegerField(label="Accelerators per replica",
                                                   min_value=0, required=False)
    workers_boot_disk_type = forms.ChoiceField(label="Boot disk", required=False,
                                               choices=lambda: _same_as_chief(_disk_choices()))
    workers_boot_disk_size_gb = forms.IntegerField(label="Boot disk GB", required=False)

    restart_job_on_worker_restart = forms.ChoiceField(label="Restart job on worker restart",
                                                      choices=RESTART_CHOICES, initial="auto")

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        teams = access.submit_teams(user).order_by("name")
        self.fields["team"].queryset = teams
        if len(teams) == 1 and not self.initial.get("team"):
            self.initial["team"] = teams[0].slug
        self.fields["image_uri"].widget.attrs["placeholder"] = settings.CP_DEFAULT_IMAGE
        self.checked: requests.CheckedRequest | None = None

    def clean_args(self) -> list[str]:
        try:
            return shlex.split(self.cleaned_data.get("args") or "")
        except ValueError as exc:  # an unclosed quote
            raise forms.ValidationError(f"cannot split the arguments: {exc}") from exc

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        # A field that did not parse would reach the composer as a default and produce
        # misleading errors elsewhere; the team alone is checked by requests.check itself.
        if any(name in self.errors for name in self.fields if name != "team"):
            return cleaned
        self.checked = requests.check(self.to_request(), cleaned.get("team"))
        for key, messages in self.checked.errors.items():
            field = self.field_for(key)
            if field == "team" and "team" in self.errors:
                continue  # "select a valid choice" already says it
            for message in messages:
                self.add_error(field, message if field or not key else f"{key}: {message}")
        return cleaned

    def field_for(self, key: str) -> str | None:
        """The form field an error key of requests.check belongs to; None: the whole form."""
        if not key:
            return None
        pool, dot, rest = key.partition(".")
        name = f"{pool}_{rest}" if dot and pool in ("chief", "workers") else key
        return name if name in self.fields else None

    def to_request(self) -> dict[str, Any]:
        data = self.cleaned_data
        request: dict[str, Any] = {
            "name": data.get("name") or "",
            "strategy": data.get("strategy") or "ddp",
            "spot": bool(data.get("spot")),
            "args": list(data.get("args") or []),
            "chief": self._chief(),
            "workers": self._workers() if data.get("workers_enabled") else None,
            "restart_job_on_worker_restart":
                _RESTART_VALUES.get(data.get("restart_job_on_worker_restart") or "auto"),
        }
        if data.get("image_uri"):
            request["image_uri"] = data["image_uri"].strip()
        return request

    def _chief(self) -> dict[str, Any]:
        data = self.cleaned_data
        accelerator = data.get("chief_accelerator_type") or NO_ACCELERATOR
        return {
            "machine_type": data.get("chief_machine_type") or "",
            "accelerator_type": "" if accelerator == NO_ACCELERATOR else accelerator,
            "accelerator_count": data.get("chief_accelerator_count") or 0,
            "boot_disk_type": data.get("chief_boot_disk_type") or "",
            "boot_disk_size_gb": data.get("chief_boot_disk_size_gb"),
        }

    def _workers(self) -> dict[str, Any]:
        # Blank fields are left out, so the composer gives the workers the chief's value.
        pool: dict[str, Any] = {"replica_count": self.cleaned_data.get("workers_replica_count")}
        for name in composer.POOL_FIELDS:
            value = self.cleaned_data.get(f"workers_{name}")
            if value not in (None, SAME_AS_CHIEF):
                pool[name] = value
        return pool


def initial_from_request(request: dict[str, Any], team_slug: str = "") -> dict[str, Any]:
    """The form's initial values for a stored job request: how a job is cloned."""
    chief = request.get("chief") or {}
    workers = request.get("workers")
    args = request.get("args")
    initial: dict[str, Any] = {
        "team": team_slug,
        "name": request.get("name") or "",
        "strategy": request.get("strategy") or "ddp",
        "spot": bool(request.get("spot")),
        "image_uri": request.get("image_uri") or "",
        "args": shlex.join(str(a) for a in (composer.DEFAULT_TRAINER_ARGS if args is None
                                            else args)),
        "chief_accelerator_type": chief.get("accelerator_type") or NO_ACCELERATOR,
        "workers_enabled": isinstance(workers, dict),
        "restart_job_on_worker_restart":
            _RESTART_NAMES.get(request.get("restart_job_on_worker_restart"), "auto"),
    }
    for name in composer.POOL_FIELDS:
        if name != "accelerator_type" and chief.get(name) not in (None, ""):
            initial[f"chief_{name}"] = chief[name]
    if isinstance(workers, dict):
        for name in (*composer.POOL_FIELDS, "replica_count"):
            if workers.get(name) not in (None, ""):
                initial[f"workers_{name}"] = workers[name]
    return initial


def clone_warnings(request: dict[str, Any]) -> list[str]:
    """What a stored request holds that the form cannot carry over (set through the API)."""
    warnings = [f"the original's {key} is not carried over by this form"
                for key in ("command", "env", "timeout_hours") if request.get(key)]
    region = request.get("region")
    if region and region != settings.VERTEX_REGION:
        warnings.append(f"the original ran in {region}; this form submits to "
                        f"{settings.VERTEX_REGION}")
    return warnings

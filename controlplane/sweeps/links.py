"""Links from a sweep and its trials to Google's pages: the tuning job in the Vertex console,
and each trial's CustomJob with Logs Explorer on its filter (formats: controlplane/runs/links.py,
VERTEX_FACTS.md A9). Against the emulator there are no Google pages: the sweep's own page, and
the trial's row on it, stand in."""

from __future__ import annotations

import re

from django.urls import reverse

from controlplane.runs import links
from controlplane.sweeps.models import Sweep, Trial
from vertexplan.logparse.filters import job_filter

_NAME = re.compile(r"projects/(?P<project>[^/\s]+)/locations/(?P<location>[^/\s]+)/"
                   r"(?:hyperparameterTuningJobs|customJobs)/(?P<id>[^/\s]+)")


def for_sweep(sweep: Sweep) -> list[links.Link]:
    page = reverse("sweep-detail", args=[sweep.pk])
    if links.emulated():
        return [links.Link("console", "Sweep page", page)]
    match = _NAME.fullmatch(sweep.vertex_name or "")
    if match is None:
        return []
    return [links.Link("console", "Vertex AI console",
                       links.console_url(match["project"], match["location"], match["id"]))]


def for_trial(sweep: Sweep, trial: Trial) -> list[links.Link]:
    if links.emulated():
        page = reverse("sweep-detail", args=[sweep.pk])
        return [links.Link("console", "Trial", f"{page}#trial-{trial.trial_id}")]
    match = _NAME.fullmatch(trial.custom_job or "")
    if match is None:
        return []
    project, region, job_id = match["project"], match["location"], match["id"]
    return [links.Link("console", "Vertex AI console",
                       links.console_url(project, region, job_id)),
            links.Link("logs", "Logs Explorer", links.logs_url(project, job_filter(job_id)))]

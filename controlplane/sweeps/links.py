"""Links from a sweep and its trials to Google's pages: the tuning job in the Vertex console,
and for each trial's CustomJob the same set a job gets (controlplane/runs/links.py: the console,
Logs Explorer on its filter, Error Reporting, Cloud Monitoring of its nodes' GPUs, TensorBoard
and Vertex Experiments when the trial job spec names them; formats in VERTEX_FACTS.md A9).
Against the emulator there are no Google pages: the sweep's own page stands in, and a trial
followed as a job of its own (Trial.job, where the trial's logs and loss curve are kept) gets
that job's page and its parts.
"""

from __future__ import annotations

import re

from django.urls import reverse

from controlplane.runs import links
from controlplane.sweeps.models import Sweep, Trial

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
        # The trial's own job page once the trial is followed as a job; until then its row.
        job_pk = getattr(trial, "job_id", None)
        if isinstance(job_pk, int):
            return links.local_job_links(job_pk)
        page = reverse("sweep-detail", args=[sweep.pk])
        return [links.Link("console", "Trial", f"{page}#trial-{trial.trial_id}")]
    match = _NAME.fullmatch(trial.custom_job or "")
    if match is None:
        return []
    # Every trial's CustomJob is made from the one trial job spec (its TensorBoard, experiment).
    return links.spec_links(match["project"], match["location"], match["id"],
                            (sweep.tuning_job or {}).get("trialJobSpec"))

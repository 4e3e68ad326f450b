"""Goodput on the pages: the job page's "Where the time went" bar (a panel registered in
apps.py) and the team costs page's month, with its top causes of badput."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from controlplane.costs import goodput, spend
from controlplane.runs.models import Job
from controlplane.teams.models import Team


def goodput_panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    report = goodput.job_report(job)
    billed = report["billed_accelerator_seconds"]
    return {"goodput": report, "goodput_bar": goodput.bar(report["categories"], billed),
            "goodput_unbilled": goodput.not_billed(report["categories"])}


def team_goodput(team: Team) -> dict[str, Any]:
    """This month's goodput of the team's jobs (as its spend counts them)."""
    report = goodput.team_month(team, spend.month_start())
    billed = report["billed_accelerator_seconds"]
    return {**report, "bar": goodput.bar(report["categories"], billed),
            "unbilled": goodput.not_billed(report["categories"]),
            "idle": [{**r, "hours": r["accelerator_seconds"] / 3600}
                     for r in report["idle_resources"] if r["idle_seconds"] > 0],
            "top": [{**c, "pct": round(100 * c["accelerator_seconds"] / billed, 1),
                     "hours": c["accelerator_seconds"] / 3600,
                     "label": c["name"].replace("_", " ")}
                    for c in report["top_badput"]] if billed > 0 else []}

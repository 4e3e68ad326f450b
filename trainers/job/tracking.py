"""Experiment tracking beside the control plane's own charts: Weights & Biases, when the job
carries a team's W&B settings in its environment.

The control plane sets WANDB_ENTITY and WANDB_PROJECT (and WANDB_API_KEY, or WANDB_MODE=offline
where runs are synced later with `wandb sync <run dir>`). Without WANDB_PROJECT nothing here
imports wandb. Only rank 0 logs: the step figures it prints are already the mean over the
data-parallel ranks. Once the run exists the trainer prints a `tracking` event with the run's
URL, which the job page links.

Tracking never stops training: a W&B failure at start is printed as a warning event and the run
goes on untracked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import quote

from contract import events as contract_events
from trainers import events

PROVIDER = "wandb"
DEFAULT_APP_URL = "https://wandb.ai"
# W&B entity and project names: letters, digits, '-', '_' and '.'; anything else is not
# put into a URL.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


class Tracker(Protocol):
    def log(self, step: int, metrics: Mapping[str, float | None]) -> None: ...

    def finish(self, exit_code: int = 0) -> None: ...


class NoTracker:
    """No W&B settings, or not rank 0."""

    def log(self, step: int, metrics: Mapping[str, float | None]) -> None:
        return None

    def finish(self, exit_code: int = 0) -> None:
        return None


class WandbTracker:
    def __init__(self, run: Any) -> None:
        self.run = run

    def log(self, step: int, metrics: Mapping[str, float | None]) -> None:
        # W&B drops a step lower than one it has seen; a resumed attempt is a run of its own.
        self.run.log({k: v for k, v in metrics.items() if v is not None}, step=step)

    def finish(self, exit_code: int = 0) -> None:
        self.run.finish(exit_code=exit_code)


def configured(environ: Mapping[str, str]) -> bool:
    return bool(environ.get("WANDB_PROJECT"))


def app_url(environ: Mapping[str, str]) -> str:
    """The W&B web app runs are seen in: wandb.ai, or a dedicated server's address
    (WANDB_BASE_URL names its API host, api.wandb.ai for wandb.ai)."""
    base = (environ.get("WANDB_BASE_URL") or "").rstrip("/")
    if not base.startswith(("https://", "http://")):
        return DEFAULT_APP_URL
    return base.replace("://api.", "://", 1)


def run_url(environ: Mapping[str, str], entity: str, project: str, run_id: str) -> str:
    """Where a run is (or, offline, will be once synced) in the W&B app; "" when the names
    cannot make one."""
    if not (_NAME.fullmatch(entity or "") and _NAME.fullmatch(project or "") and run_id):
        return ""
    return (f"{app_url(environ)}/{quote(entity, safe='')}/{quote(project, safe='')}/runs/"
            f"{quote(run_id, safe='')}")


def start(config: dict[str, Any], rank: int, environ: Mapping[str, str] | None = None
          ) -> Tracker:
    """A tracker for this process: W&B on rank 0 when the job carries its settings."""
    environ = os.environ if environ is None else environ
    if rank != 0 or not configured(environ):
        return NoTracker()
    try:
        import wandb

        run = wandb.init(
            entity=environ.get("WANDB_ENTITY") or None,
            project=environ["WANDB_PROJECT"],
            # The restarts and attempts of one Vertex job are grouped together.
            group=environ.get("CLOUD_ML_JOB_ID") or None,
            config=config,
            # Leave stdout to the trainer: its JSON lines are the control plane's events.
            settings=wandb.Settings(console="off", silent=True, x_disable_stats=True,
                                    x_save_requirements=False, disable_git=True),
        )
    except Exception as exc:  # W&B unreachable or refusing the key: train untracked
        events.emit(contract_events.TRACKING_FAILED, f"W&B tracking is off for this run: {exc}",
                    severity="WARNING", provider=PROVIDER)
        return NoTracker()
    offline = run.settings.mode == "offline"
    entity = environ.get("WANDB_ENTITY", "") if offline else run.entity
    # Offline, W&B has no URL yet: the one the run gets once `wandb sync` uploads it.
    url = run_url(environ, entity, run.project, run.id) if offline else str(run.url or "")
    events.tracking(PROVIDER, url, run_id=run.id, run_dir=os.path.dirname(run.dir),
                    offline=offline)
    return WandbTracker(run)

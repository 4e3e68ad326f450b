"""The emulator's settings, filled from the command line (see __main__.py)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from localvertex.auth import TOKEN_FILE
from localvertex.replicas.sandbox import Identity, identity

# The repository root: replicas run from here by default so `python -m trainers.train` resolves.
REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    workdir: Path = REPO_ROOT
    host: str = "127.0.0.1"
    port: int = 8470
    # The admin service (preemptions, faults, quotas, stockouts) listens apart, on the same host;
    # 0 picks a free port (`python -m localvertex` defaults to 8471).
    admin_port: int = 0
    # Cloud Storage's JSON API over the buckets' folders (localvertex/storage/), on the same
    # host; 0 picks a free port (the stacks give 8472). Replicas get
    # STORAGE_EMULATOR_HOST for it (their job's door, storage/doors.py).
    storage_port: int = 0
    # PredictionService's REST over HTTPS, where dedicated endpoints take Google's SDK's
    # raw_predict (serving/rest.py), on the same host; 0 picks a free port.
    https_port: int = 0
    # The bearer token every call must carry (auth.py): this file's, made on first start; None
    # is <data dir>/auth_token.
    token_file: Path | None = None
    # Cloud Logging allows 60 entries.list calls per minute per project; 0 turns the limit off.
    logging_quota_per_minute: int = 60
    # Vertex AI allows 600 resource management (CRUD) requests per minute per region and
    # project (quotas/request_rate.py); 0 turns the limit off.
    crud_quota_per_minute: int = 600
    # WriteLogEntries for `ml_job` resources (a training job's log): only the emulator's own
    # capture of replicas' output writes those, as on Vertex only its service agent does; on
    # for tests that stand in for that agent (cloudlogging/service.py).
    accept_job_log_writes: bool = False
    # How long a job stays QUEUED and PENDING, so clients can observe every state.
    queue_delay_s: float = 0.3
    pending_delay_s: float = 0.3
    # Vertex restarts a failing worker up to 5 times before the job fails.
    max_restarts: int = 5
    # Vertex retries a preempted SPOT job up to 6 times.
    max_preemptions: int = 6
    # Time between SIGTERM and SIGKILL when a job is cancelled or finishes while others still run.
    cancel_grace_s: float = 5.0
    # The default notice a preempted spot VM gets.
    preempt_grace_s: float = 30.0
    max_workers: int = 32
    # Who replicas run as (localvertex/replicas/sandbox.py): None = the default (a dedicated
    # user when the emulator is root), "" = the emulator's own user.
    replica_user: str | None = None

    @cached_property
    def replica_identity(self) -> Identity | None:
        return identity(self.replica_user)
    # Accelerator quotas, as `--quota` gives them: METRIC[@REGION]=N (capacity.parse_limit).
    quotas: tuple[str, ...] = ()
    # Synthetic mode (jobs/synthetic_replicas.py): a CustomJob's replicas are timers on one
    # shared thread that print the trainers' contract lines, not processes: for scale tests.
    # Off by default. The seed draws the schedules jobs do not give themselves; step_s is the
    # seconds between a chief's step lines unless its job says (jobs/synthetic_schedule.py).
    synthetic: bool = False
    synthetic_seed: int = 0
    synthetic_step_s: float = 1.0
    # The machine a job must fit before its replicas start (jobs/machine_fit.py): its memory
    # (None = the physical memory) and the headroom kept for the kernel and the stack (None =
    # a tenth of it, at least 2 GB), both in GiB.
    machine_memory_gib: float | None = None
    memory_headroom_gib: float | None = None

    @property
    def db_path(self) -> Path:
        return self.data_dir / "localvertex.sqlite3"

    @property
    def token_path(self) -> Path:
        return self.token_file or self.data_dir / TOKEN_FILE

    @property
    def gcs_dir(self) -> Path:
        """The buckets' folders (replicas/storage.py's mapping of gs://)."""
        return self.data_dir / "gcs"

    @property
    def jobs_dir(self) -> Path:
        return self.data_dir / "jobs"

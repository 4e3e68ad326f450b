"""python -m localvertex: run the local Vertex AI emulator until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
from pathlib import Path

# Before anything loads gRPC (localvertex.server does): see the module.
import localvertex.replicas.fork_safety  # noqa: F401
from localvertex.auth import TokenError
from localvertex.config import REPO_ROOT, Settings
from localvertex.jobs.synthetic_schedule import STEP_S_RANGE
from localvertex.quotas.capacity import parse_limit
from localvertex.quotas.request_rate import DEFAULT_PER_MINUTE as DEFAULT_CRUD_PER_MINUTE
from localvertex.replicas.sandbox import SandboxError
from localvertex.server import Emulator

log = logging.getLogger("localvertex")

ENV_MACHINE_MEMORY = "LOCALVERTEX_MACHINE_MEMORY_GB"
ENV_MEMORY_HEADROOM = "LOCALVERTEX_MEMORY_HEADROOM_GB"


def _quota(text: str) -> str:
    try:
        parse_limit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


def _not_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from exc
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative: give 0 (no limit) or more")
    return value


def _step_seconds(text: str) -> float:
    low, high = STEP_S_RANGE
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from {low:g} to "
                                         f"{high:g}")
    return value


def _gigabytes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value < 1e6:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of GiB from 0 to 1e6")
    return value


def _env_gigabytes(name: str) -> float | None:
    """The default of a memory flag: its variable, for a stack that starts the emulator with
    an environment of its own; a bad value is refused as the flag's would be."""
    text = os.environ.get(name)
    if not text:
        return None
    try:
        return _gigabytes(text)
    except argparse.ArgumentTypeError as exc:
        raise SystemExit(f"{name}: {exc}") from None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m localvertex",
        description="A local emulator of Vertex AI's training API and Cloud Logging (gRPC).",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8470, help="0 picks a free port")
    parser.add_argument("--admin-port", type=int, default=8471,
                        help="the admin service's own port (0 picks a free one)")
    parser.add_argument("--storage-port", type=int, default=0,
                        help="Cloud Storage's JSON API over DATA_DIR/gcs (default 0: a free "
                        "port, said in the log; the stacks give 8472); give the control plane "
                        "STORAGE_EMULATOR_HOST=http://HOST:PORT")
    parser.add_argument("--https-port", type=int, default=0,
                        help="dedicated endpoints' REST predictions over HTTPS, where Google's "
                        "SDK sends raw_predict (default 0: a free port, said in the log; "
                        "its certificate is DATA_DIR/https_cert.pem)")
    parser.add_argument(
        "--token-file", type=Path, default=None,
        help="the bearer token every call must carry, made here (owner-only) if missing "
        "(default: DATA_DIR/auth_token); give the control plane the same file "
        "(VERTEX_EMULATOR_TOKEN_FILE)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        required=True,
        help="SQLite state, pid files and the local stand-in for GCS (gcs/)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=REPO_ROOT,
        help="replicas' working directory, prepended to PYTHONPATH",
    )
    parser.add_argument(
        "--logging-quota-per-minute",
        type=int,
        default=60,
        help="ListLogEntries calls per project per minute (0: unlimited)",
    )
    parser.add_argument(
        "--crud-quota-per-minute",
        type=_not_negative,
        default=DEFAULT_CRUD_PER_MINUTE,
        help="Vertex AI calls (resource management: create, get, list, cancel, delete) per "
        f"project and region per minute, as Vertex's quota (default {DEFAULT_CRUD_PER_MINUTE};"
        " 0: unlimited)",
    )
    parser.add_argument(
        "--accept-job-log-writes",
        action="store_true",
        help="accept WriteLogEntries for ml_job resources (tests standing in for Vertex's log "
        "agent); by default refused, so no replica can write entries for any job",
    )
    parser.add_argument("--queue-delay", type=float, default=0.3, help="seconds in QUEUED")
    parser.add_argument("--pending-delay", type=float, default=0.3, help="seconds in PENDING")
    parser.add_argument(
        "--max-restarts",
        type=int,
        default=5,
        help="restarts of a failing replica before the job fails",
    )
    parser.add_argument(
        "--max-preemptions",
        type=int,
        default=6,
        help="spot preemptions survived before the job fails",
    )
    parser.add_argument(
        "--cancel-grace",
        type=float,
        default=5.0,
        help="seconds from SIGTERM to SIGKILL when stopping replicas",
    )
    parser.add_argument(
        "--preempt-grace", type=float, default=30.0, help="default notice a preempted replica gets"
    )
    parser.add_argument(
        "--replica-user", default=None,
        help="run replicas as this user (default when root: localvertex-replica, created if "
             "missing; '' runs them as the emulator's user)")
    parser.add_argument(
        "--quota",
        action="append",
        default=[],
        metavar="METRIC[@REGION]=N",
        type=_quota,
        help="an accelerator quota, e.g. custom_model_training_nvidia_t4_gpus@us-central1=4 "
        "(repeatable; unset metrics are unlimited)",
    )
    parser.add_argument(
        "--synthetic", action="store_true",
        help="synthetic mode: replicas are timers that print the trainers' lines on a "
        "schedule, not processes (scale tests; localvertex/jobs/synthetic_schedule.py)")
    parser.add_argument("--synthetic-seed", type=int, default=0,
                        help="seeds the schedules of synthetic jobs that give none")
    parser.add_argument("--synthetic-step-s", type=_step_seconds, default=1.0,
                        help="seconds between a synthetic chief's step lines (unless its job "
                        "says otherwise)")
    parser.add_argument(
        "--machine-memory-gb", type=_gigabytes, default=_env_gigabytes(ENV_MACHINE_MEMORY),
        help="the memory a job's replicas must fit in before they start, in GiB (default: "
        f"${ENV_MACHINE_MEMORY}, else this machine's physical memory)")
    parser.add_argument(
        "--memory-headroom-gb", type=_gigabytes, default=_env_gigabytes(ENV_MEMORY_HEADROOM),
        help="memory kept for the kernel and the stack, in GiB (default: "
        f"${ENV_MEMORY_HEADROOM}, else a tenth of the machine, at least 2)")
    parser.add_argument("--log-level", default="INFO")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    settings = Settings(
        data_dir=args.data_dir.absolute(),
        workdir=args.workdir.absolute(),
        host=args.host,
        port=args.port,
        admin_port=args.admin_port,
        storage_port=args.storage_port,
        https_port=args.https_port,
        token_file=args.token_file.absolute() if args.token_file else None,
        logging_quota_per_minute=args.logging_quota_per_minute,
        crud_quota_per_minute=args.crud_quota_per_minute,
        accept_job_log_writes=args.accept_job_log_writes,
        queue_delay_s=args.queue_delay,
        pending_delay_s=args.pending_delay,
        max_restarts=args.max_restarts,
        max_preemptions=args.max_preemptions,
        cancel_grace_s=args.cancel_grace,
        preempt_grace_s=args.preempt_grace,
        replica_user=args.replica_user,
        quotas=tuple(args.quota),
        synthetic=args.synthetic,
        synthetic_seed=args.synthetic_seed,
        synthetic_step_s=args.synthetic_step_s,
        machine_memory_gib=args.machine_memory_gb,
        memory_headroom_gib=args.memory_headroom_gb,
    )
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        emulator = Emulator(settings)
    except TokenError as exc:
        log.error("auth: refusing to start: %s", exc)
        raise SystemExit(2) from exc
    except SandboxError as exc:
        # Said where devstack shows it, and the emulator does not start: a host that cannot
        # sandbox replicas never runs them as root unasked.
        log.error("sandbox: refusing to start: %s", exc)
        raise SystemExit(2) from exc
    emulator.start()
    try:
        stop.wait()
    finally:
        emulator.stop()


if __name__ == "__main__":
    main()

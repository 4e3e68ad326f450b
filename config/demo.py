"""`make demo`: the whole product on one machine, no servers installed by hand.

SQLite for the database; Redis at REDIS_URL when one answers, otherwise an embedded broker in a
SQLite file (kombu's SQLAlchemy transport); the local Vertex emulator; a Celery worker and beat;
the web server; a demo user and team; and a sample 2-replica DDP job on spot VMs that trains,
is preempted once (as Compute Engine reclaims a spot VM: SIGTERM, 30 s, SIGKILL), resumes from
its checkpoint and finishes. `--no-preemption` leaves it alone.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from config.devstack import ROOT, Stack, StackConfig, redis_answers
from localvertex.admin.client import AdminClient, AdminError

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
QUEUE_PREFIX = "cp-demo"  # the Celery queue: "<prefix>-default" (config/settings.py)
# What the demo seeded (user, token, sample job), kept for its next start: a restart shows the
# same job with the same token instead of submitting another and revoking the one printed.
SEEDED = "seeded.json"
# A read of the job that failed: refused, slow, cut off or not JSON. The watcher says so and
# asks again; the stack keeps running.
API_TROUBLE = (OSError, ValueError, http.client.HTTPException)


def choose_broker(var_dir: Path) -> tuple[str, str]:
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    if redis_answers(redis_url):
        return redis_url, f"Redis at {redis_url}"
    url = f"sqla+sqlite:///{var_dir / 'broker.sqlite3'}"
    return url, f"no Redis answered at {redis_url}: using an embedded broker in {url}"


def prepare_embedded_broker(url: str, queue: str) -> None:
    """kombu's SQL transport makes a queue's row on first use, and the worker, beat and web
    server starting together may each make it (UNIQUE constraint failed: kombu_queue.name,
    and one of them exits): the row is made here once, before any of them starts."""
    from kombu import Connection

    with Connection(url) as connection:
        connection.SimpleQueue(queue).close()


def job_state(stack: Stack, token: str, job_id: int, timeout_s: float = 10) -> dict:
    request = urllib.request.Request(
        f"{stack.web_url}/api/v1/jobs/{job_id}/", headers={"Authorization": f"Token {token}"}
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        state = json.load(response)
    if not isinstance(state, dict) or "state" not in state:
        raise ValueError("the answer is not a job")
    return state


def trouble(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class Watcher:
    """Reads the sample job; a failed read is reported (once until it changes) and None."""

    def __init__(self, stack: Stack, token: str, job_id: int, timeout_s: float) -> None:
        self.stack, self.token, self.job_id, self.timeout_s = stack, token, job_id, timeout_s
        self.said = ""
        self.failures = 0

    def read(self) -> dict | None:
        try:
            state = job_state(self.stack, self.token, self.job_id, self.timeout_s)
        except API_TROUBLE as exc:
            self.failures += 1
            said = f"the API did not answer the watcher ({trouble(exc)}): asking again"
            if said != self.said:
                print(said, file=sys.stderr, flush=True)
                self.said = said
            return None
        self.said = ""
        return state


def arm_preemption(stack: Stack, job: dict, at_step: int) -> bool:
    """Arm a spot preemption of the job's CustomJob for when its trainer reports AT_STEP: the
    emulator watches the replicas' own output, so however fast this machine trains, the
    preemption lands mid-run. False if the CustomJob does not exist yet."""
    current = [a for a in job["attempts"] if a["number"] == job["attempt"]]
    if not current or not current[0]["vertex_name"]:
        return False
    with AdminClient(stack.emulator_admin_addr, stack.emulator_token) as client:
        try:
            client.preempt(current[0]["vertex_name"], grace_s=30, at_step=at_step)
        except AdminError:
            return False  # between states: try again on the next look
    return True


def finished_well(watcher: Watcher, args: argparse.Namespace) -> int:
    """0 when the sample job did what the demo shows: SUCCEEDED, every step followed in from
    its logs, and (unless --no-preemption) a preemption it came back from. The last lines may
    land a moment after the state flips, as Cloud Logging lags."""
    job_id = watcher.job_id
    deadline = time.monotonic() + 30
    while True:
        state = watcher.read()
        if state is None:
            if time.monotonic() > deadline:
                print("the sample job's end could not be read", file=sys.stderr)
                return 1
            time.sleep(args.poll)
            continue
        problems = []
        if state["state"] != "SUCCEEDED":
            problems.append(f"it ended {state['state']}: {state['error_message']}")
        if (state["last_step"] or 0) < args.steps:
            problems.append(f"its logs show step {state['last_step']} of {args.steps}")
        if not args.no_preemption and state["restarts"] < 1:
            problems.append("no preemption was recorded")
        if not problems:
            print(
                f"sample job {job_id}: SUCCEEDED after {state['last_step']} steps and "
                f"{state['restarts']} restart(s)",
                flush=True,
            )
            return 0
        if state["state"] != "SUCCEEDED" or time.monotonic() > deadline:
            print(
                "the sample job did not finish as the demo expects: " + "; ".join(problems),
                file=sys.stderr,
            )
            return 1
        time.sleep(min(args.poll, 1))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--var-dir", type=Path, default=ROOT / "var" / "demo")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--emulator-port", type=int, default=8470)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument(
        "--exit-when-done",
        action="store_true",
        help="stop when the sample job ends; exit 0 only if it SUCCEEDED",
    )
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument(
        "--no-preemption", action="store_true", help="do not preempt the sample spot job"
    )
    parser.add_argument("--poll", type=float, default=2.0,
                        help="seconds between the watcher's reads of the sample job")
    parser.add_argument("--api-timeout", type=float, default=10.0,
                        help="how long the watcher waits for one answer before asking again")
    parser.add_argument("--debug", action="store_true",
                        help="run Django with DEBUG on (error pages show settings and code)")
    return parser.parse_args(argv)


def secret_key_file(var_dir: Path) -> Path:
    """The demo's SECRET_KEY, made once and kept in its var folder, readable by this user only:
    the W&B keys and Slack webhooks it stores are encrypted with a key derived from it, so it
    must outlive a restart, and a key written in the code would be everybody's."""
    path = var_dir / "secret_key"
    if not path.exists():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(secrets.token_urlsafe(50))
    os.chmod(path, 0o600)
    return path


def demo_stack(args: argparse.Namespace) -> Stack:
    var_dir = args.var_dir.resolve()
    var_dir.mkdir(parents=True, exist_ok=True)
    broker, said = choose_broker(var_dir)
    print(f"broker: {said}", flush=True)
    if broker.startswith("sqla+"):
        prepare_embedded_broker(broker, f"{QUEUE_PREFIX}-default")
    return Stack(
        StackConfig(
            var_dir=var_dir,
            database_url=f"sqlite:///{var_dir / 'controlplane.sqlite3'}",
            broker_url=broker,
            web_port=args.port,
            emulator_port=args.emulator_port,
            queue_prefix=QUEUE_PREFIX,
            # DEBUG off unless asked for, as production runs; plain HTTP on the loopback, so
            # no redirect to HTTPS and cookies that are not HTTPS-only.
            extra_env={"DEBUG": "true" if args.debug else "false",
                       "SECRET_KEY_FILE": str(secret_key_file(var_dir)),
                       "SECURE_SSL_REDIRECT": "false", "SECURE_COOKIES": "false"},
        )
    )


def announce(stack: Stack, seeded: dict) -> None:
    print(
        f"""
The control plane is running.
  open      {stack.web_url}/jobs/{seeded["job"]}/   (the sample job)
  log in    user {seeded["username"]}, password {seeded["password"]}
  API       curl -H 'Authorization: Token {seeded["token"]}' {stack.web_url}/api/v1/jobs/
  logs      {stack.log_dir}/
  storage   STORAGE_EMULATOR_HOST={stack.storage_url}   (the local Cloud Storage, gs://)
  {stack.sandbox_line()}
Press Ctrl-C to stop.
""",
        flush=True,
    )


def watch(stack: Stack, seeded: dict, args: argparse.Namespace) -> int:
    """Follow the sample job, arming its preemption once its CustomJob exists; with
    --exit-when-done, return how it ended, else run until Ctrl-C. An answer that does not come
    (refused, slow, cut off) is said and asked again: only a stopped process of the stack, or
    --timeout, ends the watch."""
    job_id = seeded["job"]
    watcher = Watcher(stack, seeded["token"], job_id, args.api_timeout)
    started = time.monotonic()
    last = ""
    # A third of the way in, so the checkpoint it resumes from is worth having.
    preempt_at = None if args.no_preemption else max(1, args.steps // 3)
    while True:
        if stack.dead():
            print(f"a process stopped: {stack.dead()}", file=sys.stderr)
            for name in stack.dead():
                print(stack.log_tail(name), file=sys.stderr)
            return 1
        if args.exit_when_done and time.monotonic() - started > args.timeout:
            print("the sample job did not finish in time", file=sys.stderr)
            return 1
        state = watcher.read()
        if state is None:
            time.sleep(args.poll)
            continue
        if (
            preempt_at is not None
            and state["state"] not in TERMINAL
            and arm_preemption(stack, state, preempt_at)
        ):
            print(
                f"armed a spot preemption for step {preempt_at}: the replicas get SIGTERM "
                "and 30 s, the trainer saves a checkpoint, the emulator restarts them as "
                "Vertex does; watch the job page's timeline",
                flush=True,
            )
            preempt_at = None
        line = (
            f"sample job {job_id}: {state['state']} step {state['last_step']} "
            f"restarts {state['restarts']}"
        )
        if line != last:
            print(f"[{time.monotonic() - started:6.1f} s] {line}", flush=True)
            last = line
        if args.exit_when_done and state["state"] in TERMINAL:
            return finished_well(watcher, args)
        time.sleep(min(0.5, args.poll) if preempt_at is not None else args.poll)


def seed(stack: Stack, args: argparse.Namespace) -> dict[str, Any]:
    """The demo's user, token and sample job: those of its last start when the token still
    reads the job (and the job trains the steps asked), else new ones, kept for the next."""
    record = stack.config.var_dir / SEEDED
    try:
        kept = json.loads(record.read_text())
    except (OSError, ValueError):
        kept = None
    if isinstance(kept, dict) and kept.get("steps") == args.steps and kept.get("job"):
        try:
            job_state(stack, kept["token"], kept["job"], args.api_timeout)
        except API_TROUBLE as exc:
            print(f"the last start's sample job cannot be read ({trouble(exc)}): "
                  "seeding anew", flush=True)
        else:
            print(f"the sample job and token of the last start: job {kept['job']}", flush=True)
            return kept
    seeded = json.loads(
        stack.manage("seed_demo", "--sample-job", "--steps", str(args.steps), capture=True))
    seeded["steps"] = args.steps
    # The token is a secret: readable by this user only, as ~/.config/vcp keeps it.
    descriptor = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)
    with os.fdopen(descriptor, "w") as out:
        json.dump(seeded, out)
    return seeded


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stack = demo_stack(args)
    try:
        stack.start()
        seeded = seed(stack, args)
        announce(stack, seeded)
        return watch(stack, seeded, args)
    except KeyboardInterrupt:
        return 0
    finally:
        print("stopping...", flush=True)
        stack.stop()


if __name__ == "__main__":
    sys.exit(main())

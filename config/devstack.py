"""Start and stop the whole stack as local processes: emulator, worker, beat, web server.

`make demo` and the integration tests both run the stack through this module, with the same
commands docker-compose.yml uses, so what the tests exercise is what a newcomer runs.
Imports nothing from Django: it only launches processes and waits for them.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from localvertex import auth

ROOT = Path(__file__).resolve().parent.parent


def redis_answers(url: str, timeout_s: float = 0.5) -> bool:
    """Whether a Redis server answers PING at url (the demo falls back to a file broker)."""
    try:
        import redis

        return bool(redis.Redis.from_url(url, socket_connect_timeout=timeout_s,
                                         socket_timeout=timeout_s).ping())
    except Exception:  # any failure means "no usable Redis here"
        return False


def wait_for_port(port: int, timeout_s: float, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening on {port}")
        with socket.socket() as sock:
            sock.settimeout(0.2)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout_s:.0f} s")


@dataclass
class StackConfig:
    var_dir: Path
    database_url: str
    broker_url: str
    web_port: int = 8000
    emulator_port: int = 8470
    emulator_admin_port: int = 8471
    # The emulator's Cloud Storage (localvertex/storage/): every process of the stack gets
    # STORAGE_EMULATOR_HOST for it, so Google's storage client and gcsfs reach it unasked.
    storage_port: int = 8472
    queue_prefix: str = "cp"
    reconcile_interval_s: float = 2.0
    follow_interval_s: float = 2.0
    # Clusters, sweeps, serving and the Slack outbox (None: as reconcile_interval_s).
    resource_reconcile_interval_s: float | None = None
    worker_concurrency: int = 2
    # The database is already migrated and the static files collected where CP_STATIC_ROOT
    # says (the tests prepare both once for all their stacks): start skips prepare().
    prepared: bool = False
    extra_env: dict[str, str] = field(default_factory=dict)
    # The emulator's resource management requests per minute per region: None leaves its
    # default (Vertex's, 600); 0 turns the limit off (the test stacks).
    crud_quota_per_minute: int | None = None



class ProcessGuard:
    """config/stack_guard.py beside processes started in sessions of their own: when the process
    that started them dies without stopping them, the guard (its child) stops their groups."""

    def __init__(self, record: Path) -> None:
        self.record = record
        self.proc: subprocess.Popen | None = None

    def watch(self, procs: list[subprocess.Popen]) -> None:
        """Guard exactly these processes' groups from now on (the guard starts with the first)."""
        self.record.parent.mkdir(parents=True, exist_ok=True)
        partial = self.record.with_suffix(".partial")
        partial.write_text("".join(f"{p.pid}\n" for p in procs))
        partial.replace(self.record)
        if procs and (self.proc is None or self.proc.poll() is not None):
            # Run by its path, not as config.stack_guard: the config package's face imports the
            # Celery app, and the guard needs nothing but the standard library.
            self.proc = subprocess.Popen(
                [sys.executable, str(ROOT / "config" / "stack_guard.py"), str(self.record)],
                cwd=ROOT)

    def close(self) -> None:
        """The owner stopped its processes itself: the guard goes."""
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


class Stack:
    def __init__(self, config: StackConfig) -> None:
        self.config = config
        self.procs: dict[str, subprocess.Popen] = {}
        self.log_dir = config.var_dir / "logs"
        # config/stack_guard.py: stops the processes below if this one dies without stop().
        self.guard = ProcessGuard(config.var_dir / "process-groups")

    @property
    def guard_record(self) -> Path:
        return self.guard.record

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.config.web_port}"

    @property
    def emulator_data_dir(self) -> Path:
        return self.config.var_dir / "localvertex"

    @property
    def emulator_token_file(self) -> Path:
        """The emulator's bearer token (localvertex/auth.py), kept in the var folder, readable by
        this user only: the emulator and the control plane read it, replicas never see it."""
        return self.config.var_dir / "emulator_token"

    @property
    def emulator_token(self) -> str:
        return auth.load_or_create(self.emulator_token_file)

    @property
    def storage_url(self) -> str:
        """The emulator's Cloud Storage, as STORAGE_EMULATOR_HOST names it."""
        return f"http://127.0.0.1:{self.config.storage_port}"

    @property
    def emulator_admin_addr(self) -> str:
        return f"127.0.0.1:{self.config.emulator_admin_port}"

    def env(self) -> dict[str, str]:
        c = self.config
        # Made before any process that reads it starts (manage.py too: settings read it).
        c.var_dir.mkdir(parents=True, exist_ok=True)
        auth.load_or_create(self.emulator_token_file)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": c.database_url,
            "CELERY_BROKER_URL": c.broker_url,
            "CELERY_QUEUE_PREFIX": c.queue_prefix,
            "VERTEX_EMULATOR_ADDR": f"127.0.0.1:{c.emulator_port}",
            "VERTEX_EMULATOR_TOKEN_FILE": str(self.emulator_token_file),
            "CP_VAR_DIR": str(c.var_dir),
            "CP_LOCAL_GCS_ROOT": str(self.emulator_data_dir / "gcs"),
            "STORAGE_EMULATOR_HOST": self.storage_url,
            "CP_RECONCILE_INTERVAL_S": str(c.reconcile_interval_s),
            "CP_FOLLOW_INTERVAL_S": str(c.follow_interval_s),
            "CP_RESOURCE_RECONCILE_INTERVAL_S": str(c.resource_reconcile_interval_s
                                                    or c.reconcile_interval_s),
            "CP_BASE_URL": self.web_url,
            "PYTHONUNBUFFERED": "1",
            **c.extra_env,
        }
        env.setdefault("DEBUG", "true")
        return env

    def commands(self) -> dict[str, list[str]]:
        c, py = self.config, sys.executable
        return {
            "emulator": [py, "-m", "localvertex", "--host", "127.0.0.1",
                         "--port", str(c.emulator_port), "--data-dir", str(self.emulator_data_dir),
                         "--admin-port", str(c.emulator_admin_port),
                         "--storage-port", str(c.storage_port),
                         "--token-file", str(self.emulator_token_file),
                         *(() if c.crud_quota_per_minute is None else
                           ("--crud-quota-per-minute", str(c.crud_quota_per_minute)))],
            "worker": [py, "-m", "celery", "-A", "config", "worker", "--loglevel", "INFO",
                       "--concurrency", str(c.worker_concurrency), "--without-mingle",
                       "--without-gossip", "--hostname", f"worker-{c.queue_prefix}@%h"],
            "beat": [py, "-m", "celery", "-A", "config", "beat", "--loglevel", "INFO",
                     "--schedule", str(c.var_dir / "celerybeat-schedule")],
            # ASGI (gunicorn's own asyncio worker): a job page's open event stream waits on
            # Redis in the event loop instead of holding a thread (config/asgi.py).
            "web": [py, "-m", "gunicorn", "config.asgi", "--bind",
                    f"127.0.0.1:{c.web_port}", "--workers", "2", "--worker-class", "asgi",
                    "--asgi-lifespan", "off", "--keep-alive", "5", "--access-logfile", "-"],
        }

    def manage(self, *args: str, capture: bool = False) -> str:
        result = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=self.env(),
            check=True, text=True, stdout=subprocess.PIPE if capture else None,
        )
        return result.stdout or ""

    def start_process(self, name: str) -> subprocess.Popen:
        # The logs hold what the processes print (tokens in a traceback, a job's environment):
        # readable by this user only.
        self.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.log_dir, 0o700)
        descriptor = os.open(self.log_dir / f"{name}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                             0o600)
        os.fchmod(descriptor, 0o600)
        log = os.fdopen(descriptor, "ab")  # lives with the process
        proc = subprocess.Popen(self.commands()[name], cwd=ROOT, env=self.env(), stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        self.procs[name] = proc
        self._record_groups()
        return proc

    def _record_groups(self) -> None:
        self.guard.watch(list(self.procs.values()))

    def prepare(self) -> None:
        """The database migrated and the static files collected, as a stack serves them."""
        self.config.var_dir.mkdir(parents=True, exist_ok=True)
        self.manage("migrate", "--noinput", "-v", "0")
        # Hashed, compressed static files cached for a year (controlplane/core/storage.py).
        self.manage("collectstatic", "--noinput", "-v", "0")

    def start(self, *, timeout_s: float = 60) -> None:
        self.config.var_dir.mkdir(parents=True, exist_ok=True)
        if not self.config.prepared:
            self.prepare()
        emulator = self.start_process("emulator")
        try:
            wait_for_port(self.config.emulator_port, timeout_s, emulator)
        except (RuntimeError, TimeoutError) as exc:
            # A host where replicas cannot be sandboxed stops the emulator: say why here.
            raise RuntimeError(f"the emulator did not start ({exc}); it said:\n"
                               f"{self.log_tail('emulator', 20)}") from exc
        print(self.sandbox_line(), flush=True)
        for name in ("worker", "beat"):
            self.start_process(name)
        web = self.start_process("web")
        wait_for_port(self.config.web_port, timeout_s, web)
        self.wait_web(timeout_s, web)

    def wait_web(self, timeout_s: float, web: subprocess.Popen | None = None) -> None:
        """Until the web server serves its login page. A web process that exits (it could not
        bind its port, say) or a reply that is not HTTP (another server holds the port) ends the
        wait at once with what the web server logged, instead of a bare protocol error."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if web is not None and web.poll() is not None:
                raise RuntimeError(f"the web server exited with {web.returncode}; it said:\n"
                                   f"{self.log_tail('web', 20)}")
            try:
                with urllib.request.urlopen(f"{self.web_url}/login/", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                # Not listening yet, a connection closed while it starts (RemoteDisconnected
                # is an OSError too), or an error status before its first page is ready.
                pass
            except http.client.HTTPException as exc:
                raise RuntimeError(
                    f"something other than the web server answers at {self.web_url} "
                    f"({type(exc).__name__}); the web server said:\n"
                    f"{self.log_tail('web', 20)}") from exc
            time.sleep(0.2)
        raise TimeoutError(f"the web server did not answer at {self.web_url}")

    def sandbox_line(self) -> str:
        """What the emulator said at start about who runs replicas (localvertex/sandbox.py):
        shown, so nobody runs other people's jobs as root without reading it."""
        lines = [line for line in self.log_tail("emulator", 200).splitlines()
                 if "sandbox: replicas run" in line or "sandbox: NOT SANDBOXED" in line]
        said = lines[-1].split("sandbox: ", 1)[1] if lines else "it said nothing (see its log)"
        return f"emulator sandbox: {said}"

    def dead(self) -> dict[str, int]:
        """Processes that have exited, with their exit codes."""
        return {name: p.returncode for name, p in self.procs.items() if p.poll() is not None}

    def log_tail(self, name: str, lines: int = 40) -> str:
        path = self.log_dir / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop_process(self, name: str, *, sig: int = signal.SIGTERM, timeout_s: float = 15) -> None:
        proc = self.procs.pop(name, None)
        self._record_groups()
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)

    def stop(self) -> None:
        # Web and beat first so nothing new is queued; the emulator last so it stops its replicas.
        for name in ("web", "beat", "worker", "emulator"):
            self.stop_process(name)
        self.guard.close()

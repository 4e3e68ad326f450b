"""python manage.py follow_logs [--tail] [--interval S] [--once]

Runs the log follower in the foreground: what the Celery beat task does every
CP_FOLLOW_INTERVAL_S, for deployments without beat, and with --tail (or CP_LOG_TAIL=true) a
TailLogEntries stream for fresh entries while the list sweeps settle. Sweeps take the same
lease as the beat task, so the two never read the project's quota at once.
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from controlplane.backends.base import get_backend
from controlplane.core.leases import held_lease
from controlplane.logs import follower, tail
from controlplane.logs.options import follow_config

LEASE = "controlplane.logs.tasks.follow_logs"  # the beat task's singleton lease


class Command(BaseCommand):
    help = "Follow Cloud Logging for every running job (list sweeps; --tail adds a stream)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--interval", type=float, default=settings.CP_FOLLOW_INTERVAL_S,
                            help="seconds between sweeps")
        parser.add_argument("--tail", action="store_true",
                            help="stream fresh entries with TailLogEntries")
        parser.add_argument("--once", action="store_true", help="one sweep, then exit")

    def handle(self, *args: Any, **options: Any) -> None:
        backend = get_backend()
        config = follow_config()
        if options["tail"]:
            config = replace(config, tail=True)
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        streaming = None
        if config.tail and not options["once"]:
            if not backend.supports_tail:
                self.stderr.write(f"{type(backend).__name__} cannot tail; list sweeps only")
                config = replace(config, tail=False)
            else:
                streaming = threading.Thread(target=tail.run, name="log-tail", daemon=True, args=(
                    backend, config,
                    lambda: follower.followed_targets(backend.project, config), stop))
                streaming.start()
        while not stop.is_set():
            started = time.monotonic()
            with held_lease(LEASE, timedelta(seconds=120)) as mine:
                if mine:
                    stats = follower.follow(backend, config)
                    self.stdout.write(f"sweep: {stats}")
            if options["once"]:
                break
            stop.wait(max(0.0, options["interval"] - (time.monotonic() - started)))
        stop.set()
        if streaming is not None:
            streaming.join(timeout=15)

"""The project's Celery app for the worker of tests/core/test_hung_task.py: config/celery.py's
app with its settings (time limits, acks, visibility timeout from the environment), and two
transport options of the test's own.

- Its Redis keys under a prefix of their own (CP_TEST_BROKER_PREFIX): kombu keeps every
  unacknowledged message of a Redis database in one hash, and this worker sweeps that hash
  every second, so unprefixed it would hand other tests' long-running messages out again.
- That sweep every second (instead of every 100 s), so a message left unacknowledged past the
  visibility timeout is delivered again within a second, as the test needs to see.

Run as `celery -A tests.core.limits_worker worker -I tests.core.hung_tasks ...`.
"""

from __future__ import annotations

import os

from config.celery import app

app.conf.broker_transport_options = {
    **app.conf.broker_transport_options,
    "global_keyprefix": os.environ["CP_TEST_BROKER_PREFIX"],
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
}

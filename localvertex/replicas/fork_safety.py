"""Imported by `python -m localvertex` before gRPC loads: replicas start safely beside gRPC.

A replica that runs as the sandbox's user is started with fork() (Python's subprocess cannot
use vfork to change user). With gRPC's fork support on, its handlers run in the child and
restart gRPC's poller there, which then waits on descriptors the child closes before exec: the
child aborts (exit -6, "epoll_wait error: Bad file descriptor") instead of becoming the
replica, now and then while the emulator answers calls. The emulator never uses gRPC in a child
it forks (each one execs at once), so it needs no fork support. An explicit setting wins."""

from __future__ import annotations

import os

os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

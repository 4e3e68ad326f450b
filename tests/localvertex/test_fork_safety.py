"""Replicas that run as the sandbox's user start reliably while the emulator's gRPC is busy
(localvertex/replicas/fork_safety.py): each such start is a fork(), and gRPC's fork handlers
used to make some of those children abort before they became the replica."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]

# The emulator's situation in small: a gRPC server answering a busy client while the process
# starts replicas as the sandbox's user, the way its job runners and model servers do.
LAUNCHES = textwrap.dedent(
    """
    import subprocess, sys, threading
    if sys.argv[1] == "emulator":
        import localvertex.replicas.fork_safety  # noqa: F401  (what python -m localvertex imports)
    from concurrent import futures
    import grpc
    from localvertex.replicas.sandbox import identity, popen_options

    server = grpc.server(futures.ThreadPoolExecutor(4))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    call = channel.unary_unary("/busy/Call")

    def busy():
        while True:
            try:
                call(b"", timeout=0.05)
            except grpc.RpcError:
                pass

    for _ in range(3):
        threading.Thread(target=busy, daemon=True).start()
    who = identity()
    assert who is not None, "no sandbox user"
    failed = []
    for _ in range(int(sys.argv[2])):
        proc = subprocess.Popen(["/bin/true"], **popen_options(who),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        if proc.wait() != 0:
            failed.append(proc.returncode)
    print(len(failed), sorted(set(failed)))
    """
)


def test_replicas_start_as_the_sandbox_user_while_grpc_is_busy() -> None:
    # Only root can start a process as another user; CI runs the suite as root.
    require(os.geteuid() == 0, "a sandbox user needs root to switch to")
    env = {k: v for k, v in os.environ.items() if k != "GRPC_ENABLE_FORK_SUPPORT"}
    done = subprocess.run([sys.executable, "-c", LAUNCHES, "emulator", "300"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[0] == "0", f"starts that failed (count, exit codes): {done.stdout}"

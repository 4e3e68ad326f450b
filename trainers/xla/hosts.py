"""The hosts of an XLA run, and the CPU process group they meet in.

Under SPMD each host is one process driving all its devices; the compiled program's collectives
run between devices, not between the hosts' Python. What the hosts' Python must agree on runs
in a gloo process group of one rank per host (as torch_xla's own distributed checkpointing
expects): the stop flags after every step (SIGTERM may reach one VM of a slice only; a host
that stopped alone would leave the others hanging in the next step's collectives), and the
checkpoint folder's protocol (trainers/torch/checkpoints.py: rank 0 prepares and commits,
every host writes its part).

Which processes are the hosts:

1. PJRT's own processes when it sees more than one (a multi-VM TPU slice): rank = process
   index; the group meets through torch_xla's `xla://` rendezvous (MASTER_ADDR, else host 0
   from the TPU VM's metadata).
2. Else the launcher's processes (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, or CLUSTER_SPEC's
   trainer replicas): hosts whose PJRT clients do not see each other, such as the CPU device's,
   each running the whole SPMD program over its own devices.
3. Else one host, and no group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta

from trainers.job.cluster import Process, process_from_env

# A host waits this long for the others at a step's stop flags or a checkpoint: longer than any
# step or checkpoint write, as every host reaches the same point unless one has died.
HOST_TIMEOUT = timedelta(minutes=30)


def host_process(env: Mapping[str, str], pjrt_index: int, pjrt_count: int) -> Process:
    """This host as the trainer's process: a rank per host, not per device."""
    if pjrt_count > 1:
        return Process(pjrt_index, pjrt_count, 0, 1, env.get("MASTER_ADDR", ""), 0, "pjrt")
    return replace(process_from_env(env), local_rank=0, local_world_size=1)


def join(process: Process) -> None:
    """Join the hosts' gloo group (the default group); nothing to join for one host."""
    if process.world_size == 1:
        return
    import torch.distributed as dist

    if process.source == "pjrt":
        import torch_xla.distributed.xla_backend  # noqa: F401 (registers the xla:// method)

        # The rank and world size are PJRT's process index and count.
        dist.init_process_group("gloo", init_method="xla://", timeout=HOST_TIMEOUT)
        return
    dist.init_process_group("gloo", init_method=f"tcp://{process.master_addr}:"
                            f"{process.master_port}", rank=process.rank,
                            world_size=process.world_size, timeout=HOST_TIMEOUT)


def summed_flags(flags: list[float], process: Process) -> list[float]:
    """Every host's stop flags, summed (`preemption.agreed_signal` reads them)."""
    if process.world_size == 1:
        return flags
    import torch
    import torch.distributed as dist

    summed = torch.tensor(flags, dtype=torch.float64)
    dist.all_reduce(summed)
    return summed.tolist()

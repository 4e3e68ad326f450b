"""How the PyTorch trainer's processes start and meet: torchrun's elastic agent on a node with
several GPUs, and the torch.distributed process group (gloo on CPU, NCCL on GPU).

Where a process sits in the job (rank, world size, master) is trainers/job/cluster.py's, shared
with the other trainers; this module turns it into processes and a process group.
"""

from __future__ import annotations

import contextlib
import datetime
import multiprocessing
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar, cast
from uuid import uuid4

import torch
import torch.distributed as dist

from trainers.job.cluster import ClusterError, Node, Process


def torchrun_env(process: Process) -> dict[str, str]:
    """The variables torchrun would have set for this process (for libraries that read them,
    such as DeepSpeed), whichever source the process was derived from."""
    return {
        "RANK": str(process.rank),
        "WORLD_SIZE": str(process.world_size),
        "LOCAL_RANK": str(process.local_rank),
        "LOCAL_WORLD_SIZE": str(process.local_world_size),
        "MASTER_ADDR": process.master_addr,
        "MASTER_PORT": str(process.master_port),
    }


def under_launcher(env: Mapping[str, str]) -> bool:
    """True inside a process started by torchrun (it sets these; the emulator does not)."""
    return bool(env.get("TORCHELASTIC_RUN_ID") or env.get("LOCAL_RANK"))


def resolve_nproc_per_node(value: str, cuda_devices: int) -> int:
    """`auto` = one process per visible GPU, or one process on CPU."""
    if value == "auto":
        return max(1, cuda_devices)
    try:
        count = int(value)
    except ValueError:
        raise ClusterError(f"--nproc-per-node must be 'auto' or a number, not {value!r}") from None
    if count < 1:
        raise ClusterError("--nproc-per-node must be >= 1")
    return count


def launcher_flags(node: Node, nproc_per_node: int) -> list[str]:
    """torchrun's flags that start `nproc_per_node` copies of the trainer on this node.

    Global rank = node_rank * nproc_per_node + local rank, so ranks still follow the
    workerpool0-then-workerpool1 order. A single node without a master uses a free local port.
    """
    flags = [f"--nproc-per-node={nproc_per_node}"]
    if node.num_nodes == 1 and node.source == "single":
        return [*flags, "--standalone"]
    return [
        *flags,
        f"--nnodes={node.num_nodes}",
        f"--node-rank={node.node_rank}",
        f"--master-addr={node.master_addr}",
        f"--master-port={node.master_port}",
    ]


def launcher_argv(node: Node, nproc_per_node: int, train_args: Sequence[str]) -> list[str]:
    """The torchrun command line that does what `launch_workers` does: what the launch event
    shows, and what a user would type to start the same processes by hand."""
    return [sys.executable, "-m", "torch.distributed.run", *launcher_flags(node, nproc_per_node),
            "-m", "trainers.train", *worker_args(train_args)]


def worker_args(train_args: Sequence[str]) -> list[str]:
    # The workers must not start launchers of their own.
    return [*train_args, "--nproc-per-node=1"]


def launch_workers(node: Node, nproc_per_node: int, train_args: Sequence[str],
                   worker: Callable[[list[str]], None]) -> int:
    """Run `worker(args)` in `nproc_per_node` processes under torchrun's elastic agent, with the
    rendezvous, environment (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_*, TORCHELASTIC_*), signal
    forwarding and failure handling torchrun's own flags give it: the configuration comes from
    torchrun's parser. The workers are forked from a fork server that imported the trainer
    once, instead of each starting an interpreter and importing torch (seconds of CPU per
    process, paid again at every elastic restart). A fork server, not a plain fork: the agent
    has threads of its own (its store) by the time it starts workers. Returns the node's exit
    status as torchrun's would be: 0, or 1 when a worker failed or the agent was stopped."""
    from torch.distributed import run as torchrun
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import elastic_launch

    args = torchrun.parse_args([*launcher_flags(node, nproc_per_node), "-m", "trainers.train"])
    if args.standalone:  # as torchrun's run() reads the flag: a rendezvous on a free local port
        args.rdzv_backend, args.rdzv_endpoint, args.rdzv_id = "c10d", "localhost:0", uuid4().hex
    config, _, _ = torchrun.config_from_args(args)
    config.start_method = "forkserver"
    multiprocessing.set_forkserver_preload([worker.__module__, *model_modules(train_args)])
    try:
        elastic_launch(config, entrypoint=worker)(worker_args(train_args))
    except ChildFailedError as exc:
        print(exc.format_msg(), file=sys.stderr, flush=True)
        return 1
    except SignalException as exc:
        print(f"the launcher was stopped by {exc.sigval.name}; its workers were stopped too",
              file=sys.stderr, flush=True)
        return 1
    return 0


# What a run of a Hugging Face model imports besides the trainer: transformers' model base
# (seconds of CPU in every process, paid once in the fork server instead).
HF_MODULES = ("transformers.modeling_utils", "trainers.torch.models.hf_weights")
HF_FLAGS = ("--model-config", "--init-from")


def model_modules(train_args: Sequence[str]) -> list[str]:
    """The modules worth importing before the workers fork, for the model these args train.
    (A module that fails to import there is skipped: the worker then reports it itself.)"""
    named = any(arg.split("=", 1)[0] in HF_FLAGS for arg in train_args)
    return list(HF_MODULES) if named else []


T = TypeVar("T")


def on_every_rank(open_data: Callable[[], T], device: str, what: str) -> T:
    """`open_data()` on every rank (it raises ValueError naming what is wrong), and the ranks
    agree on whether every one could: a rank whose own data is fine would otherwise wait in its
    first collective for one that has already stopped."""
    failure: ValueError | None = None
    value = None
    try:
        value = open_data()
    except ValueError as exc:
        failure = exc
    failed = torch.tensor([float(failure is not None)], device=device)
    dist.all_reduce(failed)
    if failure is not None:
        raise failure
    if failed.item():
        raise ValueError(f"another rank could not read its share of {what}: see its error")
    return cast(T, value)  # open_data returned, here and on every other rank


def init_process_group(process: Process, timeout_s: int, device: str = "auto") -> tuple[str, str]:
    """Join the process group; returns (backend, device). gloo on CPU, nccl on GPU.

    World size 1 uses an in-memory store so a single process needs no port, yet runs through
    exactly the same code (DDP, collectives) as a multi-process job.
    """
    if device == "cuda" or (device == "auto" and torch.cuda.is_available()):
        backend, device = "nccl", f"cuda:{process.local_rank}"
        torch.cuda.set_device(process.local_rank)
    else:
        backend, device = "gloo", "cpu"
    timeout = datetime.timedelta(seconds=timeout_s)
    if dist.is_initialized():
        # A launcher that joins the group itself (Ray Train's TorchTrainer) already did.
        return dist.get_backend(), device
    if process.world_size == 1:
        dist.init_process_group(
            backend, store=dist.HashStore(), rank=0, world_size=1, timeout=timeout
        )
    else:
        dist.init_process_group(
            backend,
            init_method=f"tcp://{_url_host(process.master_addr)}:{process.master_port}",
            rank=process.rank,
            world_size=process.world_size,
            timeout=timeout,
        )
    return backend, device


def destroy_process_group(together: bool = False) -> None:
    """Leave the process group. When every rank ended the run at the same step (finished, or
    stopped for a signal they agreed on), they meet at a barrier first: a rank tearing gloo
    down while its peer still uses the connection can abort the process (`terminate called
    without an active exception`) after the work is done. After a failure there is no
    barrier, as the peer may be gone."""
    if dist.is_available() and dist.is_initialized():
        if together:
            # The work is done and saved: a peer that died since must not fail this rank.
            with contextlib.suppress(Exception):
                dist.barrier()
        dist.destroy_process_group()



def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host

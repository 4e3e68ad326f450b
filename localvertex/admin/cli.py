"""The emulator's admin service from the command line (its client: localvertex/admin/client.py).
The admin service's own port (8471 by default) and the emulator's token file (DATA_DIR/auth_token,
or --token-file; $LOCALVERTEX_TOKEN_FILE is the default here):

    python -m localvertex.admin preempt --target 127.0.0.1:8471 --job 123 [--grace 30]
    python -m localvertex.admin faults  --target 127.0.0.1:8471 --method CreateCustomJob \
        --code UNAVAILABLE --rate 0.2
    python -m localvertex.admin job     --target 127.0.0.1:8471 --job 123
    python -m localvertex.admin latency --target 127.0.0.1:8471 --endpoint 42 --extra-ms 500
    python -m localvertex.admin image   --target 127.0.0.1:8471 \
        --uri us-docker.pkg.dev/my-project/serving/gpt:v2
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import grpc

from localvertex import auth
from localvertex.admin.client import AdminClient

TOKEN_FILE_ENV = "LOCALVERTEX_TOKEN_FILE"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m localvertex.admin",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--target", default="127.0.0.1:8471",
                        help="the emulator's admin service (--admin-port)")
    parser.add_argument("--token-file", type=Path,
                        default=os.environ.get(TOKEN_FILE_ENV) or None,
                        help=f"the emulator's token (DATA_DIR/auth_token; ${TOKEN_FILE_ENV})")
    # Also after the command's name (`preempt --target ...`).
    anywhere = argparse.ArgumentParser(add_help=False)
    anywhere.add_argument("--target", default=argparse.SUPPRESS)
    anywhere.add_argument("--token-file", type=Path, default=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, **kwargs: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, parents=[anywhere], **kwargs)

    preempt = command("preempt", help="preempt every replica of a running job")
    preempt.add_argument("--job", required=True, help="job id or full resource name")
    preempt.add_argument("--grace", type=float, default=30.0, help="SIGTERM to SIGKILL, seconds")
    preempt.add_argument(
        "--at-step",
        type=int,
        default=None,
        help="arm it: preempt when a replica reports this step or a later one",
    )
    faults = command("faults", help="make a fraction of API calls fail")
    faults.add_argument("--method", default="*", help="e.g. CreateCustomJob, ListLogEntries, *")
    faults.add_argument("--code", default="UNAVAILABLE", help="gRPC status code name")
    faults.add_argument("--rate", type=float, default=1.0, help="0..1; 0 removes the fault")
    job = command("job", help="restart and preemption counts and pids of a job")
    job.add_argument("--job", required=True)
    latency = command("latency", help="slow an endpoint's predictions on purpose")
    latency.add_argument("--endpoint", required=True, help="endpoint id or resource name")
    latency.add_argument("--extra-ms", type=float, required=True, help="0 removes it")
    quota = command("quota", help="set an accelerator quota's limit")
    quota.add_argument("--metric", required=True,
                       help="e.g. custom_model_training_nvidia_t4_gpus (or the full name)")
    quota.add_argument("--region", default="", help="empty: every region without its own")
    quota.add_argument("--limit", type=int, required=True)
    stockout = command("stockout", help="make the next jobs in a region find no machines")
    stockout.add_argument("--region", required=True)
    stockout.add_argument("--count", type=int, default=1)
    stockout.add_argument("--scheduling", default="", help="SPOT, FLEX_START, STANDARD; "
                          "empty: any")
    image = command("image", help="push an image Artifact Registry then lists")
    image.add_argument("--uri", required=True, help="LOCATION-docker.pkg.dev/P/R/IMAGE:TAG")
    args = parser.parse_args(argv)
    if args.token_file is None:
        parser.error(f"--token-file (or ${TOKEN_FILE_ENV}) is required: the emulator's "
                     "DATA_DIR/auth_token")
    try:
        token = auth.read(Path(args.token_file))
    except auth.TokenError as exc:
        parser.error(str(exc))

    with AdminClient(args.target, token) as client:
        try:
            if args.command == "preempt":
                result = client.preempt(args.job, args.grace, args.at_step)
            elif args.command == "faults":
                result = client.set_faults(args.method, args.code, args.rate)
            elif args.command == "quota":
                result = client.set_quota(args.metric, args.limit, args.region)
            elif args.command == "stockout":
                result = client.stockout(args.region, args.count, args.scheduling)
            elif args.command == "latency":
                result = client.set_endpoint_latency(args.endpoint, args.extra_ms)
            elif args.command == "image":
                result = client.push_image(args.uri)
            else:
                result = client.job(args.job)
        except grpc.RpcError as exc:
            print(f"{exc.code().name}: {exc.details()}", file=sys.stderr)
            return 1
    print(json.dumps(result, indent=2))
    return 0


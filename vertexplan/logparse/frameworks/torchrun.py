"""torchrun (torch.distributed.elastic): its restart of the worker group.

Checked against torch 2.1-2.8 (distributed/elastic/agent/server/api.py,
SimpleElasticAgent._invoke_run): "[default] Worker group FAILED. 2/3 attempts left; will
restart worker group", logged by the agent behind its own prefix. Every process of the
replica starts again: the control plane's replica_restarted event (a new run of the replica).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contract import events as contract_events
from vertexplan.logparse.frameworks.common import Recognized, tag

NAME = "torchrun"
VERSIONS = "torch-2.1-2.8"
RECOGNIZER = tag(NAME, VERSIONS)
MARKERS = ("attempts left",)

_RESTART = re.compile(r"\[([\w.-]+)\] Worker group ([A-Z]+)\. (\d+)/(\d+) attempts left; "
                      r"will restart worker group$")


@dataclass
class State:
    pass


def new_state() -> State:
    return State()


def recognize(line: str, state: State) -> Recognized | None:
    match = _RESTART.search(line)
    if not match:
        return None
    return Recognized(contract_events.REPLICA_RESTARTED, {
        "text": line, "role": match.group(1), "state": match.group(2),
        "attempts_left": int(match.group(3)), "max_restarts": int(match.group(4)),
        "recognizer": RECOGNIZER})

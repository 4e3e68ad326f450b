"""Injected API faults: make a fraction of calls to a method fail with a given status code.

Set through the admin service (service.py), used by tests of the control plane's retries.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass

import grpc

from localvertex.core.errors import ApiError

ANY_METHOD = "*"


@dataclass(frozen=True)
class Fault:
    code: grpc.StatusCode
    rate: float


class FaultInjector:
    def __init__(self, seed: int | None = None) -> None:
        self._faults: dict[str, Fault] = {}
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def set(self, method: str, code: str, rate: float) -> None:
        """Fail `rate` of the calls to `method` ("CreateCustomJob", or "*") with `code`;
        a rate of 0 removes the fault."""
        try:
            status = grpc.StatusCode[code]
        except KeyError as exc:
            raise ValueError(f"unknown gRPC status code {code!r}") from exc
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be between 0 and 1, not {rate}")
        with self._lock:
            if rate == 0:
                self._faults.pop(method, None)
            else:
                self._faults[method] = Fault(status, rate)

    def snapshot(self) -> dict[str, dict[str, object]]:
        with self._lock:
            return {m: {"code": f.code.name, "rate": f.rate} for m, f in self._faults.items()}

    def check(self, method: str) -> None:
        """Raise the injected error for this call, if one is drawn."""
        with self._lock:
            fault = self._faults.get(method) or self._faults.get(ANY_METHOD)
            if fault is None or self._random.random() >= fault.rate:
                return
        raise ApiError(fault.code, f"Injected fault: {fault.code.name} for {method}.")

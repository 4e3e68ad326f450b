"""Batching concurrent requests: one thread runs the model, request threads wait on futures.

Whatever is queued when the model becomes free runs as the next batch, up to `max_batch`
instances (a request's instances stay together; one larger than `max_batch` runs alone). With
`max_wait_s` = 0 a lone request never waits for company, so latency at low load is the model's
own; under load, requests pile up while a batch runs and the next batch takes them all, which is
where the throughput comes from. A small `max_wait_s` trades latency for fuller batches.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)

In = TypeVar("In")

# run(items, on_done): compute every item, calling on_done(index, result) per item as it is done.
RunFn = Callable[[Sequence[Any], Callable[[int, Any], None]], object]


@dataclass
class _Request(Generic[In]):
    items: list[In]
    future: Future[list[Any]] = field(default_factory=Future)
    results: list[Any] = field(default_factory=list)
    pending: int = 0


@dataclass
class BatchStats:
    batches: int = 0
    items: int = 0
    largest: int = 0


class Batcher(Generic[In]):
    def __init__(self, run: RunFn, max_batch: int = 32, max_wait_s: float = 0.0) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._run = run
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self._queue: queue.Queue[_Request[In] | None] = queue.Queue()
        self._carry: _Request[In] | None = None
        self.stats = BatchStats()
        self._thread = threading.Thread(target=self._loop, name="batcher", daemon=True)
        self._thread.start()

    def submit(self, items: Sequence[In]) -> Future[list[Any]]:
        """The future's result is one output per item, in order."""
        request: _Request[In] = _Request(list(items))
        request.results = [None] * len(request.items)
        request.pending = len(request.items)
        if not request.items:
            request.future.set_result([])
            return request.future
        self._queue.put(request)
        return request.future

    def close(self, timeout: float = 5.0) -> None:
        self._queue.put(None)
        self._thread.join(timeout)

    def _next_batch(self) -> list[_Request[In]] | None:
        first = self._carry or self._queue.get()
        self._carry = None
        if first is None:
            return None
        batch, size = [first], len(first.items)
        deadline = time.monotonic() + self.max_wait_s
        while size < self.max_batch:
            try:
                remaining = deadline - time.monotonic()
                item = (
                    self._queue.get(timeout=remaining)
                    if remaining > 0
                    else self._queue.get_nowait()
                )
            except queue.Empty:
                break
            if item is None:
                self._queue.put(None)  # seen again once this batch is done
                break
            if size + len(item.items) > self.max_batch:
                self._carry = item  # first in the next batch: order is kept
                break
            batch.append(item)
            size += len(item.items)
        return batch

    def _loop(self) -> None:
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            items: list[In] = []
            owners: list[tuple[_Request[In], int]] = []
            for request in batch:
                for index, item in enumerate(request.items):
                    items.append(item)
                    owners.append((request, index))
            self.stats.batches += 1
            self.stats.items += len(items)
            self.stats.largest = max(self.stats.largest, len(items))

            def done(position: int, result: Any, owners=owners) -> None:
                request, index = owners[position]
                request.results[index] = result
                request.pending -= 1
                if request.pending == 0:
                    request.future.set_result(request.results)

            try:
                self._run(items, done)
            except Exception as exc:  # the model failed: every request of the batch fails
                log.exception("batch of %d items failed", len(items))
                for request in batch:
                    if not request.future.done():
                        request.future.set_exception(exc)
                continue
            for request in batch:
                if not request.future.done():
                    request.future.set_exception(RuntimeError("the batch ended without a result"))

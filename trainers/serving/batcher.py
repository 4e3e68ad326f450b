"""Batching concurrent requests: one thread runs the model, request threads wait on futures.

`ContinuousBatcher` is what the server runs: requests join and leave the running batch at every
decoding step (decoding.py), so a short request that arrives while a long one is generating
starts at the next step and finishes first, and a streaming client gets each byte as its step
ends. `Batcher`, below it, batches whole calls of a function instead: whatever is queued when
the function becomes free runs as its next call.


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
from collections import deque
from collections.abc import Callable
from collections.abc import Sequence as SequenceOf
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from contract.prediction import Instance
from trainers.serving.decoding import Decoder, Sequence

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Generation:
    """One request's sequences (in order); its future is done when every sequence is, with
    the sequences as its result."""

    sequences: list[Sequence]
    future: Future[list[Sequence]] = field(default_factory=Future)
    pending: int = 0


@dataclass
class DecodeStats:
    steps: int = 0  # decoding steps (each one batched forward of the running sequences)
    items: int = 0  # instances that joined
    largest: int = 0  # the most sequences one step ran


class ContinuousBatcher:
    """One thread drives a Decoder: between any two steps it lets queued instances join, up
    to the decoder's slots (the rest wait, in order, for the slots that sequences leave)."""

    def __init__(self, decoder: Decoder, max_wait_s: float = 0.0) -> None:
        self.decoder = decoder
        self.max_wait_s = max_wait_s
        self._queue: queue.Queue[Generation | None] = queue.Queue()
        self._waiting: deque[Sequence] = deque()
        self._owner: dict[int, Generation] = {}
        self.stats = DecodeStats()
        self._thread = threading.Thread(target=self._loop, name="decoder", daemon=True)
        self._thread.start()

    def start(self, instances: SequenceOf[Instance],
              on_token: Callable[[Sequence], None] | None = None,
              prompt_ids: SequenceOf[list[int]] | None = None) -> Generation:
        """Generate every instance; `on_token(sequence)` runs (on the decoding thread: it must
        not block) after each token. `prompt_ids`: the prompts already encoded by the
        decoder's codec (else they are encoded here, in the caller's thread: a prompt that
        does not fit the model's context raises BadInstance before anything is queued). The
        generation's future is done when every sequence is done or cancelled (set
        `sequence.cancelled`: it leaves at the next step)."""
        ids = list(prompt_ids) if prompt_ids is not None else [
            self.decoder.codec.encode(instance) for instance in instances]
        generation = Generation([Sequence(i, on_token=on_token, prompt_ids=p)
                                 for i, p in zip(instances, ids, strict=True)])
        generation.pending = len(generation.sequences)
        for sequence in generation.sequences:
            sequence.on_done = self._finished
            self._owner[id(sequence)] = generation
        if not generation.sequences:
            generation.future.set_result([])
        else:
            self._queue.put(generation)
        return generation

    def submit(self, items: SequenceOf[Instance],
               prompt_ids: SequenceOf[list[int]] | None = None) -> Future[list[Any]]:
        """Batcher's call: the future's result is one prediction per instance, in order.
        Cancelling it (a request that timed out) cancels its sequences."""
        answered: Future[list[Any]] = Future()
        generation = self.start(items, prompt_ids=prompt_ids)

        def convert(done: Future[list[Sequence]]) -> None:
            error = done.exception()
            try:
                if error is not None:
                    answered.set_exception(error)
                else:
                    answered.set_result([s.answer() for s in done.result()])
            except InvalidStateError:
                pass  # cancelled meanwhile: nobody waits for it

        def cancel(future: Future[list[Any]]) -> None:
            if future.cancelled():
                for sequence in generation.sequences:
                    sequence.cancelled = True

        generation.future.add_done_callback(convert)
        answered.add_done_callback(cancel)
        return answered

    def close(self, timeout: float = 5.0) -> None:
        self._queue.put(None)
        self._thread.join(timeout)

    def _finished(self, sequence: Sequence) -> None:
        generation = self._owner.pop(id(sequence))
        generation.pending -= 1
        if generation.pending == 0:
            generation.future.set_result(generation.sequences)

    def _take(self, generation: Generation | None) -> bool:
        """Queue a request's sequences to join; False once close() was called."""
        if generation is None:
            return False
        self._waiting.extend(generation.sequences)
        self.stats.items += len(generation.sequences)
        return True

    def _loop(self) -> None:
        running = True
        while running or not self.decoder.idle or self._waiting:
            if running and self.decoder.idle and not self._waiting:
                running = self._take(self._queue.get())  # nothing to do until a request
                deadline = time.monotonic() + self.max_wait_s
                while running and time.monotonic() < deadline:
                    try:
                        running = self._take(
                            self._queue.get(timeout=deadline - time.monotonic()))
                    except queue.Empty:
                        break
            while running:
                try:
                    running = self._take(self._queue.get_nowait())
                except queue.Empty:
                    break
            if not running:
                self._fail_all(RuntimeError("the server is stopping"))
                return
            while self._waiting and self.decoder.free > 0:
                self.decoder.join(self._waiting.popleft())
            if self.decoder.idle:
                continue
            self.stats.largest = max(self.stats.largest,
                                     self.decoder.slots - self.decoder.free)
            self.stats.steps += 1
            try:
                self.decoder.step()
            except Exception as exc:  # the model failed: every running request fails
                log.exception("a decoding step failed")
                self._fail(self.decoder.abandon(), exc)

    def _fail(self, sequences: list[Sequence], exc: BaseException) -> None:
        for sequence in sequences:
            generation = self._owner.pop(id(sequence), None)
            if generation is not None and not generation.future.done():
                generation.future.set_exception(exc)

    def _fail_all(self, exc: BaseException) -> None:
        self._fail([*self.decoder.abandon(), *self._waiting], exc)
        self._waiting.clear()

In = TypeVar("In")

# run(items, on_done): compute every item, calling on_done(index, result) per item as it is done.
RunFn = Callable[[SequenceOf[Any], Callable[[int, Any], None]], object]


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

    def submit(self, items: SequenceOf[In]) -> Future[list[Any]]:
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

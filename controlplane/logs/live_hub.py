"""One Redis subscription per web process for every open event stream in it.

A job page and `vcp logs -f` each hold a stream (stream.py); with a connection per stream a
hundred open pages were a hundred Redis connections on the broker's server. Here the streams
of one event loop (one ASGI worker process) share one pub/sub connection: a job's channel is
subscribed while at least one stream of the process wants it, and each message is handed to
every stream of that channel through a bounded queue of its own. The counting of a user's
streams (stream.py's sorted set) shares one command connection pool too.

A stream that falls behind by more than QUEUE_SIZE messages is told it lagged and ends; the
page then reloads what it missed and reconnects, as after any broken stream. When the shared
connection breaks, every stream of the process is told so and ends; the next stream opens a
new connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from typing import Any

import redis.asyncio as aioredis

logger = logging.getLogger(__name__)

QUEUE_SIZE = 256
# What a stream's queue receives instead of a message when the stream must end.
LAGGED = {"end": "lagged"}
BROKEN = {"end": "broken"}


class LiveHub:
    """The pub/sub connection of one event loop and the streams listening through it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.commands = aioredis.Redis.from_url(url, socket_connect_timeout=2.0)
        self._client: aioredis.Redis | None = None
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._listeners: dict[str, set[asyncio.Queue[Any]]] = {}
        self._lock = asyncio.Lock()

    async def listen(self, channel: str) -> asyncio.Queue[Any]:
        """A queue that receives the channel's messages (their data, as bytes) from now on.
        Raises RedisError when Redis cannot be reached (the caller's stream ends at once)."""
        queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=QUEUE_SIZE)
        async with self._lock:
            if self._pubsub is None:
                self._client = aioredis.Redis.from_url(self.url, socket_connect_timeout=2.0)
                self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            listeners = self._listeners.setdefault(channel, set())
            if not listeners:
                try:
                    await self._pubsub.subscribe(channel)
                except aioredis.RedisError:
                    del self._listeners[channel]
                    await self._close_connection()
                    raise
            listeners.add(queue)
            if self._reader is None or self._reader.done():
                self._reader = asyncio.get_running_loop().create_task(self._read())
        return queue

    async def leave(self, channel: str, queue: asyncio.Queue[Any]) -> None:
        async with self._lock:
            listeners = self._listeners.get(channel)
            if listeners is None or queue not in listeners:
                return
            listeners.discard(queue)
            if listeners:
                return
            del self._listeners[channel]
            if self._pubsub is not None:
                with contextlib.suppress(aioredis.RedisError):
                    await self._pubsub.unsubscribe(channel)
            if not self._listeners:
                await self._close_connection()

    def channels(self) -> dict[str, int]:
        """Each subscribed channel and how many streams of this process listen to it."""
        return {channel: len(queues) for channel, queues in self._listeners.items()}

    async def _read(self) -> None:
        pubsub = self._pubsub
        try:
            while pubsub is self._pubsub and self._listeners:
                message = await pubsub.get_message(timeout=1.0)
                if message is None or message.get("type") != "message":
                    continue
                name = message["channel"]
                name = name.decode() if isinstance(name, bytes) else str(name)
                for queue in list(self._listeners.get(name, ())):
                    self._hand(queue, message["data"])
        except asyncio.CancelledError:
            raise
        except (aioredis.RedisError, OSError, RuntimeError) as exc:
            logger.warning("live streams: the shared subscription broke: %s", exc)
            async with self._lock:
                if pubsub is self._pubsub:
                    for queues in self._listeners.values():
                        for queue in queues:
                            self._hand(queue, BROKEN)
                    self._listeners.clear()
                    await self._close_connection(cancel_reader=False)

    @staticmethod
    def _hand(queue: asyncio.Queue[Any], item: Any) -> None:
        try:
            queue.put_nowait(item)
        except asyncio.QueueFull:
            # Its stream ends and the page reloads what it missed: make room for the word.
            with contextlib.suppress(asyncio.QueueEmpty):
                while True:
                    queue.get_nowait()
            queue.put_nowait(LAGGED)

    async def _close_connection(self, cancel_reader: bool = True) -> None:
        reader, self._reader = self._reader, None
        pubsub, self._pubsub = self._pubsub, None
        client, self._client = self._client, None
        if cancel_reader and reader is not None and reader is not asyncio.current_task():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        with contextlib.suppress(aioredis.RedisError, OSError, RuntimeError):
            if pubsub is not None:
                await pubsub.aclose()
            if client is not None:
                await client.aclose()


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LiveHub] = (
    weakref.WeakKeyDictionary())


def hub(url: str) -> LiveHub:
    """The running event loop's hub (one per ASGI worker process: its one loop)."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None or found.url != url:
        found = _hubs[loop] = LiveHub(url)
    return found

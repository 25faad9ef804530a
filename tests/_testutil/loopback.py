"""The lifecycle every fake Fluss server of the tests shares: listen on 127.0.0.1, track each
client's task, read request frames, and on stop cancel the clients and wait until closed.

A subclass says only what a conversation is (:meth:`LoopbackServer._converse`); the
connection is closed and forgotten here whatever way the conversation ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from typing import Self

__all__ = ["LoopbackServer", "read_request"]


async def read_request(reader: asyncio.StreamReader) -> tuple[int, int, int, bytes, int]:
    """One request frame: (api key, version, request id, body, bytes on the wire)."""
    (length,) = struct.unpack(">i", await reader.readexactly(4))
    payload = await reader.readexactly(length)
    api_key, version, request_id = struct.unpack_from(">hhi", payload)
    return api_key, version, request_id, payload[8:], 4 + length


class LoopbackServer:
    """A TCP server on 127.0.0.1 (port 0 = any free one) whose clients end with it."""

    def __init__(self) -> None:
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> Self:
        self._server = await asyncio.start_server(self._on_client, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def idle(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) until no conversation is open; True if none is."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)
        return not self._tasks

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _track(self, task: asyncio.Task[None]) -> None:
        """Keep a task the conversation started (a late reply) so stop() cancels it."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _converse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._converse(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # finish normally (3.11's start_server inspects the task's exception)
        finally:
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()
            self._tasks.discard(task)

"""A connection's requests in flight: request ids, the futures waiting for their answers,
and the ids given up on whose late answers are dropped.

Part of :class:`~fluss_proto.connection.Connection`; no I/O here.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from fluss_proto.frame import MAX_REQUEST_ID, ResponseFrame

#: How many timed-out or cancelled request ids are remembered so that their late responses
#: are dropped silently. Beyond this the oldest are forgotten; a response for a forgotten id
#: is then treated as a protocol violation.
ABANDONED_IDS_KEPT = 10_000


class InFlight:
    """Request id -> the future of its answer, for one connection."""

    __slots__ = ("abandoned", "next_id", "pending")

    def __init__(self) -> None:
        self.pending: dict[int, asyncio.Future[ResponseFrame]] = {}
        self.abandoned: OrderedDict[int, None] = OrderedDict()
        self.next_id = 0

    def __len__(self) -> int:
        return len(self.pending)

    def allocate(self) -> int:
        """The next request id that is neither waiting nor abandoned (ids wrap around)."""
        while True:
            request_id = self.next_id
            self.next_id = 0 if request_id >= MAX_REQUEST_ID else request_id + 1
            if request_id not in self.pending and request_id not in self.abandoned:
                return request_id

    def track(self, request_id: int, future: asyncio.Future[ResponseFrame]) -> None:
        self.pending[request_id] = future

    def forget(
        self, request_id: int, future: asyncio.Future[ResponseFrame], *, answer_expected: bool
    ) -> None:
        """Stop waiting for a request that timed out, was cancelled or failed; with
        ``answer_expected`` its late answer is dropped when it comes."""
        if self.pending.get(request_id) is future:
            del self.pending[request_id]
            if answer_expected:
                self.abandoned[request_id] = None
                while len(self.abandoned) > ABANDONED_IDS_KEPT:
                    self.abandoned.popitem(last=False)
        if future.done():
            if not future.cancelled():
                future.exception()  # mark retrieved: no "exception was never retrieved"
        else:
            future.cancel()

    def take(self, request_id: int) -> asyncio.Future[ResponseFrame] | None:
        """The future an answer with ``request_id`` settles; None for an abandoned request
        (drop the answer). Raises KeyError for an id that is not in flight."""
        future = self.pending.pop(request_id, None)
        if future is None:
            if request_id not in self.abandoned:
                raise KeyError(request_id)
            del self.abandoned[request_id]
        return future

    def fail_all(self, reason: BaseException) -> None:
        """Every waiting request fails with ``reason``; nothing stays in flight."""
        pending, self.pending = self.pending, {}
        self.abandoned.clear()
        for future in pending.values():
            if not future.done():
                future.set_exception(reason)

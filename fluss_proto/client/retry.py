"""FlussClient's retry policy: attempts with backoff for read-only calls, a metadata refresh
when the error calls for it, and following the active coordinator when a standby answers
NOT_COORDINATOR_LEADER (65); for one request and for a batch.

Part of :class:`~fluss_proto.client.FlussClient`; see :mod:`fluss_proto.client`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Sequence
from typing import Final, NamedTuple

from google.protobuf.message import Message

from fluss_proto._replies import needs_refresh
from fluss_proto.api_keys import ApiKey
from fluss_proto.client.pool import ConnectionPool
from fluss_proto.client.router import MetadataRouter
from fluss_proto.client.target import (
    Target,
    is_standby_answer,
    request_mutates,
)
from fluss_proto.cluster import CoordinatorRedirect
from fluss_proto.errors import (
    AuthenticationError,
    ConnectionClosedError,
    CoordinatorUnknownError,
    FlussError,
    ServerError,
    UnknownNodeError,
    short_reason,
)

log = logging.getLogger("fluss_proto.client")

#: How many :class:`CoordinatorRedirect` events :attr:`FlussClient.events` keeps.
EVENTS_KEPT: Final = 256
_MAX_BACKOFF = 2.0
#: More answers of NOT_COORDINATOR_LEADER (65) a coordinator call rides out at the end of
#: an election, and the first pause before asking the same coordinator again (doubling).
ELECTION_RETRIES: Final = 4
ELECTION_BACKOFF: Final = 0.1


class Admitted(NamedTuple):
    """A request that passed the client's checks, with where it is meant to go."""

    key: ApiKey
    request: Message
    node: int | None
    coordinator: bool


class RetryPolicy:
    """Sends admitted requests through ``router`` and ``pool``: attempts, backoff, refresh
    after failure, and coordinator failover (recorded in :attr:`events`)."""

    def __init__(
        self, pool: ConnectionPool, router: MetadataRouter, *, retries: int, backoff: float
    ) -> None:
        self._pool = pool
        self._router = router
        self.retries = retries
        self.backoff = backoff
        #: Coordinator redirects, oldest first (bounded).
        self.events: deque[CoordinatorRedirect] = deque(maxlen=EVENTS_KEPT)

    # ------------------------------------------------------------------ one request

    async def call(
        self,
        item: Admitted,
        timeout: float | None,
        prior: tuple[Target | None, FlussError] | None = None,
    ) -> Message:
        """Attempts with retries; ``prior`` is a first attempt already made elsewhere
        (:meth:`call_many`) and the error it ended with."""
        key, request, node, coordinator = item
        attempts = 1 + (self.retries if not request_mutates(key, request) else 0)
        failed: set[str] = set()
        start = 0
        if prior is not None:
            target, exc = prior
            if target is not None and is_standby_answer(target, exc):
                assert isinstance(exc, ServerError)
                try:
                    return await self._follow_coordinator(target, key, request, timeout, exc)
                except FlussError as follow_exc:
                    exc = follow_exc
            if attempts <= 1 or not exc.retriable:
                raise exc
            await self._after_failure(key, target, exc, failed, 0, attempts)
            start = 1
        for attempt in range(start, attempts):
            target = None
            try:
                target = await self._router.resolve(key, node, coordinator, failed)
                return await self._call_target(target, key, request, timeout)
            except FlussError as exc:
                if attempt + 1 >= attempts or not exc.retriable:
                    raise
                await self._after_failure(key, target, exc, failed, attempt, attempts)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _after_failure(
        self,
        key: ApiKey,
        target: Target | None,
        exc: FlussError,
        failed: set[str],
        attempt: int,
        attempts: int,
    ) -> None:
        """Between two attempts: note the server, refresh metadata if useful, back off."""
        log.debug(
            "%s to %s failed (%s); retry %d of %d",
            key.name,
            target.address if target else "?",
            short_reason(exc),
            attempt + 1,
            attempts - 1,
        )
        if target is not None:
            failed.add(target.address)
        if isinstance(exc, (UnknownNodeError, CoordinatorUnknownError)):
            pass  # metadata was refreshed just before this was raised
        elif needs_refresh(exc):
            await self._refresh_after_failure(key, target, exc)
        await asyncio.sleep(min(self.backoff * 2**attempt, _MAX_BACKOFF))

    async def _refresh_after_failure(
        self, key: ApiKey, target: Target | None, exc: FlussError
    ) -> None:
        avoid = {target.address} if target is not None else set()
        try:
            await self._router.refresh(avoid=avoid)
        except AuthenticationError:
            raise
        except FlussError as refresh_exc:
            log.debug(
                "metadata refresh after a failure did not work: %s", short_reason(refresh_exc)
            )
            return
        new = self._router.metadata.coordinator
        if (
            target is not None
            and target.role == "coordinator"
            and new is not None
            and new.address != target.address
        ):
            self._record_redirect(target.address, new.address, key, type(exc).__name__)

    async def _call_target(
        self, target: Target, key: ApiKey, request: Message, timeout: float | None
    ) -> Message:
        try:
            return await self._pool.request(target, key, request, timeout=timeout)
        except ServerError as exc:
            if not is_standby_answer(target, exc):
                raise
            return await self._follow_coordinator(target, key, request, timeout, exc)

    async def _follow_coordinator(
        self,
        target: Target,
        key: ApiKey,
        request: Message,
        timeout: float | None,
        exc: ServerError,
    ) -> Message:
        """A coordinator answered 65: find the active one and retry there.

        At the end of an election the coordinator metadata names may itself answer 65 a
        few times (1 to 4 answers, observed on the 1.0 line) before it serves: asking it
        again after a short backoff (:data:`ELECTION_RETRIES`, :data:`ELECTION_BACKOFF`
        doubling, about 1.5 s in all) is bounded and beats giving up."""
        error = exc
        for attempt in range(ELECTION_RETRIES + 1):
            try:
                await self._router.refresh(avoid={target.address})
            except FlussError as refresh_exc:
                log.info(
                    "%s answered NOT_COORDINATOR_LEADER and no other server could name the "
                    "active coordinator: %s",
                    target.address,
                    short_reason(refresh_exc),
                )
                raise error from None
            new = self._router.metadata.coordinator
            if new is None or attempt == ELECTION_RETRIES:
                raise error
            if new.address != target.address:
                self._record_redirect(target.address, new.address, key, error.name)
                target = Target.coordinator(new)
            else:
                # metadata names the one that said 65: its election is ending
                await asyncio.sleep(ELECTION_BACKOFF * 2**attempt)
            try:
                return await self._pool.request(target, key, request, timeout=timeout)
            except ServerError as again:
                if not is_standby_answer(target, again):
                    raise
                error = again
        raise error  # pragma: no cover - the loop raises or returns

    def _record_redirect(self, old: str, new: str, key: ApiKey, reason: str) -> None:
        event = CoordinatorRedirect(old, new, time.time(), key.name, reason)
        self.events.append(event)
        log.info("coordinator moved from %s to %s (%s, during %s)", old, new, reason, key.name)

    # ------------------------------------------------------------------ a batch

    async def call_many(
        self, items: Sequence[Admitted], timeout: float | None
    ) -> list[Message | BaseException]:
        """Every item's response or exception, in order.

        One attempt for everything, grouped per server (one write each, no task per
        request); a failure that deserves another attempt then takes the one-at-a-time
        path with its retries, starting from that failure.
        """
        first = await self._attempt_many(items, timeout)
        results: list[Message | BaseException] = []
        again: list[tuple[int, Awaitable[Message]]] = []
        for index, (item, (sent_to, outcome)) in enumerate(zip(items, first, strict=True)):
            results.append(outcome)
            if isinstance(outcome, FlussError) and self._worth_another_attempt(
                item, sent_to, outcome
            ):
                again.append((index, self.call(item, timeout, (sent_to, outcome))))
        if again:
            retried = await asyncio.gather(*(c for _, c in again), return_exceptions=True)
            for (index, _), outcome in zip(again, retried, strict=True):
                results[index] = outcome
        return results

    def _worth_another_attempt(
        self, item: Admitted, target: Target | None, exc: FlussError
    ) -> bool:
        if target is not None and is_standby_answer(target, exc):
            return True
        return exc.retriable and self.retries > 0 and not request_mutates(item.key, item.request)

    async def _attempt_many(
        self, items: Sequence[Admitted], timeout: float | None
    ) -> list[tuple[Target | None, Message | BaseException]]:
        """One attempt of every request: routed, grouped per server, sent together."""
        out: list[tuple[Target | None, Message | BaseException]] = [
            (None, ConnectionClosedError("not sent"))  # every slot is set below
        ] * len(items)
        groups: dict[Target, list[int]] = {}
        for index, item in enumerate(items):
            try:
                target = await self._router.resolve(item.key, item.node, item.coordinator, set())
            except FlussError as exc:
                out[index] = (None, exc)
                continue
            groups.setdefault(target, []).append(index)

        async def send(target: Target, indices: list[int]) -> None:
            wanted = [(items[i].key, items[i].request) for i in indices]
            results = await self._pool.request_group(target, wanted, timeout=timeout)
            for index, result in zip(indices, results, strict=True):
                out[index] = (target, result)

        if len(groups) == 1:
            ((target, indices),) = groups.items()
            await send(target, indices)
        elif groups:
            await asyncio.gather(*(send(t, i) for t, i in groups.items()))
        return out

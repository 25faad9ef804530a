"""FlussClient's retries and coordinator failover: attempts with backoff for read-only
calls, a metadata refresh when the error calls for it, and following the active
coordinator when a standby answers NOT_COORDINATOR_LEADER (65).

Part of :class:`~fluss_proto.client.FlussClient`; see :mod:`fluss_proto.client`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque

from google.protobuf.message import Message

from fluss_proto._client_connections import (
    _MAX_BACKOFF,
    _is_standby_answer,
    _request_mutates,
    _short,
    _Target,
)
from fluss_proto._client_metadata import _MetadataAndRouting
from fluss_proto.api_keys import ApiKey
from fluss_proto.cluster import (
    CoordinatorRedirect,
)
from fluss_proto.errors import (
    AuthenticationError,
    ConnectionFailedError,
    CoordinatorUnknownError,
    FlussError,
    ServerError,
    UnknownNodeError,
)

log = logging.getLogger("fluss_proto.client")


class _Retries(_MetadataAndRouting):
    """Attempts, backoff, refresh after failure, and coordinator failover."""

    # Set by FlussClient.__init__.
    retries: int
    retry_backoff: float
    events: deque[CoordinatorRedirect]

    async def _call(
        self,
        key: ApiKey,
        request: Message,
        node: int | None,
        coordinator: bool,
        timeout: float | None,
        prior: tuple[_Target | None, FlussError] | None = None,
    ) -> Message:
        """Attempts with retries; ``prior`` is a first attempt already made elsewhere
        (``call_many``) and the error it ended with."""
        read_only = not _request_mutates(key, request)
        attempts = 1 + (self.retries if read_only else 0)
        failed: set[str] = set()
        start = 0
        if prior is not None:
            target, exc = prior
            if target is not None and _is_standby_answer(target, exc):
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
                target = await self._resolve(key, node, coordinator, failed)
                return await self._call_target(target, key, request, timeout)
            except FlussError as exc:
                if attempt + 1 >= attempts or not exc.retriable:
                    raise
                await self._after_failure(key, target, exc, failed, attempt, attempts)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _after_failure(
        self,
        key: ApiKey,
        target: _Target | None,
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
            _short(exc),
            attempt + 1,
            attempts - 1,
        )
        if target is not None:
            failed.add(target.address)
        if isinstance(exc, (UnknownNodeError, CoordinatorUnknownError)):
            pass  # metadata was refreshed just before this was raised
        elif isinstance(exc, ConnectionFailedError) or getattr(exc, "refresh_metadata", False):
            await self._refresh_after_failure(key, target, exc)
        await asyncio.sleep(min(self.retry_backoff * 2**attempt, _MAX_BACKOFF))

    async def _refresh_after_failure(
        self, key: ApiKey, target: _Target | None, exc: FlussError
    ) -> None:
        avoid = {target.address} if target is not None else set()
        try:
            await self._refresh(avoid=avoid)
        except AuthenticationError:
            raise
        except FlussError as refresh_exc:
            log.debug("metadata refresh after a failure did not work: %s", _short(refresh_exc))
            return
        new = self._metadata.coordinator
        if (
            target is not None
            and target.role == "coordinator"
            and new is not None
            and new.address != target.address
        ):
            self._record_redirect(target.address, new.address, key, type(exc).__name__)

    async def _call_target(
        self, target: _Target, key: ApiKey, request: Message, timeout: float | None
    ) -> Message:
        try:
            return await self._request(target, key, request, timeout=timeout)
        except ServerError as exc:
            if not _is_standby_answer(target, exc):
                raise
            return await self._follow_coordinator(target, key, request, timeout, exc)

    async def _follow_coordinator(
        self,
        target: _Target,
        key: ApiKey,
        request: Message,
        timeout: float | None,
        exc: ServerError,
    ) -> Message:
        """A standby coordinator answered 65: find the active one and retry there once."""
        try:
            await self._refresh(avoid={target.address})
        except FlussError as refresh_exc:
            log.info(
                "%s answered NOT_COORDINATOR_LEADER and no other server could name the "
                "active coordinator: %s",
                target.address,
                _short(refresh_exc),
            )
            raise exc from None
        new = self._metadata.coordinator
        if new is None or new.address == target.address:
            raise exc
        self._record_redirect(target.address, new.address, key, exc.name)
        return await self._request(
            _Target(new.address, "coordinator", new.node_id), key, request, timeout=timeout
        )

    def _record_redirect(self, old: str, new: str, key: ApiKey, reason: str) -> None:
        event = CoordinatorRedirect(old, new, time.time(), key.name, reason)
        self.events.append(event)
        log.info("coordinator moved from %s to %s (%s, during %s)", old, new, reason, key.name)

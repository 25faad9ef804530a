"""Alerts to one or more Alertmanager v2 APIs, never in the way of polling.

:class:`AlertmanagerSink` is a poll sink (``on_poll`` / ``aclose``, the protocol of
:mod:`konsole.serve.sinks`): each poll of each cluster advances that cluster's
:class:`~konsole.model.alerts.AlertState` (pure, :mod:`konsole.model.alerts`) and returns at
once; one delivery task per Alertmanager URL then posts (``POST /api/v2/alerts``, httpx):

- every active alert of every cluster, at once when something changed and again every
  ``resend_s`` seconds (keep it well under Alertmanager's ``resolve_timeout``: an alert not
  re-sent within it resolves by itself);
- every resolved alert once, with ``endsAt``, until one post of it succeeds.

An Alertmanager that is down, slow or answers an error is retried with exponential backoff
(``backoff_s`` doubling up to ``max_backoff_s``); each failure is counted in
:class:`DeliveryStats` (the exposition reads it) and the first of a run is logged once at
WARNING, the recovery at INFO. Nothing here raises into the poll. URLs are checked up front:
a URL that is not an http(s) address is an :class:`AlertmanagerUrlError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from konsole.errors import ExitCode, KonsoleError
from konsole.model.alerts import (
    Alert,
    AlertSettings,
    AlertState,
    Labels,
    advance_alerts,
    alert_payload,
)

if TYPE_CHECKING:
    import httpx

    from konsole.model.poll import JudgedPoll

__all__ = [
    "AlertmanagerSink",
    "AlertmanagerUrlError",
    "DeliveryStats",
    "alerts_endpoint",
]

log = logging.getLogger("konsole.alerts")

_API_PATH: Final = "/api/v2/alerts"
#: Seconds the last post on stop may take.
FINAL_POST_S: Final = 1.0
#: Resolved alerts kept per URL while it is down (the oldest go first beyond this).
MAX_RESOLVED_QUEUED: Final = 10_000


class AlertmanagerUrlError(KonsoleError):
    """An Alertmanager URL (``--alertmanager``, ``[alerts] alertmanager``) that is not an
    http(s) URL; the message names the value, the caller says where it came from."""

    exit_code = ExitCode.UNKNOWN


def alerts_endpoint(url: str) -> str:
    """``http://host:9093`` (or with a path prefix) -> ``.../api/v2/alerts``."""
    parts = urlsplit(url.strip())
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        ok = False
    else:
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    if not ok:
        raise AlertmanagerUrlError(f"{url!r} is not an Alertmanager URL (want http://HOST:PORT)")
    base = url.strip().rstrip("/")
    return base if base.endswith(_API_PATH) else base + _API_PATH


@dataclass(slots=True)
class DeliveryStats:
    """Counters of one Alertmanager URL (monotonic, for ``_total`` families)."""

    url: str
    #: Posts that Alertmanager accepted, and those that failed (refused, timeout, 4xx/5xx).
    posts_ok: int = 0
    posts_failed: int = 0
    #: Alerts carried by accepted posts (firing and resolved).
    alerts_sent: int = 0
    #: Resolved alerts dropped because the queue was full while the URL was down.
    resolved_dropped: int = 0
    #: Whether the last post succeeded (None before the first).
    up: bool | None = None
    last_error: str = ""
    last_ok_at: float | None = None


@dataclass(slots=True)
class _Target:
    """One URL's delivery state."""

    endpoint: str
    stats: DeliveryStats
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    #: Something changed since the last accepted post.
    dirty: bool = False
    resolved: dict[Labels, Alert] = field(default_factory=dict)
    failures_in_row: int = 0


class AlertmanagerSink:
    """Turns polls into alerts and delivers them to every URL (see the module docs)."""

    def __init__(
        self,
        urls: Sequence[str],
        settings: AlertSettings | None = None,
        *,
        resend_s: float = 30.0,
        timeout_s: float = 5.0,
        backoff_s: float = 1.0,
        max_backoff_s: float = 10.0,
        generator_url: str = "",
        clock: Callable[[], float] = time.time,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not urls:
            raise AlertmanagerUrlError("no Alertmanager URL given")
        self.settings = settings or AlertSettings()
        self.resend_s = resend_s
        self.timeout_s = timeout_s
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.generator_url = generator_url
        self._clock = clock
        self._transport = transport  # tests hand a fake one; None: the network
        self._targets = [
            _Target(alerts_endpoint(u), DeliveryStats(u.strip())) for u in dict.fromkeys(urls)
        ]
        self._states: dict[str, AlertState] = {}
        #: cluster -> its firing alerts by labels.
        self._firing: dict[str, dict[Labels, Alert]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._client: httpx.AsyncClient | None = None
        self._closed = False
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ the sink

    @property
    def stats(self) -> tuple[DeliveryStats, ...]:
        return tuple(t.stats for t in self._targets)

    def stats_snapshot(self) -> tuple[DeliveryStats, ...]:
        """Copies of the counters, for a scrape in another thread."""
        with self._lock:
            return tuple(replace(t.stats) for t in self._targets)

    def firing(self, cluster: str | None = None) -> tuple[Alert, ...]:
        """The alerts firing now (of one cluster, or all); safe from another thread."""
        with self._lock:
            groups = [self._firing.get(cluster, {})] if cluster else list(self._firing.values())
            return tuple(a for g in groups for a in g.values())

    async def on_poll(self, cluster: str, judged: JudgedPoll) -> None:
        """Advance ``cluster``'s alerts; deliveries run on their own tasks."""
        self._start()
        state = self._states.get(cluster, AlertState())
        update, self._states[cluster] = advance_alerts(
            state,
            cluster,
            judged.health,
            judged.events,
            judged.snapshot.taken_at,
            self.settings,
        )
        before = self._firing.get(cluster, {})
        now = {a.labels: a for a in update.firing}
        with self._lock:  # a scrape reads it from its own thread
            self._firing[cluster] = now
        if now == before and not update.resolved:
            return
        for target in self._targets:
            for alert in update.resolved:
                target.resolved[alert.labels] = alert
            for labels in now:
                target.resolved.pop(labels, None)  # fired again before delivery
            while len(target.resolved) > MAX_RESOLVED_QUEUED:
                target.resolved.pop(next(iter(target.resolved)))
                target.stats.resolved_dropped += 1
            target.dirty = True
            target.wake.set()

    async def aclose(self) -> None:
        """Stop delivering: one last bounded try of what is due, then close the client.

        Firing alerts are not resolved on stop: another ``serve`` may carry them, and
        Alertmanager resolves them by itself after its resolve timeout otherwise."""
        if self._closed:
            return
        self._closed = True
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._client is not None:
            due = [t for t in self._targets if t.dirty]
            if due:
                # bounded: serve must stop within seconds even with Alertmanager slow
                last = asyncio.gather(*(self._post(t) for t in due), return_exceptions=True)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(last, FINAL_POST_S)
            await self._client.aclose()

    # ------------------------------------------------------------------ delivery

    def _start(self) -> None:
        if self._tasks or self._closed:
            return
        from konsole.collect.cluster.metrics import _without_httpx_cli

        _without_httpx_cli()
        import httpx

        # trust_env=False: no proxy or netrc between us and the operator's Alertmanager.
        self._client = httpx.AsyncClient(
            timeout=self.timeout_s, trust_env=False, transport=self._transport
        )
        self._tasks = [
            asyncio.create_task(self._deliver(t), name=f"alertmanager {t.stats.url}")
            for t in self._targets
        ]

    async def _deliver(self, target: _Target) -> None:
        last_ok = 0.0
        while not self._closed:
            wait = self._next_wait(target, last_ok)
            if wait > 0:
                target.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(target.wake.wait(), wait)
                continue
            if await self._post(target):
                last_ok = time.monotonic()
            else:
                delay = min(self.backoff_s * 2 ** (target.failures_in_row - 1), self.max_backoff_s)
                await asyncio.sleep(delay)

    def _next_wait(self, target: _Target, last_ok: float) -> float:
        """Seconds until the next post is due (0: now)."""
        if target.dirty:
            return 0.0
        if not any(self._firing.values()):
            return self.resend_s  # nothing to keep alive; a change wakes us
        return max(0.0, last_ok + self.resend_s - time.monotonic())

    async def _post(self, target: _Target) -> bool:
        """One post of everything due to ``target``; False (counted, logged once) on failure."""
        assert self._client is not None
        resolved = list(target.resolved.values())
        alerts = [*self.firing(), *resolved]
        target.dirty = False
        body = [alert_payload(a, generator_url=self.generator_url) for a in alerts]
        try:
            response = await self._client.post(target.endpoint, json=body)
            response.raise_for_status()
        except asyncio.CancelledError:
            target.dirty = True  # stopped mid-post: still due (aclose's last try)
            raise
        except Exception as exc:  # any failure is counted, never raised
            self._failed(target, exc)
            return False
        for alert in resolved:
            if target.resolved.get(alert.labels) is alert:
                del target.resolved[alert.labels]
        stats = target.stats
        if target.failures_in_row:
            log.info(
                "alertmanager %s answers again after %d failed posts",
                stats.url,
                target.failures_in_row,
            )
        target.failures_in_row = 0
        with self._lock:
            stats.posts_ok += 1
            stats.alerts_sent += len(alerts)
            stats.up = True
            stats.last_ok_at = self._clock()
        return True

    def _failed(self, target: _Target, exc: Exception) -> None:
        target.dirty = True  # what was due is still due
        target.failures_in_row += 1
        stats = target.stats
        with self._lock:
            stats.posts_failed += 1
            stats.up = False
            stats.last_error = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
        if target.failures_in_row == 1:
            log.warning(
                "alertmanager %s: post failed (%s); retrying with backoff, polling goes on",
                stats.url,
                stats.last_error,
            )

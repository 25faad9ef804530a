"""Why requests slow down or fail, per tablet server: each request type's rate, failures
and latency from the server's own metrics, the KV backpressure it applies, and the log
lines that explain a write rejection. Pure.

What the servers count (fluss-rpc ``NettyServerHandler``, both lines): ``requestsPerSecond``
counts requests answered *successfully*, ``errorsPerSecond`` those answered with an error as
a whole (``DISK_WRITE_LOCKED`` for a write to a locked disk); the latency summaries
(``totalTimeMs``) are updated by successful requests only. A rejection *inside* a
successful answer is in neither: KV backpressure rejects per bucket and counts it in the
table's ``kvBackpressureRejectionsTotal`` (1.0 line). So the failure ratio of a request
type is errors / (successes + errors), and a write stopped by the disk lock shows as
errors, one stopped by KV backpressure as rejections.

The log lines (DiskUsageMonitor at 1.0, WARN when the lock engages, INFO when it releases)
are recognised by :func:`explain_line`, so the evidence view can put the line that says
*why* next to the ``write_rejected`` event and the error rates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from konsole.model import subjects
from konsole.model.metrics import ServerMetrics
from konsole.model.snapshot import ClusterSnapshot

__all__ = [
    "WRITE_REQUESTS",
    "RequestFigures",
    "ServerRequests",
    "explain_line",
    "request_figures",
    "server_requests",
]

#: The request types that write (and that the disk lock and KV backpressure refuse).
WRITE_REQUESTS: Final = frozenset({"produceLog", "putKv"})


@dataclass(frozen=True, slots=True)
class RequestFigures:
    """One request type on one tablet server."""

    request: str
    #: Successful requests per second, failed ones per second (the server's meters).
    ok_per_s: float | None
    errors_per_s: float | None
    #: 99th percentile of the time on the server (queue to response sent) of successful
    #: requests, in ms; None: none in the server's window.
    p99_ms: float | None

    @property
    def failure_ratio(self) -> float | None:
        """Failed / all answered; None when nothing was answered or it is unknown."""
        if self.ok_per_s is None or self.errors_per_s is None:
            return None
        total = self.ok_per_s + self.errors_per_s
        return self.errors_per_s / total if total > 0 else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "ok_per_s": self.ok_per_s,
            "errors_per_s": self.errors_per_s,
            "failure_ratio": self.failure_ratio,
            "p99_ms": self.p99_ms,
        }


@dataclass(frozen=True, slots=True)
class ServerRequests:
    """A tablet server's requests beside what refuses writes on it."""

    server_id: str
    requests: tuple[RequestFigures, ...]
    queue_size: int | None
    #: The disk write lock (None: unknown, e.g. 0.9.1) and KV backpressure rejections
    #: since the server started (1.0 line).
    write_locked: bool | None
    kv_rejections: float | None

    @property
    def subject(self) -> str:
        return subjects.tablet_server(self.server_id)

    @property
    def failing(self) -> tuple[RequestFigures, ...]:
        """Request types with failures now, the most failing first."""
        bad = [r for r in self.requests if r.errors_per_s]
        return tuple(sorted(bad, key=lambda r: (-(r.errors_per_s or 0.0), r.request)))

    @property
    def slowest(self) -> RequestFigures | None:
        known = [r for r in self.requests if r.p99_ms is not None]
        return max(known, key=lambda r: (r.p99_ms or 0.0, r.request)) if known else None

    def why_writes_fail(self) -> str | None:
        """What the server's figures say about failing writes, or None when nothing does."""
        writes = [r for r in self.failing if r.request in WRITE_REQUESTS]
        if self.write_locked:
            return "the data disk write lock is engaged: writes are refused (DISK_WRITE_LOCKED)"
        if writes:
            w = writes[0]
            return f"{w.request} fails at {w.errors_per_s:g}/s (errors answered by the server)"
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "server": self.server_id,
            "queue_size": self.queue_size,
            "write_locked": self.write_locked,
            "kv_rejections": self.kv_rejections,
            "why_writes_fail": self.why_writes_fail(),
            "requests": [r.as_dict() for r in self.requests],
        }


def request_figures(m: ServerMetrics) -> tuple[RequestFigures, ...]:
    """Every request type the server reports, by name."""
    names = sorted(set(m.requests) | set(m.request_latency_ms))
    return tuple(
        RequestFigures(
            name,
            m.requests.get(name, (None, None))[0],
            m.requests.get(name, (None, None))[1],
            m.request_latency_ms.get(name),
        )
        for name in names
    )


def server_requests(snapshot: ClusterSnapshot) -> tuple[ServerRequests, ...]:
    """Per scraped tablet server, by id."""
    out = [
        ServerRequests(
            sid,
            request_figures(m),
            m.request_queue_size,
            m.disk_write_locked,
            m.kv_rejections,
        )
        for sid, m in snapshot.tablet_metrics.items()
    ]
    return tuple(sorted(out, key=lambda s: (len(s.server_id), s.server_id)))


#: Log messages that explain a write rejection: (pattern, what it means). The disk
#: monitor's lines (DiskUsageMonitor.java:107-121) and the rejection's own text
#: (DiskWriteLockedException.java:39).
_EXPLAINING: Final = (
    (re.compile(r"disk usage reached [\d.]+% \(limit [\d.]+%\); rejecting writes"), "lock"),
    (re.compile(r"disk usage dropped to [\d.]+% .*resuming writes"), "release"),
    (re.compile(r"has rejected writes because the data disk usage"), "lock"),
)
_MEANING: Final = {
    "lock": "the data disk write lock engaged",
    "release": "the data disk write lock released",
}


def explain_line(message: str) -> str | None:
    """What a server log message says about write rejections, or None."""
    for pattern, kind in _EXPLAINING:
        if pattern.search(message):
            return _MEANING[kind]
    return None


def explaining(messages: Iterable[str]) -> list[tuple[str, str]]:
    """(message, meaning) for the messages :func:`explain_line` recognises, in order."""
    return [(m, why) for m in messages if (why := explain_line(m)) is not None]

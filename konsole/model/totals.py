"""The cluster's totals from its servers' own metrics: what it takes in and serves out.

Pure: read from one poll's :class:`~konsole.model.metrics.ServerMetrics`. Fluss reports
throughput per tablet server (``bytesInPerSecond`` and friends, a meter's rate); the
cluster's figure is their sum. A sum is ``None`` when no tablet server exported the figure
(unknown is never 0), and says how many servers it is made of, so a sum missing a server
that did not answer is not mistaken for the whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from konsole.model.metrics import ServerMetrics

__all__ = [
    "THROUGHPUT",
    "ClusterTotals",
    "RequestTotals",
    "cluster_totals",
    "request_totals",
]

#: The cluster throughput figures: (ServerMetrics field, label), in the dashboard's order.
THROUGHPUT: tuple[tuple[str, str], ...] = (
    ("messages_in_rate", "messages in/s"),
    ("bytes_in_rate", "bytes in/s"),
    ("bytes_out_rate", "bytes out/s"),
)


@dataclass(frozen=True, slots=True)
class ClusterTotals:
    """Sums over the tablet servers that exported each figure (None: none did)."""

    messages_in_rate: float | None
    bytes_in_rate: float | None
    bytes_out_rate: float | None
    #: Tablet servers whose metrics were read this poll.
    servers: int

    def get(self, name: str) -> float | None:
        value: float | None = getattr(self, name)
        return value


def _sum(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def cluster_totals(metrics: Iterable[ServerMetrics]) -> ClusterTotals:
    tablets = [m for m in metrics if m.role == "tablet"]
    return ClusterTotals(
        messages_in_rate=_sum(m.messages_in_rate for m in tablets),
        bytes_in_rate=_sum(m.bytes_in_rate for m in tablets),
        bytes_out_rate=_sum(m.bytes_out_rate for m in tablets),
        servers=len(tablets),
    )


@dataclass(frozen=True, slots=True)
class RequestTotals:
    """One request type over the tablet servers: rates summed, the worst server's p99."""

    request: str
    rate: float | None
    error_rate: float | None
    p99_ms: float | None


def request_totals(metrics: Sequence[ServerMetrics]) -> list[RequestTotals]:
    """Every request type a tablet server reports, the worst first: failing ones by
    errors/s, then by p99 (an idle type, with neither, last and by name)."""
    tablets = [m for m in metrics if m.role == "tablet"]
    names = sorted({n for m in tablets for n in (*m.requests, *m.request_latency_ms)})
    out = []
    for name in names:
        rates = [m.requests.get(name, (None, None)) for m in tablets]
        p99s = [m.request_latency_ms.get(name) for m in tablets]
        known_p99 = [p for p in p99s if p is not None]
        out.append(
            RequestTotals(
                request=name,
                rate=_sum(r for r, _ in rates),
                error_rate=_sum(e for _, e in rates),
                p99_ms=max(known_p99) if known_p99 else None,
            )
        )
    out.sort(key=lambda r: (-(r.error_rate or 0.0), -(r.p99_ms or -1.0), r.request))
    return out

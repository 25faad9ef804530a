"""Metric series read from the history, one point per recorded poll, unknown kept.

The sparklines' history questions: a server's figures over a window, and the cluster's
throughput (the tablet servers' figures summed per poll). Every poll of the window is a
point, so a poll that failed or a figure the server did not export is a ``None`` a
sparkline draws as a gap, never a missing point that closes up the line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from konsole.model import subjects
from konsole.model.totals import THROUGHPUT

if TYPE_CHECKING:
    from store import HistoryReader

__all__ = ["cluster_throughput_series", "metric_series"]

#: What the history names a tablet server's metrics: ``tablet-server <id>``.
_TABLET_PREFIX = subjects.tablet_server("")


def metric_series(
    reader: HistoryReader, subject: str, names: Sequence[str], since_ms: int, until_ms: int
) -> dict[str, list[float | None]]:
    """name -> ``subject``'s value at each poll in [since, until] (None: unknown then)."""
    polls = [p.at_ms for p in reader.polls(since_ms, until_ms)]
    out: dict[str, list[float | None]] = {}
    for name in names:
        known = {
            p.at_ms: p.value
            for p in reader.metric_series(subject, name, since=since_ms, until=until_ms)
        }
        out[name] = [known.get(at) for at in polls]
    return out


def cluster_throughput_series(
    reader: HistoryReader, since_ms: int, until_ms: int
) -> dict[str, list[float | None]]:
    """Each :data:`~konsole.model.totals.THROUGHPUT` figure summed over the tablet servers
    at each poll in [since, until]; None at a poll where no tablet server had it."""
    servers = [s for s in reader.metric_names() if s.startswith(_TABLET_PREFIX)]
    polls = [p.at_ms for p in reader.polls(since_ms, until_ms)]
    out: dict[str, list[float | None]] = {}
    for name, _ in THROUGHPUT:
        sums: dict[int, float] = {}
        for subject in servers:
            for point in reader.metric_series(subject, name, since=since_ms, until=until_ms):
                if point.value is not None:
                    sums[point.at_ms] = sums.get(point.at_ms, 0.0) + point.value
        out[name] = [sums.get(at) for at in polls]
    return out

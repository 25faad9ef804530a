"""The exposition sink: the latest samples of each cluster and the collector over them.

:class:`Exposition` is a :class:`~konsole.serve.sinks.PollSink`: each poll replaces
that cluster's samples (built once, in the polling task: :func:`.families.cluster_series`)
and counts its events. A scrape (:meth:`Exposition.collect`, in an HTTP thread) only reads
what the last polls left: one reference per cluster, swapped whole, so a scrape sees each
cluster's poll entirely or not at all and never triggers a poll. The poll age is the one
figure computed at scrape time (now minus the last poll's start).

Other sinks add their own families by registering a collector in :attr:`Exposition.registry`.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

from konsole import __version__
from konsole.model.poll import JudgedPoll
from konsole.serve.exposition.families import (
    DEFAULT_MAX_TABLES,
    FAMILIES,
    Seen,
    cluster_series,
)

__all__ = ["Exposition"]

#: family name -> its samples, as prometheus-client lists them.
Prepared = dict[str, list[Sample]]
#: family name -> its label names, ``cluster`` first.
_LABELS = {f.name: ("cluster", *f.labels) for f in FAMILIES}


@dataclass
class _Cluster:
    """What the exposition keeps of one cluster between polls."""

    samples: Prepared | None = None
    taken_at: float | None = None
    seen: Seen = field(default_factory=Seen)
    polls: int = 0
    failures: int = 0
    #: (kind, severity) -> events emitted.
    events: Counter[tuple[str, str]] = field(default_factory=Counter)


class _Seen(NamedTuple):
    """One cluster as a scrape reads it."""

    name: str
    samples: Prepared | None
    taken_at: float | None
    polls: int
    failures: int
    events: dict[tuple[str, str], int]


class Exposition(Collector):
    """The Prometheus view of every cluster serve polls (a PollSink and a Collector)."""

    def __init__(
        self,
        clusters: Sequence[str] = (),
        *,
        max_tables: int = DEFAULT_MAX_TABLES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.max_tables = max_tables
        self._clock = clock
        self._lock = threading.Lock()  # guards the dict and the counters, not the samples
        self._clusters: dict[str, _Cluster] = {name: _Cluster() for name in clusters}
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)

    # ------------------------------------------------------------------ the sink

    async def on_poll(self, cluster: str, judged: JudgedPoll) -> None:
        snapshot, events = judged.snapshot, judged.events
        with self._lock:
            kept = self._clusters.setdefault(cluster, _Cluster())
        samples = cluster_series(judged, max_tables=self.max_tables, seen=kept.seen)
        # Sample objects made here, in the polling task: a scrape only lists them.
        prepared = {
            name: [
                Sample(name, dict(zip(_LABELS[name], (cluster, *values), strict=True)), value)
                for values, value in rows
            ]
            for name, rows in samples.items()
        }
        with self._lock:
            kept.samples, kept.taken_at = prepared, snapshot.taken_at
            kept.polls += 1
            kept.failures += 0 if snapshot.ok else 1
            kept.events.update((e.kind.value, e.severity.value) for e in events)

    async def aclose(self) -> None:
        return None

    # ------------------------------------------------------------------ the collector

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            clusters = [
                _Seen(name, c.samples, c.taken_at, c.polls, c.failures, dict(c.events))
                for name, c in sorted(self._clusters.items())
            ]
        info = GaugeMetricFamily(
            "konsole_build_info", "konsole's version (always 1).", labels=["version"]
        )
        info.add_metric([__version__], 1.0)
        yield info
        for family in FAMILIES:
            labels = ["cluster", *family.labels]
            metric = GaugeMetricFamily(family.name, family.help, labels=labels)
            for seen in clusters:
                metric.samples.extend((seen.samples or {}).get(family.name, ()))
            yield metric
        yield from self._process_families(clusters)

    def _process_families(self, clusters: list[_Seen]) -> Iterator[Metric]:
        now = self._clock()
        age = GaugeMetricFamily(
            "konsole_poll_age_seconds",
            "Seconds since the last poll started (at scrape time).",
            labels=["cluster"],
        )
        polls = CounterMetricFamily(
            "konsole_polls", "Polls taken since serve started.", labels=["cluster"]
        )
        failures = CounterMetricFamily(
            "konsole_poll_failures", "Failed polls since serve started.", labels=["cluster"]
        )
        events = CounterMetricFamily(
            "konsole_events",
            "Events emitted since serve started, by kind and severity.",
            labels=["cluster", "kind", "severity"],
        )
        for seen in clusters:
            if seen.taken_at is not None:
                age.add_metric([seen.name], max(0.0, now - seen.taken_at))
            polls.add_metric([seen.name], float(seen.polls))
            failures.add_metric([seen.name], float(seen.failures))
            for (kind, severity), n in sorted(seen.events.items()):
                events.add_metric([seen.name, kind, severity], float(n))
        yield from (age, polls, failures, events)

"""The alert deliveries of ``konsole serve`` as Prometheus families.

:class:`AlertCollector` is a prometheus-client custom collector over an
:class:`~konsole.serve.alerts.delivery.AlertmanagerSink`, registered beside the exposition's
own (``Exposition.registry``); a scrape reads the sink's counters and firing alerts, it
never sends or polls anything.

- ``konsole_alertmanager_posts_total{url, result}``: posts to each Alertmanager URL,
  ``result`` = ``ok`` or ``error`` (refused, timeout, an HTTP error status);
- ``konsole_alertmanager_alerts_sent_total{url}``: alerts carried by accepted posts;
- ``konsole_alertmanager_up{url}``: 1 if the last post succeeded, 0 if it failed (absent
  before the first);
- ``konsole_alerts_firing{cluster, alertname, severity}``: alerts firing now, by name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from konsole.serve.alerts.delivery import AlertmanagerSink

__all__ = ["AlertCollector"]


class AlertCollector(Collector):
    def __init__(self, sink: AlertmanagerSink) -> None:
        self.sink = sink

    def collect(self) -> Iterator[Metric]:
        stats = self.sink.stats_snapshot()
        posts = CounterMetricFamily(
            "konsole_alertmanager_posts",
            "Posts of alerts to an Alertmanager, by result (ok, error).",
            labels=["url", "result"],
        )
        sent = CounterMetricFamily(
            "konsole_alertmanager_alerts_sent",
            "Alerts (firing and resolved) carried by posts an Alertmanager accepted.",
            labels=["url"],
        )
        up = GaugeMetricFamily(
            "konsole_alertmanager_up",
            "1 if the last post to this Alertmanager succeeded, 0 if it failed.",
            labels=["url"],
        )
        for s in stats:
            posts.add_metric([s.url, "ok"], s.posts_ok)
            posts.add_metric([s.url, "error"], s.posts_failed)
            sent.add_metric([s.url], s.alerts_sent)
            if s.up is not None:
                up.add_metric([s.url], 1.0 if s.up else 0.0)
        firing = GaugeMetricFamily(
            "konsole_alerts_firing",
            "Alerts konsole serve has firing now (after their for: hold), by name.",
            labels=["cluster", "alertname", "severity"],
        )
        counts = Counter(
            (a.label("cluster") or "", a.name, a.label("severity") or "")
            for a in self.sink.firing()
        )
        for labels, n in sorted(counts.items()):
            firing.add_metric(list(labels), n)
        yield from (posts, sent, up, firing)

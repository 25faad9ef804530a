"""The Prometheus exposition of ``konsole serve``: families, the sink that keeps them, HTTP.

- :mod:`.families`: every ``konsole_...`` family (name, type, help, labels) and
  :func:`~.families.cluster_series`, which turns one poll of one cluster into its samples,
  reading every figure from :mod:`konsole.model` (placement, replication, health, table
  figures); computed once per poll, never per scrape.
- :mod:`.sink`: :class:`~.sink.Exposition`, a :class:`~konsole.serve.sinks.PollSink`
  that keeps the latest samples of each cluster and a prometheus-client custom collector
  over them, in its own :class:`prometheus_client.CollectorRegistry` (other sinks may
  register their own collectors there, e.g. alert deliveries).
- :mod:`.http`: ``/metrics`` (prometheus-client's WSGI app: text or OpenMetrics by
  ``Accept``, gzip by ``Accept-Encoding``) and ``/healthz`` on a threaded stdlib WSGI
  server: a scrape never waits for the event loop, and never polls.
"""

from __future__ import annotations

from konsole.serve.exposition.families import DEFAULT_MAX_TABLES, FAMILIES, cluster_series
from konsole.serve.exposition.http import MetricsServer
from konsole.serve.exposition.sink import Exposition

__all__ = ["DEFAULT_MAX_TABLES", "FAMILIES", "Exposition", "MetricsServer", "cluster_series"]

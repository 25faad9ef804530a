"""What ``konsole serve`` hands each poll to: the :class:`PollSink` protocol.

After every poll of every cluster, serve awaits ``on_poll`` of each registered sink with the
cluster's name (the ``cluster`` label: the profile's name), the snapshot, its health (None
only when no health could be derived) and the events that poll raised. The Prometheus
exposition (:mod:`konsole.collect.exposition`) is one sink; the Alertmanager client is
another. A sink runs inside the polling task of that cluster: it must return quickly
(queue slow work, e.g. HTTP deliveries, on its own task) so that it never delays the next
poll. A sink that raises is logged and skipped for that poll; polling goes on. On stop,
serve awaits ``aclose`` of each sink once, after the last poll.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from konsole.model.events import Event
from konsole.model.health import Health
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["PollSink"]


@runtime_checkable
class PollSink(Protocol):
    """Receives every poll of every cluster ``konsole serve`` polls."""

    async def on_poll(
        self,
        cluster: str,
        snapshot: ClusterSnapshot,
        health: Health | None,
        events: Sequence[Event],
    ) -> None: ...

    async def aclose(self) -> None: ...

"""What ``konsole serve`` hands each poll to: the :class:`PollSink` protocol.

After every poll of every cluster, serve awaits ``on_poll`` of each registered sink with the
cluster's name (the ``cluster`` label: the profile's name) and the poll as the cluster's
session judged it (:class:`~konsole.model.poll.JudgedPoll`: the stamped snapshot, its
health, its events, the placement): a sink judges nothing again. The Prometheus
exposition (:mod:`konsole.serve.exposition`) is one sink; the Alertmanager client is
another. A sink runs inside the polling task of that cluster: it must return quickly
(queue slow work, e.g. HTTP deliveries, on its own task) so that it never delays the next
poll. A sink that raises is logged and skipped for that poll; polling goes on. On stop,
serve awaits ``aclose`` of each sink once, after the last poll.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from konsole.model.poll import JudgedPoll

__all__ = ["PollSink"]


@runtime_checkable
class PollSink(Protocol):
    """Receives every poll of every cluster ``konsole serve`` polls."""

    async def on_poll(self, cluster: str, judged: JudgedPoll) -> None: ...

    async def aclose(self) -> None: ...

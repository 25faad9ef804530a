"""The history files' side of ``konsole serve``'s exposition, read from the fleet's status.

:class:`HistoryCollector` is a prometheus-client custom collector over
:meth:`konsole.collect.fleet.Fleet.status` (what each cluster's task left after its last
poll: the recorder's state, the operator actions counted from its history file). A scrape
only reads that status; nothing here touches a file.

- ``konsole_history_ok{cluster}``: 1 while serve records the history (or follows another
  writer's), 0 while it cannot write it (the polls wait in memory); absent for a cluster
  served without a history file.
- ``konsole_history_troubles_total{cluster}``: stretches of trouble begun (the file deleted,
  moved, replaced, its directory gone, its disk full or read-only, a failed write), each
  counted even when serve wrote the poll into a new file at once.
- ``konsole_history_polls_recorded_total``, ``konsole_history_polls_waiting``,
  ``konsole_history_polls_lost_total``: polls committed, kept in memory to be written, and
  never to be written (a full backlog).
- ``konsole_operator_actions_total{cluster,action,result}``: operator events (``konsole
  admin``'s planned, sent, refused, failed, succeeded steps) that appeared in the cluster's
  history since serve started.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from konsole.collect.fleet import HistoryMode, MemberStatus

__all__ = ["HistoryCollector"]


class HistoryCollector(Collector):
    def __init__(
        self, status: Callable[[], Sequence[MemberStatus]], with_history: Sequence[str]
    ) -> None:
        self._status = status
        #: The clusters that have a history file (the others get no history series).
        self._with_history = frozenset(with_history)

    def collect(self) -> Iterator[Metric]:
        ok = GaugeMetricFamily(
            "konsole_history_ok",
            "1 while the cluster's history is recorded (or followed), 0 while it cannot be "
            "written (polls wait in memory).",
            labels=["cluster"],
        )
        troubles = CounterMetricFamily(
            "konsole_history_troubles",
            "Stretches of trouble with the history file begun since serve started.",
            labels=["cluster"],
        )
        recorded = CounterMetricFamily(
            "konsole_history_polls_recorded",
            "Polls committed into the history file since serve started.",
            labels=["cluster"],
        )
        waiting = GaugeMetricFamily(
            "konsole_history_polls_waiting",
            "Polls kept in memory until the history file can be written.",
            labels=["cluster"],
        )
        lost = CounterMetricFamily(
            "konsole_history_polls_lost",
            "Polls that will never be written (dropped from a full backlog).",
            labels=["cluster"],
        )
        actions = CounterMetricFamily(
            "konsole_operator_actions",
            "Operator actions (konsole admin's audit events) seen in the history since serve "
            "started, by action and result (planned, sent, refused, failed, succeeded).",
            labels=["cluster", "action", "result"],
        )
        for s in self._status():
            if s.name not in self._with_history:
                continue
            ok.add_metric([s.name], 0.0 if s.history is HistoryMode.OFF else 1.0)
            r = s.recorder
            if r is not None:
                troubles.add_metric([s.name], float(r.troubles))
                recorded.add_metric([s.name], float(r.polls_recorded))
                waiting.add_metric([s.name], float(r.polls_waiting))
                lost.add_metric([s.name], float(r.polls_missed))
            for (action, result), n in sorted(s.actions.items()):
                actions.add_metric([s.name, action, result], float(n))
        yield from (ok, troubles, recorded, waiting, lost, actions)

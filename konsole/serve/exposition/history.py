"""The history files' side of ``konsole serve``'s exposition, read from the fleet's status.

:class:`HistoryCollector` is a prometheus-client custom collector over
:meth:`konsole.serve.fleet.Fleet.status` (what each cluster's task left after its last
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
from typing import Final

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from konsole.serve.fleet import HistoryMode, MemberStatus

__all__ = ["HistoryCollector"]


#: (name, type, help) of the families with only the ``cluster`` label.
_PER_CLUSTER: Final = (
    (
        "konsole_history_ok",
        GaugeMetricFamily,
        "1 while the cluster's history is recorded (or followed), 0 while it cannot be "
        "written (polls wait in memory).",
    ),
    (
        "konsole_history_troubles",
        CounterMetricFamily,
        "Stretches of trouble with the history file begun since serve started.",
    ),
    (
        "konsole_history_polls_recorded",
        CounterMetricFamily,
        "Polls committed into the history file since serve started.",
    ),
    (
        "konsole_history_polls_waiting",
        GaugeMetricFamily,
        "Polls kept in memory until the history file can be written.",
    ),
    (
        "konsole_history_polls_lost",
        CounterMetricFamily,
        "Polls that will never be written (dropped from a full backlog).",
    ),
)


class HistoryCollector(Collector):
    def __init__(
        self, status: Callable[[], Sequence[MemberStatus]], with_history: Sequence[str]
    ) -> None:
        self._status = status
        #: The clusters that have a history file (the others get no history series).
        self._with_history = frozenset(with_history)

    def collect(self) -> Iterator[Metric]:
        made = {name: kind(name, text, labels=["cluster"]) for name, kind, text in _PER_CLUSTER}
        actions = CounterMetricFamily(
            "konsole_operator_actions",
            "Operator actions (konsole admin's audit events) seen in the history since serve "
            "started, by action and result (planned, sent, refused, failed, succeeded).",
            labels=["cluster", "action", "result"],
        )
        for s in self._status():
            if s.name not in self._with_history:
                continue
            values = {"konsole_history_ok": 0.0 if s.history is HistoryMode.OFF else 1.0}
            r = s.recorder
            if r is not None:
                values["konsole_history_troubles"] = float(r.troubles)
                values["konsole_history_polls_recorded"] = float(r.polls_recorded)
                values["konsole_history_polls_waiting"] = float(r.polls_waiting)
                values["konsole_history_polls_lost"] = float(r.polls_missed)
            for name, value in values.items():
                made[name].add_metric([s.name], value)
            for (action, result), n in sorted(s.actions.items()):
                actions.add_metric([s.name, action, result], n)
        yield from (*made.values(), actions)

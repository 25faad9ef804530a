"""The console's history questions, each a named function of konsole.collect.history.reads
(the screens hold no reader: konsole.ui imports no store). On a file of two clusters
(epochs), each answer stays in the asked moment's cluster; without a history, None."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from konsole.collect.history import reads as hr
from konsole.collect.history.notes import write_note
from konsole.model.timefmt import to_ms
from tests._testutil.builders import T0, snap, table, view
from tests._testutil.judging import JudgingRecorder

pytestmark = pytest.mark.timeout(60)


def each_loses_a_server(path: Path) -> None:
    """Cluster A polled at T0..T0+20 (server 2 leaves at +20), cluster B (another run) from
    T0+60 (server 1 leaves at +70): each epoch holds an event of its own."""
    for run, polls in (
        ("a", [((0, 1, 2), T0), ((0, 1, 2), T0 + 10), ((0, 1), T0 + 20)]),
        ("b", [((0, 1, 2), T0 + 60), ((0, 2), T0 + 70)]),
    ):
        r = JudgingRecorder(path, say=lambda _t: None, clock=lambda: T0, run_id=run)
        r.open()
        for seq, (servers, t) in enumerate(polls, start=1):
            r.record(snap(view(servers, [table("db.a", 1, [seq])]), seq=seq, t=t))
        r.close()


def test_every_question_answers_none_without_a_history(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"

    async def ask() -> list[object]:
        return [
            await hr.events_between_epoch(missing, None, 10),
            await hr.neighbour_event_time(None, None, -1),
            await hr.event_timeline(missing, None, 10),
            await hr.server_metric_series(missing, "tablet-server 0", ["heap_used"], 0, 1),
            await hr.throughput_series(missing, 0, 1),
            await hr.evidence_of(missing, "tablet-server 0", ["heap_used"], 0, 1, 0.5),
            await hr.table_rate_series(missing, "db.a", None, None, 10),
            await hr.untiered_series(missing, "db.a", 1, 10),
            await hr.write_report_around(missing, tmp_path / "r.html", 0, 1),
        ]

    assert asyncio.run(ask()) == [None] * 9
    assert not (tmp_path / "r.html").exists()


def test_event_questions_stay_in_the_moments_cluster(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    each_loses_a_server(path)
    b_start = T0 + 60
    write_note(path, "a note in A", subject="db.a", at=T0 + 5, now=T0 + 100)

    in_a = asyncio.run(hr.events_between_epoch(path, to_ms(T0 + 10), 100))
    in_b = asyncio.run(hr.events_between_epoch(path, None, 100))
    a_last = asyncio.run(hr.neighbour_event_time(path, T0 + 30, -1))
    after_a = asyncio.run(hr.neighbour_event_time(path, T0 + 25, 1))
    timeline_a = asyncio.run(hr.event_timeline(path, to_ms(T0 + 30), 100))
    assert in_a and all(t < b_start for t, _, _ in in_a)
    assert in_b and all(t >= b_start for t, _, _ in in_b)
    assert a_last is not None and a_last and a_last[0] <= T0 + 20
    assert after_a == []  # no later event in A: stepping never crosses into B
    assert timeline_a is not None
    events, notes = timeline_a
    assert events and all(e.time < b_start for e in events)
    assert [(n.at, n.subject, n.text) for n in notes] == [(T0 + 5, "db.a", "a note in A")]

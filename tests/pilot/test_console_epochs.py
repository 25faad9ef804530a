"""The console on a history of two clusters: time travel stays in the moment's cluster, and
the status line says when the file holds another cluster's history."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from konsole.collect.recorder import Recorder
from konsole.ui.feed import open_history_reader, state_at
from konsole.ui.state import HistoryMode, HistoryStatus
from konsole.ui.widgets.status_bar import status_text
from tests._testutil.builders import T0, snap, table, view


def two_clusters(path: Path) -> float:
    """Cluster A at T0..T0+20 (a server leaves at +20), cluster B from T0+60; B's start."""
    for run, polls in (
        ("a", [((0, 1, 2), T0), ((0, 1, 2), T0 + 10), ((0, 1), T0 + 20)]),
        ("b", [((0, 1, 2), T0 + 60), ((0, 1, 2), T0 + 70)]),
    ):
        r = Recorder(path, say=lambda _t: None, clock=lambda: T0, run_id=run)
        r.open()
        for seq, (tablets, t) in enumerate(polls, start=1):
            r.record(snap(view(tablets, [table("db.a", 1, [seq * 10])]), seq=seq, t=t))
        other = r.other_cluster_until
        r.close()
    assert other is not None
    return other


def test_time_travel_and_the_status_line_know_the_cluster(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    b_start = two_clusters(path)
    assert b_start == T0 + 60
    history = HistoryStatus(HistoryMode.RECORDING, path, None, b_start)
    reader = open_history_reader(path)
    assert reader is not None
    try:
        first_of_b = state_at(reader, T0 + 60, name="local", history=history)
        later_in_a = state_at(reader, T0 + 30, name="local", history=history)
    finally:
        reader.close()
    assert first_of_b is not None and later_in_a is not None
    # B's first poll: no earlier poll of B, so no rates against A's last one, no A events.
    assert first_of_b.previous_ok is None
    assert first_of_b.events == ()
    assert "server_left" in {e.kind.value for e in later_in_a.events}
    assert all(e.time < b_start for e in later_in_a.events)
    assert "history of another cluster until" in status_text(later_in_a).plain
    assert "history of another cluster until" not in status_text(first_of_b).plain
    live = HistoryStatus(HistoryMode.RECORDING, path, None, b_start)
    now = replace(first_of_b, as_of=None, history=live)
    assert "history of another cluster until" in status_text(now).plain

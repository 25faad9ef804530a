"""The console on a history of two clusters: time travel stays in the moment's cluster, and
the status line says when the file holds another cluster's history."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.widgets import DataTable

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed, open_history_reader, state_at
from konsole.ui.modals.time_travel import TimeTravelScreen
from konsole.ui.state import HistoryMode, HistoryStatus
from konsole.ui.widgets.status_bar import status_text
from tests._testutil.builders import T0, snap, table, view
from tests._testutil.console import settle, wait_for_workers
from tests._testutil.judging import JudgingRecorder


def two_clusters(path: Path) -> float:
    """Cluster A at T0..T0+20 (a server leaves at +20), cluster B from T0+60; B's start."""
    for run, polls in (
        ("a", [((0, 1, 2), T0), ((0, 1, 2), T0 + 10), ((0, 1), T0 + 20)]),
        ("b", [((0, 1, 2), T0 + 60), ((0, 1, 2), T0 + 70)]),
    ):
        r = JudgingRecorder(path, say=lambda _t: None, clock=lambda: T0, run_id=run)
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


async def test_the_picker_and_event_steps_stay_in_the_moments_cluster(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    b_start = two_clusters(path)
    reader = open_history_reader(path)
    assert reader is not None
    try:
        in_a = state_at(reader, T0 + 20, name="local")
        live_b = state_at(reader, T0 + 70, name="local")
    finally:
        reader.close()
    assert in_a is not None and live_b is not None
    app = KonsoleApp(StaticFeed([replace(live_b, as_of=None)], name="local", history_path=path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        # B has no events: the picker lists none of A's (A's server left at T0+20).
        await pilot.press("T")
        table = app.screen.query_one("#tt-events", DataTable)
        await settle(pilot, lambda: table.border_title is not None)
        assert table.row_count == 0, table.border_title
        await pilot.press("escape")
        # [ from live finds no event of B: it does not step into A.
        await pilot.press("left_square_bracket")
        await wait_for_workers(pilot)
        assert app.travel_state is None
        # Travelling into A, the picker lists A's events (the server that left).
        app.travel_to(T0 + 20)
        await settle(pilot, lambda: app.travel_state is not None)
        await pilot.press("T")
        picker = app.screen
        assert isinstance(picker, TimeTravelScreen)
        table = picker.query_one("#tt-events", DataTable)
        await settle(pilot, lambda: table.row_count > 0)
        assert max(picker._times.values()) < b_start
        assert any("left" in str(table.get_row_at(i)[2]) for i in range(table.row_count))

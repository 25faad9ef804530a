"""Driving the console from the keyboard: screens, enter and escape, time travel (typed and
event to event), help, the command palette, themes, a small terminal, a big cluster."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Log, Static

from fluss_proto.model import BucketView, TableView
from konsole.localcluster.cluster import ClusterDescription, ProcessInfo, SaslInfo
from konsole.ui.app import DARK_THEME, LIGHT_THEME, KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.modals.help import HelpScreen
from konsole.ui.modals.time_travel import TimeTravelScreen, parse_moment
from konsole.ui.palette import konsole_commands
from konsole.ui.screens.cluster_facts import bucket_counts, server_rows
from konsole.ui.screens.overview.screen import OverviewScreen
from konsole.ui.screens.servers.detail import ServerDetailScreen, tail_lines
from konsole.ui.screens.servers.screen import ServersScreen
from konsole.ui.state import ConsoleState
from tests._testutil.console import (
    NOW,
    T0,
    T_CREATED,
    T_STOPPED,
    record_story,
    story_state,
    wait_for_workers,
)
from tests._testutil.console import settle as _settle
from tests._testutil.judging import showing
from tests._testutil.unstarved import Stopwatch

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite")


def _app(state: ConsoleState, story: Path, **kw) -> KonsoleApp:
    return KonsoleApp(StaticFeed([state], name="demo", history_path=story), **kw)


def _rows(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def _column(table: DataTable, label: str) -> int:
    """A column's position by its label (a narrow screen drops columns: no fixed index)."""
    labels = [str(c.label) for c in table.ordered_columns]
    return labels.index(label)


# =========================================================================== screens


async def test_enter_on_a_tablet_server_opens_it_and_escape_comes_back(story: Path) -> None:
    app = _app(story_state(story, T_STOPPED - 10), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        assert isinstance(app.screen, OverviewScreen)
        # the dashboard's panels are mounted with the first state that has data
        await _settle(pilot, lambda: bool(app.screen.query("#tablets")))
        tablets = app.screen.query_one("#tablets", DataTable)
        assert [r[0] for r in _rows(tablets)] == ["1", "2", "3"]
        tablets.focus()
        await pilot.press("down", "enter")
        await _settle(pilot, lambda: isinstance(app.screen, ServerDetailScreen))
        detail = app.screen
        assert isinstance(detail, ServerDetailScreen) and detail.server_id == 2
        buckets = detail.query_one("#server-buckets", DataTable)
        assert buckets.row_count > 0
        await pilot.press("escape")
        assert isinstance(app.screen, OverviewScreen)


async def test_servers_screen_lists_the_stopped_server_as_gone(story: Path) -> None:
    app = _app(story_state(story, T_STOPPED + 5), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.press("s")
        assert isinstance(app.screen, ServersScreen)
        table = app.screen.query_one("#servers", DataTable)
        rows, state = _rows(table), _column(table, "state")
        states = {(r[0], r[1]): r[state] for r in rows}
        assert states[("coord", "-")] in ("active", "standby")
        assert states[("tablet", "1")] == "alive"
        assert states[("tablet", "3")] == "gone"
        # enter on a tablet server row opens its detail
        table = app.screen.query_one("#servers", DataTable)
        table.move_cursor(row=[r[1] for r in rows].index("3"))
        await pilot.press("enter")
        await _settle(pilot, lambda: isinstance(app.screen, ServerDetailScreen))
        assert app.screen.server_id == 3  # type: ignore[attr-defined]
        await pilot.press("escape")
        assert isinstance(app.screen, ServersScreen)


async def test_a_server_seen_alive_then_missing_is_remembered_as_gone(story: Path) -> None:
    before, after = story_state(story, T_STOPPED - 10), story_state(story, T_STOPPED + 25)
    # Drop the events, so only the screen's own memory can tell server 3 was there.
    after = replace(after, events=())
    app = KonsoleApp(StaticFeed([before, after], name="demo", history_path=story, interval=0.1))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("s")
        await _settle(pilot, lambda: app.live_state is after)
        await pilot.pause()
        table = app.screen.query_one("#servers", DataTable)
        rows, state = _rows(table), _column(table, "state")
        assert rows[-1][:2] == ["tablet", "3"] and rows[-1][state] == "gone"


def test_server_rows_when_unreachable_claim_nothing_alive(story: Path) -> None:
    rows = server_rows(story_state(story, NOW))
    assert rows and all(r.state in ("unreachable", "gone") for r in rows)
    stopped = story_state(story, T_STOPPED + 5)
    counts = bucket_counts(stopped.last_ok, stopped.replication)  # type: ignore[arg-type]
    assert counts is not None and counts.under_replicated_buckets > 0 and counts.databases == 2


async def test_overview_says_unreachable_and_connecting(story: Path) -> None:
    app = _app(story_state(story, NOW), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.pause()
        banner = str(app.screen.query_one("#banner", Static).render())
        assert "cluster unreachable since" in banner and "connection refused" in banner
        assert all(p.has_class("stale") for p in app.screen.query(".panel"))
    app = _app(ConsoleState(profile="demo", now=T0), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.pause()
        assert "connecting to demo" in str(app.screen.query_one("#banner", Static).render())


def test_tail_lines_reads_the_end_of_a_log(tmp_path: Path) -> None:
    log = tmp_path / "tablet-server-1.log"
    log.write_text("".join(f"line {i}\n" for i in range(1000)))
    assert tail_lines(log, 3) == ["line 997", "line 998", "line 999"]
    assert tail_lines(tmp_path / "missing.log") == []


# =========================================================================== time travel


def test_parse_moment_accepts_the_documented_forms() -> None:
    assert parse_moment("2026-05-28 20:27:30", NOW) == T0 + 50
    assert parse_moment("-5m", NOW) == NOW - 300
    assert parse_moment("2h", NOW) == NOW - 7200
    assert parse_moment(str(int(T0)), NOW) == T0
    with pytest.raises(ValueError, match="not a time"):
        parse_moment("yesterday", NOW)


async def test_time_travel_by_typed_moment_then_back_to_live(story: Path) -> None:
    app = _app(story_state(story, NOW), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.press("T")
        assert isinstance(app.screen, TimeTravelScreen)
        app.screen.query_one("#tt-when", Input).focus()
        await pilot.press(*"2026-05-28 20:27:30", "enter")
        await _settle(pilot, lambda: app.travel_state is not None)
        state = app.state
        assert state is not None and state.as_of == T0 + 50
        assert isinstance(app.screen, OverviewScreen)
        table = app.screen.query_one("#tablets", DataTable)
        states = [str(table.get_cell(row, "state")) for row in table.rows]
        assert states == ["alive", "alive", "alive"]  # before the stop
        await pilot.press("s")
        assert app.state is state  # the recorded moment follows the screen switch
        await pilot.press("L")
        assert app.travel_state is None


async def test_time_travel_by_relative_age(story: Path) -> None:
    app = _app(story_state(story, NOW), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.press("T")
        app.screen.query_one("#tt-when", Input).focus()
        await pilot.press(*"-1m", "enter")
        await _settle(pilot, lambda: app.travel_state is not None)
        live = app.live_state
        assert live is not None and app.state is not None
        assert app.state.as_of == live.now - 60


async def test_time_travel_event_to_event(story: Path) -> None:
    app = _app(story_state(story, NOW), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        # ] from live does nothing; [ goes to the latest event (the cluster unreachable)
        await pilot.press("right_square_bracket")
        assert app.travel_state is None
        await pilot.press("left_square_bracket")
        await _settle(pilot, lambda: app.travel_state is not None)
        latest = app.state
        assert latest is not None and latest.as_of == T0 + 100
        await pilot.press("left_square_bracket")
        await _settle(pilot, lambda: app.state is not latest)
        assert app.state is not None and app.state.as_of == T_CREATED
        previous = app.state
        await pilot.press("left_square_bracket")
        await _settle(pilot, lambda: app.state is not previous)
        assert app.state is not None and app.state.as_of == T_STOPPED
        stopped = app.state
        await pilot.press("right_square_bracket")
        await _settle(pilot, lambda: app.state is not stopped)
        assert app.state is not None and app.state.as_of == T_CREATED


async def test_time_travel_by_picking_an_event(story: Path) -> None:
    app = _app(story_state(story, NOW), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.press("T")
        table = app.screen.query_one("#tt-events", DataTable)
        await _settle(pilot, lambda: table.row_count > 0)
        # newest first: the last row is the oldest event (tablet server 3 left)
        assert "left" in str(table.get_row_at(table.row_count - 1)[2])
        table.focus()
        table.move_cursor(row=table.row_count - 1)
        await pilot.press("enter")
        await _settle(pilot, lambda: app.travel_state is not None)
        assert app.state is not None and app.state.as_of == T_STOPPED
        assert isinstance(app.screen, OverviewScreen)


async def test_time_travel_says_so_without_history() -> None:
    state = ConsoleState(profile="demo", now=T0)
    app = KonsoleApp(StaticFeed([state], name="demo"))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.press("T")
        table = app.screen.query_one("#tt-events", DataTable)
        await _settle(pilot, lambda: "no history" in str(table.border_title))


# =========================================================================== help, palette


async def test_help_lists_app_and_screen_bindings(story: Path) -> None:
    app = _app(story_state(story, T_STOPPED - 10), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.press("s", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        entries = {(section.split()[0], what) for section, _, what in app.screen.entries}
        assert ("Everywhere", "Time travel") in entries  # the app's
        assert ("Everywhere", "Light/dark theme") in entries
        assert ("This", "Open") in entries  # the servers screen's
        assert ("Focused", "Cursor down") in entries  # the focused table's
        await pilot.press("escape")
        assert isinstance(app.screen, ServersScreen)


async def test_palette_has_every_command_and_runs_them(story: Path) -> None:
    other = story_state(story, T_STOPPED + 5)
    profiles = {"staging": lambda: StaticFeed([other], name="staging", history_path=story)}
    app = _app(story_state(story, T_STOPPED - 10), story, profiles=profiles)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        names = [name for name, _, _ in konsole_commands(app)]
        for wanted in (
            "Go to overview",
            "Go to servers",
            "Go to tables",
            "Go to events",
            "Time travel…",
            "Back to live",
            "Help",
            "Toggle light/dark theme",
            "Switch profile staging",
            "Open tablet-server 3",
            "Open table shop.orders",
            "Quit",
        ):
            assert wanted in names
        await pilot.press("ctrl+p")
        await pilot.press(*"go to servers")
        await wait_for_workers(pilot)  # the palette's search
        await pilot.press("enter")
        await _settle(pilot, lambda: app.current_mode == "servers")
        await pilot.press("ctrl+p")
        await pilot.press(*"switch profile staging")
        await wait_for_workers(pilot)  # the palette's search
        await pilot.press("enter")
        await _settle(pilot, lambda: app.live_state is other)
        assert app.feed.name == "staging"


async def test_theme_toggles_between_light_and_dark(story: Path) -> None:
    app = _app(story_state(story, T_STOPPED - 10), story)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.theme == DARK_THEME
        await pilot.press("ctrl+t")
        assert app.theme == LIGHT_THEME
        await pilot.press("ctrl+t")
        assert app.theme == DARK_THEME


# =========================================================================== size, scale


async def test_a_60x20_terminal_does_not_crash(story: Path) -> None:
    app = _app(story_state(story, T_STOPPED + 5), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.resize_terminal(60, 20)
        for keys in (("s",), ("enter",), ("escape",), ("o",), ("question_mark",), ("escape",)):
            await pilot.press(*keys)
            await pilot.pause()
        await pilot.press("T")
        await pilot.pause()
        await pilot.press("escape")
        app.open_server(1)
        await pilot.pause()
        assert app.is_running


def _big(state: ConsoleState, buckets: int) -> ConsoleState:
    """``state`` with its first table grown to ``buckets`` buckets over the 3 servers."""
    snap = state.last_ok
    assert snap is not None and snap.view is not None
    view = snap.view
    first = view.tables[0]
    grown = tuple(
        BucketView(
            table_id=first.table_id or 0,
            partition_id=None,
            partition_name=None,
            bucket_id=i,
            leader_id=i % 3 + 1,
            replica_ids=(i % 3 + 1, (i + 1) % 3 + 1, (i + 2) % 3 + 1),
            leader_epoch=0,
            latest_offset=1000 + i,
        )
        for i in range(buckets)
    )
    table = TableView(first.path, first.table_id, first.info, (), grown)
    big_view = replace(view, tables=(table, *view.tables[1:]))
    big = replace(snap, view=big_view)
    return showing(state, big, last_ok=big)


async def test_a_1600_bucket_cluster_renders_overview_servers_and_detail(story: Path) -> None:
    state = _big(story_state(story, T_STOPPED - 10), 1600)
    counts = bucket_counts(state.last_ok, state.replication)  # type: ignore[arg-type]
    assert counts is not None and counts.buckets >= 1600
    app = _app(state, story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        screen = app.screen
        assert isinstance(screen, OverviewScreen)
        watch = Stopwatch()  # less the CPU waits of a starved run (nice 19)
        screen.show(state)
        overview_s = watch.elapsed()
        await pilot.press("s")
        servers = app.screen
        watch = Stopwatch()
        servers.show(state)  # type: ignore[attr-defined]
        servers_s = watch.elapsed()
        app.open_server(1)
        await _settle(pilot, lambda: isinstance(app.screen, ServerDetailScreen))
        await pilot.pause()
        buckets = app.screen.query_one("#server-buckets", DataTable)
        assert buckets.row_count > 500
        # generous bounds: the machine is shared; bench/ui.py measures properly
        assert overview_s < 0.5 and servers_s < 0.5


def _local(tmp_path: Path) -> ClusterDescription:
    logs = tmp_path / "logs"
    logs.mkdir()
    procs = []
    for role, sid, port in (("coordinator", 0, 9123), ("tablet-server", 1, 9201)):
        log = logs / f"{role}-{sid}.log"
        log.write_text(
            "".join(f"2026-05-28 20:27:{i:02d} INFO {role} {sid} line {i}\n" for i in range(60))
        )
        procs.append(
            ProcessInfo(
                role, sid, 4242, True, {"client": port}, str(log), None, f"127.0.0.1:{port}"
            )
        )
    return ClusterDescription(
        version="0.9.1",
        fluss_home=None,
        run_dir=str(tmp_path),
        running=True,
        bootstrap_servers="127.0.0.1:9123",
        internal_bootstrap_servers="127.0.0.1:9123",
        sasl=SaslInfo(False),
        zookeeper="127.0.0.1:2181",
        ready_seconds=1.0,
        processes=tuple(procs),
    )


async def test_server_detail_tails_the_local_servers_log(story: Path, tmp_path: Path) -> None:
    state = story_state(story, T_STOPPED - 10)
    feed = StaticFeed([state], name="demo", history_path=story, local=_local(tmp_path))
    app = KonsoleApp(feed)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        app.open_server(1)
        await _settle(pilot, lambda: bool(app.screen.query("#server-log")))
        log = app.screen.query_one("#server-log", Log)
        await _settle(pilot, lambda: log.line_count >= 60)
        assert "tablet-server 1 line 59" in log.lines[-1]
        assert "tablet-server-1.log" in str(log.border_title)
        # the coordinator's detail, from the servers screen, tails the coordinator's log
        await pilot.press("escape", "s")
        table = app.screen.query_one("#servers", DataTable)
        table.move_cursor(row=0)
        await pilot.press("enter")
        await _settle(pilot, lambda: bool(app.screen.query("#server-log")))
        detail = app.screen
        assert isinstance(detail, ServerDetailScreen) and detail.coordinator == "127.0.0.1:9123"
        log = detail.query_one("#server-log", Log)
        await _settle(pilot, lambda: log.line_count >= 60)
        assert "coordinator 0 line 59" in log.lines[-1]

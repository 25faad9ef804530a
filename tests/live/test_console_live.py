"""The console (Textual, in-process pilot) against a real cluster of each server generation.

One cluster per generation (module-scoped: a tablet server is stopped here, which the
shared session clusters must not see), one app for the whole story, driven by keys as an
operator would: overview -> tables -> the table pyfluss wrote -> preview shows its rows;
a tablet server is stopped and, without restarting the app, the overview shows it gone and
the event appears; it comes back when started; time travel to before the stop shows it
alive. The console records into a history file as it runs (the feed's normal mode).

Every wait is bounded in time; everything listens on loopback only.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from konsole.collect.profiles import profile_from_local
from konsole.localcluster import LocalCluster
from konsole.localcluster.cluster import ClusterDescription
from konsole.localcluster.seed import wait_leaders
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import LiveFeed
from konsole.ui.screens.preview import PreviewScreen
from konsole.ui.screens.table_detail import TableDetailScreen
from konsole.ui.state import HistoryMode
from tests._testutil import pyfluss_data as pf
from tests._testutil.console import screen_text, until
from tests.conftest import FlussServer, our_java_processes

pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(300),
]

TABLET_SERVERS = 2
INTERVAL = 1.0
ROWS = 40


@dataclass
class Live:
    server: FlussServer
    lc: LocalCluster
    description: ClusterDescription
    history: Path
    db: str
    table: str


@pytest.fixture(scope="module")
def live(fluss_server: FlussServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    run_dir = tmp_path_factory.mktemp(f"console-{fluss_server.generation}")
    lc = LocalCluster(run_dir)
    try:
        desc = lc.start(
            **fluss_server.start_kwargs(), tablet_servers=TABLET_SERVERS, ready_timeout=180
        )
        db, table = pf.unique_name("console"), pf.unique_name("orders")
        asyncio.run(_seed(desc.bootstrap_servers, db, table))
        yield Live(fluss_server, lc, desc, run_dir / "history.sqlite", db, table)
    finally:
        lc.stop(graceful=False)
        leftover = our_java_processes(run_dir)
        assert not leftover, f"Java processes of the test cluster remain: {leftover}"


async def _seed(bootstrap: str, db: str, table: str) -> None:
    conn = await pf.connect(bootstrap)
    try:
        await pf.create_database(conn.get_admin(), db)
        path = await pf.create_log_table(conn, db, table, buckets=TABLET_SERVERS * 2)
        assert await wait_leaders(conn.get_admin(), path, TABLET_SERVERS * 2)
        await pf.write_rows(conn, path, ROWS)
    finally:
        await pf.close_connection(conn)


def _alive(app: KonsoleApp) -> set[int]:
    state = app.state
    if state is None or state.last_ok is None or state.last_ok.view is None:
        return set()
    return {s.node_id for s in state.last_ok.view.tablet_servers}


def _polled_after(app: KonsoleApp, moment: float) -> bool:
    state = app.live_state
    return state is not None and state.last_ok is not None and state.last_ok.taken_at > moment


def _kinds(app: KonsoleApp, subject: str) -> list[str]:
    state = app.live_state
    return (
        [] if state is None else [e.kind.value for e in state.events if e.subject.name == subject]
    )


async def test_console_follows_a_tablet_server_stop_and_travels_back(live: Live) -> None:
    profile = profile_from_local(live.description.to_dict())
    feed = LiveFeed(profile, live.history, local=live.description, interval=INTERVAL)
    app = KonsoleApp(feed)
    victim = max(s.id for s in live.description.of_role("tablet-server"))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, "first poll", lambda: app.state is not None and app.state.reachable, 60)
        state = app.state
        assert state is not None and state.history.mode is HistoryMode.RECORDING
        assert _alive(app) == {s.id for s in live.description.of_role("tablet-server")}
        await _preview_the_seeded_table(pilot, app, live)
        before = time.time()
        # A poll after ``before`` recorded (the feed records before it publishes): the
        # moment travelled to below is on file, with every server alive.
        await until(pilot, "a poll after the preview", lambda: _polled_after(app, before), 30)

        await asyncio.to_thread(live.lc.stop_server, "ts", victim)
        await until(pilot, "server gone", lambda: victim not in _alive(app), 60)
        subject = f"tablet-server {victim}"
        await until(pilot, "server_left event", lambda: "server_left" in _kinds(app, subject), 30)
        # Without restarting the app: the overview shows it gone and the event appears.
        await until(pilot, "overview shows it", lambda: _row_state(app, victim) == "gone", 15)
        await until(pilot, "event on the overview", lambda: "left" in screen_text(app), 15)

        await asyncio.to_thread(live.lc.start_server, "ts", victim, 120.0)
        await until(pilot, "server back", lambda: victim in _alive(app), 90)
        await until(pilot, "server_joined", lambda: "server_joined" in _kinds(app, subject), 30)
        await until(pilot, "overview: alive", lambda: _row_state(app, victim) == "alive", 15)

        app.travel_to(before)
        await until(pilot, "time travel", lambda: app.travel_state is not None, 20)
        assert app.state is not None and app.state.historic
        assert victim in _alive(app)
        assert "HISTORY" in screen_text(app)
        await until(pilot, "historic overview", lambda: _row_state(app, victim) == "alive", 15)
        await pilot.press("L")
        assert app.travel_state is None


async def _preview_the_seeded_table(pilot: Any, app: KonsoleApp, live: Live) -> None:
    """Tables -> filter to the table pyfluss wrote -> its detail -> preview: its rows."""
    table = f"{live.db}.{live.table}"
    await pilot.press("t")
    await until(pilot, "tables screen lists it", lambda: live.table in screen_text(app), 30)
    await pilot.press("slash", *live.table, "enter")
    await pilot.press("enter")
    await until(pilot, "table detail", lambda: isinstance(app.screen, TableDetailScreen), 10)
    assert app.screen.table_path == table  # type: ignore[attr-defined]
    await pilot.press("p")
    await until(pilot, "preview screen", lambda: isinstance(app.screen, PreviewScreen), 10)
    screen = app.screen
    assert isinstance(screen, PreviewScreen)
    await until(pilot, "preview rows", lambda: screen.result is not None, 60)
    assert screen.result is not None and screen.error is None
    ids = sorted(screen.result.table.column("id").to_pylist())
    assert ids == [r["id"] for r in pf.expected_rows(ROWS)]
    assert "row-000007" in screen_text(app) or "row-000000" in screen_text(app)
    await pilot.press("escape", "escape")  # back to the table, back to the tables
    await pilot.press("o")
    assert app.current_mode == "overview"


def _row_state(app: KonsoleApp, server_id: int) -> str | None:
    """The state column of the overview's row for ``server_id`` (None: no such row)."""
    text = screen_text(app)
    match = re.search(rf"\b{server_id}\s+127\.0\.0\.1:\d+\s+\S+\s+(\w+)", text)
    return match.group(1) if match else None

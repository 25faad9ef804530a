"""The console (Textual, in-process pilot) against a real cluster of each server generation.

One cluster per generation (module-scoped: a tablet server is stopped here, which the
shared session clusters must not see), one app for the whole story, driven by keys as an
operator would: overview -> tables -> the table pyfluss wrote -> preview shows its rows;
a tablet server is stopped and, without restarting the app, the overview shows it gone and
the event appears; it comes back when started; time travel to before the stop shows it
alive. The console records into a history file as it runs (the feed's normal mode).
The Overview's dashboard: its throughput is 0 before any traffic (the servers' own meters
at 0), non-zero within 3 polls of a pyfluss producer started after the first poll, into a
table made then, and matches the tablet servers' own ``bytesInPerSecond`` (scraped here,
without konsole's parser) summed, within 10 %; a stopped server shows in it within one
poll.

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
from konsole.ui.screens.overview.screen import OverviewScreen
from konsole.ui.screens.tables.detail import TableDetailScreen
from konsole.ui.screens.tables.preview import PreviewScreen
from konsole.ui.state import HistoryMode
from konsole.ui.widgets.fitted_lines import FittedLines
from konsole.ui.widgets.spark import Spark
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
    #: The table seeded with ``ROWS`` rows (the preview checks them).
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
        # The first poll whose metadata lacks it: the dashboard shows it before the next.
        live_state = app.live_state
        assert live_state is not None and live_state.last_ok is not None
        gone_seq = live_state.last_ok.seq
        await until(pilot, "dashboard: down", lambda: _row_state(app, victim) == "gone", 5)
        assert "1 down" in screen_text(app)
        shown = app.live_state
        assert shown is not None and shown.last_ok is not None
        assert shown.last_ok.seq <= gone_seq + 1, (gone_seq, shown.last_ok.seq)
        subject = f"tablet-server {victim}"
        await until(pilot, "server_left event", lambda: "server_left" in _kinds(app, subject), 30)
        # Without restarting the app: the overview shows it gone and the event appears.
        await until(pilot, "overview shows it", lambda: _row_state(app, victim) == "gone", 15)
        # (in the Latest events panel's lines: a short panel may leave it out, "+N more",
        # when newer events came, e.g. a coordinator probe missed on a loaded machine)
        await until(pilot, "event on the overview", lambda: _latest_says(app, "left"), 15)

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


def _latest_says(app: KonsoleApp, word: str) -> bool:
    """Whether a line of the Overview's Latest events panel (drawn or left out) says it."""
    panel = next(app.screen.query("#events").results(FittedLines), None)
    return panel is not None and any(word in line.plain for line in panel.ranked.lines)


def _row_state(app: KonsoleApp, server_id: int) -> str | None:
    """The state column of the overview's row for ``server_id`` (None: no such row)."""
    from textual.widgets import DataTable

    screen = app.screen
    if not isinstance(screen, OverviewScreen):
        return None
    table = next(screen.query("#tablets").results(DataTable), None)  # None: not mounted yet
    key = f"tablet-{server_id}"
    if table is None:
        return None
    if key not in table.rows:
        return None
    return str(table.get_cell(key, "state"))


# =========================================================================== dashboard

#: Rows a write of the background writer appends; the pause between its writes.
BATCH = 200
WRITE_PAUSE_S = 0.3


def _servers_bytes_in(urls: list[str]) -> float:
    """The tablet servers' own ``bytesInPerSecond``, summed, read here (not by konsole)."""
    import httpx

    total = 0.0
    line = re.compile(r"^fluss_tabletserver_bytesInPerSecond\{[^}]*\}\s+(\S+)$", re.M)
    with httpx.Client(trust_env=False, timeout=5.0) as client:
        for url in urls:
            found = line.findall(client.get(url).text)
            assert len(found) == 1, (url, found)
            total += float(found[0])
    return total


#: The longest the servers' meters are waited for to fall to 0 (their window is a minute).
QUIET_LIMIT_S = 90.0


async def _servers_quiet(urls: list[str], limit_s: float) -> float:
    """When the servers' own ``bytesInPerSecond``, summed, was first read as 0."""
    deadline = time.monotonic() + limit_s
    seen = []
    for _ in range(int(limit_s) + 1):  # bounded: a read a second at most, limit_s in all
        own = await asyncio.to_thread(_servers_bytes_in, urls)
        if own == 0.0:
            return time.time()
        seen.append(own)
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(1.0)  # the meters move every few seconds
    raise AssertionError(f"the servers' bytesInPerSecond never fell to 0: {seen[-5:]}")


def _shown_bytes_in(app: KonsoleApp) -> float | None:
    """The Overview's cluster bytes in/s "now" (the sparkline's latest point)."""
    screen = app.screen
    if not isinstance(screen, OverviewScreen):
        return None
    spark = next(screen.query("#tp-bytes_in_rate").results(Spark), None)
    values = spark.values if spark is not None else []
    return values[-1] if values else None


async def test_overview_throughput_matches_the_servers_own_rates(live: Live) -> None:
    """Zero before any traffic, non-zero within 3 polls of the first acknowledged write of
    a producer started after the first poll (into a table created then), and the servers'
    own figure summed, within 10 %."""
    profile = profile_from_local(live.description.to_dict())
    urls = [m.url for m in profile.metrics if m.role == "tablet"]
    assert len(urls) == TABLET_SERVERS, profile.metrics
    # polled as `make demo` polls: the profile's own interval (5 s by default); the
    # servers' meters refresh every few seconds, so 3 polls always span a refresh
    interval = profile.poll_interval
    feed = LiveFeed(profile, live.history, local=live.description, interval=interval)
    app = KonsoleApp(feed)
    stop = asyncio.Event()
    written = 0
    busy = pf.unique_name("busy")

    async def writer() -> None:  # bounded: at most 400 writes
        nonlocal written
        conn = await pf.connect(live.description.bootstrap_servers)
        try:
            import fluss

            path = fluss.TablePath(live.db, busy)
            for _ in range(400):
                if stop.is_set():
                    return
                await pf.write_rows(conn, path, BATCH, start=written)
                written += BATCH
                await asyncio.sleep(WRITE_PAUSE_S)
        finally:
            await pf.close_connection(conn)

    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, "first poll", lambda: app.state is not None and app.state.reachable, 60)
        # The table the producer writes is made after the first poll.
        conn = await pf.connect(live.description.bootstrap_servers)
        try:
            path = await pf.create_log_table(conn, live.db, busy, buckets=TABLET_SERVERS * 2)
            assert await wait_leaders(conn.get_admin(), path, TABLET_SERVERS * 2)
        finally:
            await pf.close_connection(conn)
        # Before any traffic: the servers' own meters at 0 (they hold earlier writes for a
        # window of about a minute), then the dashboard says 0 on the poll after that.
        quiet_at = await _servers_quiet(urls, QUIET_LIMIT_S)
        await until(pilot, "a poll after the meters' 0", lambda: _polled_after(app, quiet_at), 30)
        await until(pilot, "the poll painted", lambda: _shown_bytes_in(app) is not None, 10)
        assert _shown_bytes_in(app) == 0.0, _shown_bytes_in(app)
        task = asyncio.create_task(writer())
        try:
            await until(pilot, "first write acknowledged", lambda: written > 0, 60)
            first = app.live_state
            assert first is not None and first.last_ok is not None
            seq0 = first.last_ok.seq

            def moving() -> bool:
                shown = _shown_bytes_in(app)
                return shown is not None and shown > 0

            await until(pilot, "throughput non-zero", moving, 3 * interval + 10)
            state = app.live_state
            assert state is not None and state.last_ok is not None
            assert state.last_ok.seq <= seq0 + 3, (seq0, state.last_ok.seq)

            # The servers' meters refresh every few seconds and ramp while writes go on: a
            # pair of figures read within the same refresh agrees; a wrong sum (a server
            # missing, replication counted) never does. Bounded: 15 polls.
            pairs = []
            for _ in range(15):
                shown = _shown_bytes_in(app)
                own = await asyncio.to_thread(_servers_bytes_in, urls)
                pairs.append((shown, own))
                if shown and own and abs(shown - own) <= 0.10 * own:
                    break
                seq = app.live_state.last_ok.seq  # type: ignore[union-attr]
                await until(
                    pilot,
                    "next poll",
                    lambda s=seq: app.live_state.last_ok.seq > s,  # type: ignore[union-attr,misc]
                    interval + 15,
                )
            else:
                raise AssertionError(f"never within 10 %: (shown, servers' own) {pairs}")
            assert "Throughput" in screen_text(app)
        finally:
            stop.set()
            await asyncio.wait_for(task, 60)

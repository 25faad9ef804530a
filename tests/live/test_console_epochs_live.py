"""The console on `--local`, twice, over two local clusters, on real servers of both
generations (issue 24: a history knows its cluster).

A local cluster is started, the console is opened on it as ``konsole --local`` opens it
(the options resolved by :class:`konsole.cli.options.ConnectionArgs`, the feed made by
:func:`konsole.cli.console.live_feed`, the app headless under the pilot), a table is
created and written while it watches, and it is closed; the cluster is stopped, a new one
started in the same run dir (new run id, new ports, the same table name with fewer rows,
nothing written while watched), and the console opened again on the same history file.
Nothing of the first cluster shows as the second's: the recent events, the time-travel
picker, the table's rows/s sparkline, a moment of time travel; a moment of the first
cluster is marked as another cluster's; `konsole history info --local` lists two epochs.
Every wait is bounded; every process runs with a timeout.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import Sparkline, Static

from konsole.cli.console import live_feed
from konsole.cli.options import ConnectionArgs
from konsole.localcluster import LocalCluster
from konsole.localcluster.cluster import ClusterDescription
from konsole.ui.app import KonsoleApp
from konsole.ui.modals.time_travel import TimeTravelScreen
from konsole.ui.screens.table_detail import TableDetailScreen
from konsole.ui.widgets.status_bar import status_text
from tests._testutil import pyfluss_data as pf
from tests._testutil.console import until
from tests.conftest import FlussServer, our_java_processes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

REPO = Path(__file__).resolve().parents[2]
INTERVAL = 1.0
TABLE = "epochs.t"


def _app(run_dir: Path) -> KonsoleApp:
    """The console as `konsole --local --run-dir RUN_DIR` opens it (its own history file)."""
    args = ConnectionArgs(local=True, run_dir=run_dir)
    profile = args.resolve()
    description = LocalCluster(run_dir).status()
    return KonsoleApp(live_feed(profile, args.history_file(profile), INTERVAL, description))


def _servers(app: KonsoleApp) -> set[str]:
    state = app.state
    view = state.last_ok.view if state is not None and state.last_ok is not None else None
    return set() if view is None else {s.address for s in view.servers}


def _endpoints(desc: ClusterDescription) -> set[str]:
    found = {str(p["endpoint"]) for p in desc.to_dict()["processes"] if p.get("endpoint")}
    return found | set(desc.internal_bootstrap_servers.split(","))


async def _first_console(run_dir: Path, desc: ClusterDescription) -> float:
    """Watch the first cluster while its table is created and written; a moment of it."""
    app = _app(run_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, "first poll", lambda: bool(_servers(app)), 60)
        assert _servers(app) <= _endpoints(desc)
        await pf.write_log_table(desc.bootstrap_servers, "epochs", "t", 50)
        created = "table_created"

        def seen() -> bool:
            state = app.live_state
            return state is not None and any(e.kind.value == created for e in state.events)

        await until(pilot, "table_created", seen, 30)
        start = _seq(app)
        await until(pilot, "3 polls after", lambda: _seq(app) >= start + 3, 30)
        last = app.live_state.last_ok if app.live_state is not None else None
        assert last is not None
    return last.taken_at


async def _second_console(run_dir: Path, second: ClusterDescription, in_first: float) -> None:
    app = _app(run_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, "first poll", lambda: bool(_servers(app)), 60)
        await until(pilot, "3 polls", lambda: _seq(app) >= 3, 30)
        live = app.live_state
        assert live is not None and _servers(app) <= _endpoints(second)
        began = live.history.other_until
        assert began is not None and began > in_first, live.history
        assert "history of another cluster until" in status_text(live).plain
        # Recent events: none of the first cluster (its table_created was before `began`).
        assert all(e.time >= began for e in live.events), live.events
        # The time-travel picker: the second cluster's events only.
        await pilot.press("T")
        picker = app.screen
        assert isinstance(picker, TimeTravelScreen)
        await until(pilot, "events listed", lambda: _listed(app), 15)
        assert all(t >= began for t in picker._times.values()), picker._times
        await pilot.press("escape")
        await until(pilot, "picker closed", lambda: not isinstance(app.screen, TimeTravelScreen), 5)
        # The table's sparkline: this cluster's table took no writes while watched; the
        # first's took 50 rows while its console watched (a rate above 0 if joined).
        app.open_table(TABLE)
        await until(pilot, "detail", lambda: bool(app.screen.query("#detail-sparkline")), 10)
        assert isinstance(app.screen, TableDetailScreen)
        spark = app.screen.query_one("#detail-sparkline", Sparkline)
        label = app.screen.query_one("#detail-rate-label", Static)
        await until(pilot, "sparkline", lambda: "polls" in str(label.content), 20)
        polls = int(str(label.content).split(",")[1].split()[0])
        assert polls <= _seq(app), (label.content, _seq(app))
        assert all(v == 0.0 for v in spark.data or []), spark.data
        await pilot.press("escape")
        # Time travel: a moment of this cluster shows its servers; one of the first
        # cluster shows that one's, marked as another cluster's history.
        app.travel_to(live.now)
        await until(pilot, "travel (second)", lambda: app.travel_state is not None, 20)
        assert _servers(app) <= _endpoints(second)
        moment = app.travel_state
        app.travel_to(in_first)
        await until(pilot, "travel (first)", lambda: app.travel_state is not moment, 20)
        state = app.state
        assert state is not None and state.as_of == in_first
        assert not _servers(app) & _endpoints(second)
        assert "history of another cluster until" in status_text(state).plain


def _seq(app: KonsoleApp) -> int:
    state = app.live_state
    return 0 if state is None or state.snapshot is None else state.snapshot.seq


def _listed(app: KonsoleApp) -> bool:
    title = app.screen.query_one("#tt-events").border_title
    return bool(title) and "recorded events" in str(title)


async def test_the_console_on_two_local_clusters_keeps_them_apart(
    fluss_server: FlussServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    lc = LocalCluster(tmp_path / "run")
    start = {**fluss_server.start_kwargs(), "tablet_servers": 1, "ready_timeout": 180}
    first = await asyncio.to_thread(lc.start, **start)
    try:
        in_first = await _first_console(lc.run_dir, first)
    finally:
        await asyncio.to_thread(lc.stop, graceful=False)
    second = await asyncio.to_thread(lc.start, **start)
    try:
        assert second.run_id != first.run_id
        await pf.write_log_table(second.bootstrap_servers, "epochs", "t", 7)
        await _second_console(lc.run_dir, second, in_first)
    finally:
        await asyncio.to_thread(lc.stop, graceful=False)
        assert not our_java_processes(lc.run_dir)
    info = subprocess.run(
        [sys.executable, "-m", "konsole.cli", "history", "info", "--local", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")},
    )
    assert info.returncode == 0, info.stderr
    epochs = json.loads(info.stdout)["epochs"]
    assert [e["identity"].get("run_id") for e in epochs] == [first.run_id, second.run_id]
    assert epochs[1]["reason"].startswith("another local cluster run")

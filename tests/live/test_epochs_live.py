"""A history knows its cluster, and the console keeps two clusters apart, on real servers of
both generations (issue 24).

One small local cluster is started, the console is opened on it as ``konsole --local``
opens it (the options resolved by :class:`konsole.cli.options.ConnectionArgs`, the feed made
by :func:`konsole.cli.console.live_feed`, the app headless under the pilot) while a table is
created and written by pyfluss, and it is closed; ``konsole record --local`` then records a
few polls into another history file. The cluster is stopped and a new one is started in the
same run dir (new run id, new ports, new data: the same database and table names with fewer
rows, nothing written while watched), and recorded into the same file. The two tests share
these two clusters (a module fixture: starting them is most of their time):

- the recorded file holds two epochs, and nothing of the first cluster reads as the
  second's: the table's offsets and rates, a server's metric series, a moment of time
  travel, the events of the latest epoch;
- the console opened again on its history file shows nothing of the first cluster as the
  second's: the recent events, the time-travel picker, the table's rows/s sparkline, a
  moment of time travel; a moment of the first cluster is marked as another cluster's;
  `konsole history info --local` lists two epochs.

Every wait is bounded; every process runs with a timeout.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from konsole.cli.console import live_feed
from konsole.cli.options import ConnectionArgs
from konsole.collect.history.rows import snapshot_at
from konsole.localcluster import LocalCluster
from konsole.localcluster.cluster import ClusterDescription
from konsole.model.identity import ClusterIdentity
from konsole.ui.app import KonsoleApp
from konsole.ui.modals.time_travel import TimeTravelScreen
from konsole.ui.screens.tables.detail import TableDetailScreen
from konsole.ui.widgets.spark import Spark
from konsole.ui.widgets.status_bar import status_text
from store import open_reader
from tests._testutil import pyfluss_data as pf
from tests._testutil.cli import run_konsole
from tests._testutil.console import until
from tests.conftest import FlussServer, our_java_processes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

REPO = Path(__file__).resolve().parents[2]
POLLS = 4
INTERVAL = 1.0
TABLE = "epochs.t"


konsole = partial(run_konsole, timeout=90)


@dataclass(frozen=True)
class Epochs:
    """The two clusters, one after the other in one run dir, and what was kept of them."""

    lc: LocalCluster
    first: ClusterDescription
    second: ClusterDescription  # still running while the tests run
    in_first: float  # the time of a poll the console took of the first cluster
    history: Path  # `konsole record`'s file
    data: Path  # XDG_DATA_HOME: the console's own history file lives there


def record(lc: LocalCluster, history: Path) -> None:
    recorded = konsole(
        "record",
        "--local",
        "--run-dir",
        str(lc.run_dir),
        "--history",
        str(history),
        "--interval",
        "1",
        "--count",
        str(POLLS),
    )
    assert recorded.returncode == 0, recorded.stderr


@pytest.fixture(scope="module")
def epochs(fluss_server: FlussServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Epochs]:
    tmp = tmp_path_factory.mktemp(f"epochs-{fluss_server.generation}")
    history, data = tmp / "local.sqlite", tmp / "data"
    lc = LocalCluster(tmp / "run")
    start = {**fluss_server.start_kwargs(), "tablet_servers": 1, "ready_timeout": 180}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_DATA_HOME", str(data))
        first = lc.start(**start)
        try:
            # The console watches while the table is created and 50 rows are written.
            in_first = asyncio.run(_first_console(lc.run_dir, first))
            record(lc, history)
        finally:
            lc.stop(graceful=False)
            assert not our_java_processes(lc.run_dir)
        second = lc.start(**start)
        try:
            assert second.run_id != first.run_id
            asyncio.run(pf.write_log_table(second.internal_bootstrap_servers, "epochs", "t", 7))
            record(lc, history)
            yield Epochs(lc, first, second, in_first, history, data)
        finally:
            lc.stop(graceful=False)
            assert not our_java_processes(lc.run_dir)


# =========================================================================== the history


def test_two_local_clusters_in_one_history_are_two_epochs(epochs: Epochs) -> None:
    history = epochs.history
    first, second = epochs.first.to_dict(), epochs.second.to_dict()
    assert first["run_id"] and second["run_id"] and first["run_id"] != second["run_id"]

    info = konsole("history", "info", "--history", str(history), "--format", "json")
    assert info.returncode == 0, info.stderr
    epochs_listed = json.loads(info.stdout)["epochs"]
    assert [e["identity"].get("run_id") for e in epochs_listed] == [
        first["run_id"],
        second["run_id"],
    ]
    assert epochs_listed[1]["reason"].startswith("another local cluster run")
    text = konsole("history", "info", "--history", str(history))
    assert "epochs:    2" in text.stdout, text.stdout

    with open_reader(history) as reader:
        one, two = reader.epochs.all()
        polls = reader.polls()
        assert sum(p.at_ms < two.from_ms for p in polls) >= POLLS - 1
        assert next(p.id for p in polls if p.at_ms >= two.from_ms) == two.first_poll
        # Sparklines and rates: the second cluster's table holds 7 rows, never the first's 50.
        (span,) = [
            s for s in reader.tables_named("epochs", "t") if s.to_ms is None
        ]  # the table of the second cluster
        totals = reader.offset_totals(span.table_id, all_partitions=True)
        assert totals and all(p.at_ms >= two.from_ms for p in totals)
        assert {p.value for p in totals} == {7.0}, totals
        rates = reader.throughput(span.table_id, all_partitions=True)
        assert all(p.value in (0.0, None) for p in rates), rates
        series = reader.metric_series("tablet-server 0", "heap_used")
        assert series and all(p.at_ms >= two.from_ms for p in series)
        # Time travel: a moment of the second epoch shows the second cluster's servers.
        ports = {str(p["endpoint"]) for p in second["processes"] if p.get("endpoint")}
        moment = snapshot_at(reader, polls[-1].at_ms / 1000)
        assert moment is not None and moment.snapshot.view is not None
        assert {s.address for s in moment.snapshot.view.servers} <= ports | _internal(second)
        before = snapshot_at(reader, (two.from_ms - 1) / 1000)
        assert before is not None and before.snapshot.view is not None
        assert not {s.address for s in before.snapshot.view.servers} & (ports | _internal(second))
        # The events of the latest epoch are the second cluster's only.
        assert all(e.at_ms >= two.from_ms for e in reader.events(within_epoch=True))
        held = ClusterIdentity.from_json(two.identity)
        assert held.run_id == second["run_id"] and len(held.servers) == 2
        assert ClusterIdentity.from_json(one.identity).run_id == first["run_id"]
        # The servers' metrics label: the ZooKeeper root's name, on both generations.
        assert held.cluster_id == "fluss", held


def _internal(desc: dict[str, Any]) -> set[str]:
    return set(str(desc["internal_bootstrap_servers"]).split(","))


# =========================================================================== the console


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
        spark = app.screen.query_one("#detail-sparkline", Spark)
        label = app.screen.query_one("#detail-rate-label", Static)
        await until(pilot, "sparkline", lambda: "polls" in str(label.content), 20)
        polls = int(str(label.content).split(",")[1].split()[0])
        assert polls <= _seq(app), (label.content, _seq(app))
        # (a rate not known yet, the first poll's, is a gap: None, never a number)
        assert all(v is None or v == 0.0 for v in spark.values), spark.values
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
    epochs: Epochs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(epochs.data))
    await _second_console(epochs.lc.run_dir, epochs.second, epochs.in_first)
    info = subprocess.run(
        [sys.executable, "-m", "konsole.cli", "history", "info", "--local", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
        env={**os.environ, "XDG_DATA_HOME": str(epochs.data)},
    )
    assert info.returncode == 0, info.stderr
    listed = json.loads(info.stdout)["epochs"]
    assert [e["identity"].get("run_id") for e in listed] == [
        epochs.first.run_id,
        epochs.second.run_id,
    ]
    assert listed[1]["reason"].startswith("another local cluster run")

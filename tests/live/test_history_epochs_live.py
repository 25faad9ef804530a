"""A history knows its cluster, on real servers of both generations.

A small local cluster is started, a table is written by pyfluss, and ``konsole record
--local`` records a few polls into one history file; the cluster is stopped and a new one
is started in the same run dir (new run id, new ports, new data: the same database and
table names, fewer rows), and recorded into the same file. The file then holds two epochs,
and nothing of the first cluster reads as the second's: the table's offsets and rates, a
server's metric series, a moment of time travel, the events of the latest epoch.
Every process runs with a timeout.
"""

from __future__ import annotations

import asyncio
import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from konsole.collect.history import snapshot_at
from konsole.localcluster import LocalCluster
from konsole.model.identity import ClusterIdentity
from store import open_reader
from tests._testutil import pyfluss_data as pf
from tests._testutil.cli import run_konsole
from tests.conftest import FlussServer, our_java_processes

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
POLLS = 4


konsole = partial(run_konsole, timeout=90)


def start_and_record(
    lc: LocalCluster, server: FlussServer, history: Path, rows: int
) -> dict[str, Any]:
    desc = lc.start(**server.start_kwargs(), tablet_servers=1, ready_timeout=180).to_dict()
    try:
        asyncio.run(pf.write_log_table(desc["internal_bootstrap_servers"], "epochs", "t", rows))
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
    finally:
        lc.stop(graceful=False)
        assert not our_java_processes(Path(desc["run_dir"]))
    return desc


def test_two_local_clusters_in_one_history_are_two_epochs(
    fluss_server: FlussServer, tmp_path: Path
) -> None:
    history = tmp_path / "local.sqlite"
    lc = LocalCluster(tmp_path / "run")
    first = start_and_record(lc, fluss_server, history, rows=50)
    second = start_and_record(lc, fluss_server, history, rows=7)
    assert first["run_id"] and second["run_id"] and first["run_id"] != second["run_id"]

    info = konsole("history", "info", "--history", str(history), "--format", "json")
    assert info.returncode == 0, info.stderr
    epochs = json.loads(info.stdout)["epochs"]
    assert [e["identity"].get("run_id") for e in epochs] == [first["run_id"], second["run_id"]]
    assert epochs[1]["reason"].startswith("another local cluster run")
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

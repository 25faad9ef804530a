"""The session cluster itself: ready, answering, exporting metrics, written to by pyfluss."""

from __future__ import annotations

import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from konsole.localcluster.probe import probe_metadata
from tests._testutil import pyfluss_data as pf
from tests.conftest import TABLET_SERVERS, our_java_processes


def _processes(desc: dict[str, Any], role: str) -> list[dict[str, Any]]:
    return [p for p in desc["processes"] if p["role"] == role]


def test_every_server_is_alive_and_known_to_the_coordinator(fluss_cluster: dict[str, Any]) -> None:
    assert fluss_cluster["running"]
    assert all(p["alive"] for p in fluss_cluster["processes"])
    tablet = _processes(fluss_cluster, "tablet-server")
    assert [p["id"] for p in tablet] == list(range(TABLET_SERVERS))
    (coord,) = _processes(fluss_cluster, "coordinator")
    view = probe_metadata("127.0.0.1", coord["ports"]["rpc"])
    assert view is not None
    assert view.tablet_servers == frozenset(range(TABLET_SERVERS))
    assert view.coordinator == ("127.0.0.1", coord["ports"]["rpc"])


def _scrape(url: str) -> str:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=10) as resp:
        assert resp.status == 200
        return resp.read().decode()


def test_each_server_exports_fluss_metrics(fluss_cluster: dict[str, Any]) -> None:
    for proc in fluss_cluster["processes"]:
        if proc["role"] == "zookeeper":
            assert proc["metrics_url"] is None
            continue
        families = {f.name: f for f in text_string_to_metric_families(_scrape(proc["metrics_url"]))}
        scope = "fluss_coordinator_" if proc["role"] == "coordinator" else "fluss_tabletserver_"
        ours = [name for name in families if name.startswith(scope)]
        assert len(ours) > 10, f"{proc['role']} {proc['id']} exports too few metrics: {ours}"
        if proc["role"] == "tablet-server":
            samples = families["fluss_tabletserver_logicalStorage_logSize"].samples
            assert {s.labels["server_id"] for s in samples} == {str(proc["id"])}
        else:
            assert "fluss_coordinator_activeCoordinatorCount" in families


def _mapped_rocksdb_libraries(pid: int) -> set[str]:
    """The paths of RocksDB's native library the process has loaded (its memory map)."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return {line.split(None, 5)[5] for line in maps.splitlines() if "librocksdbjni" in line}


async def test_each_server_keeps_rocksdbs_library_in_its_own_run_dir(
    fluss_cluster: dict[str, Any], bootstrap: str
) -> None:
    """A tablet server copies RocksDB's native library (10 MB) into its temp dir when it
    leads a KV bucket, and a killed one leaves it there: in the machine's /tmp the copies
    of killed test servers had filled 24.5 GB, and the disk the 1.0 servers report read
    80% used. The copy must be in the server's own run dir (gone with the cluster)."""
    conn = await pf.connect(bootstrap)
    try:
        db = await pf.create_database(conn.get_admin(), pf.unique_name("rocks"))
        # Six buckets on three servers: the leaders, which open RocksDB, are spread.
        await pf.create_pk_table(conn, db, "kv", buckets=6)
    finally:
        await pf.close_connection(conn)
    system_tmp = Path(tempfile.gettempdir()).resolve()
    run_dir = Path(fluss_cluster["run_dir"]).resolve()
    loaded = 0
    # The cluster's live processes now (a test before may have restarted a server).
    for pid in our_java_processes(Path(fluss_cluster["run_dir"])):
        for path in map(Path, _mapped_rocksdb_libraries(pid)):
            loaded += 1
            assert path.resolve().is_relative_to(run_dir), (path, run_dir)
            assert path.resolve().parent != system_tmp, path
    assert loaded, "no tablet server loaded RocksDB: the test saw nothing"

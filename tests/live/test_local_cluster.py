"""The session cluster itself: ready, answering, exporting metrics, written to by pyfluss."""

from __future__ import annotations

import urllib.request
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from konsole.localcluster.probe import probe_metadata
from tests.conftest import TABLET_SERVERS


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

"""Small disks for local tablet servers: ``--disk`` parsed, data dirs in server.yaml (the
tmpfs mounts themselves: tests/system/test_localcluster_mounts.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from konsole.errors import ClusterError
from konsole.localcluster import LocalCluster
from konsole.localcluster.config import write_server_config
from konsole.localcluster.disks import parse_disks
from konsole.localcluster.state import COORDINATOR, TABLET_SERVER, ClusterState


def test_parse_disks() -> None:
    assert parse_disks(["ts0=256m", "ts1=64m,1g"], 2) == {0: (256,), 1: (64, 1024)}
    assert parse_disks([], 3) == {}


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("ts0", "tsN=SIZE"),
        ("cs0=64m", "tsN=SIZE"),
        ("ts=64m", "tsN=SIZE"),
        ("ts5=64m", "no tablet server 5"),
        ("ts0=lots", "not a size"),
        ("ts0=1m", "outside"),
    ],
)
def test_parse_disks_rejects(spec: str, words: str) -> None:
    with pytest.raises(ClusterError, match=words):
        parse_disks([spec], 2)


def test_a_server_given_twice_is_an_error() -> None:
    with pytest.raises(ClusterError, match="given twice"):
        parse_disks(["ts0=64m", "ts0=32m"], 1)


def _yaml(path: str) -> dict[str, str]:
    text = (Path(path) / "server.yaml").read_text()
    return dict(line.split(": ", 1) for line in text.splitlines())


def test_server_yaml_names_one_dir_as_data_dir_and_several_as_data_dirs(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path)
    state = ClusterState("1.0-SNAPSHOT", "/lib", "java", 17, [], [])
    state.servers.append(cluster._new_server("zookeeper", 0, ["client"]))
    state.servers.append(cluster._new_server(COORDINATOR, 0, ["rpc", "metrics"]))
    for i in range(3):
        state.servers.append(cluster._new_server(TABLET_SERVER, i, ["rpc", "metrics"]))
    ts0, ts1, ts2 = state.servers[2:]
    ts1.data_dirs = ["/mnt/a"]
    ts2.data_dirs = ["/mnt/a2", "/mnt/b2"]
    for s in state.servers:
        write_server_config(cluster.run_dir, state, s, {}, [])
    assert _yaml(ts0.config_dir)["data.dir"] == ts0.data_dir
    assert "data.dirs" not in _yaml(ts0.config_dir)
    assert _yaml(ts1.config_dir)["data.dir"] == "/mnt/a"
    assert "data.dirs" not in _yaml(ts1.config_dir)
    assert _yaml(ts2.config_dir)["data.dirs"] == "/mnt/a2,/mnt/b2"

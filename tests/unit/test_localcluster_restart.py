"""Restarting one server with other settings, then with the cluster's own again."""

from __future__ import annotations

from pathlib import Path

import pytest

from konsole.localcluster.cluster import ClusterError, ServerState
from konsole.localcluster.config import reconfigure


def _server(tmp_path: Path, role: str = "tablet-server", sid: int = 1) -> ServerState:
    conf = tmp_path / f"{role}-{sid}" / "conf"
    conf.mkdir(parents=True)
    (conf / "server.yaml").write_text("tablet-server.id: 1\ndata.dir: /d\nx.ratio: 0.9\n")
    (conf / "server.yaml").chmod(0o600)
    return ServerState(role, sid, {"rpc": 1}, str(conf), str(tmp_path / "data"), "log")


def _yaml(server: ServerState) -> str:
    return (Path(server.config_dir) / "server.yaml").read_text()


def test_settings_apply_for_one_start_and_go_back_after(tmp_path: Path) -> None:
    server = _server(tmp_path)
    original = _yaml(server)
    reconfigure(server, [(None, "x.ratio", "0.05"), ("ts1", "y.interval", "1s")])
    assert _yaml(server) == "tablet-server.id: 1\ndata.dir: /d\nx.ratio: 0.05\ny.interval: 1s\n"
    assert (Path(server.config_dir) / "server.yaml").stat().st_mode & 0o777 == 0o600
    reconfigure(server, [(None, "x.ratio", "0.5")])  # replaces, does not stack
    assert "y.interval" not in _yaml(server) and "x.ratio: 0.5\n" in _yaml(server)
    reconfigure(server, [])
    assert _yaml(server) == original


def test_no_settings_and_no_override_leave_the_config_alone(tmp_path: Path) -> None:
    server = _server(tmp_path)
    reconfigure(server, [])
    assert not (Path(server.config_dir) / "server.base.yaml").exists()


@pytest.mark.parametrize(
    ("target", "message"), [("ts2", "does not name tablet-server 1"), ("cs", "does not name")]
)
def test_a_setting_for_another_server_is_refused(tmp_path: Path, target: str, message: str) -> None:
    with pytest.raises(ClusterError, match=message):
        reconfigure(_server(tmp_path), [(target, "k", "v")])


def test_zookeeper_takes_no_settings(tmp_path: Path) -> None:
    zk = _server(tmp_path, "zookeeper", 0)
    with pytest.raises(ClusterError, match="coordinators and tablet servers only"):
        reconfigure(zk, [(None, "k", "v")])

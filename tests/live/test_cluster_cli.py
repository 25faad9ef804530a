"""`konsole cluster ...` end to end: real Java processes, each test with its own run dir."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from konsole.localcluster import LocalCluster
from konsole.localcluster import cluster as cluster_mod
from konsole.localcluster.probe import probe_metadata
from tests._testutil.cli import run_konsole
from tests.conftest import FlussServer, our_java_processes

pytestmark = pytest.mark.slow


konsole = partial(run_konsole, timeout=240)


def metadata_ids(port: int) -> frozenset[int] | None:
    view = probe_metadata("127.0.0.1", port)
    return None if view is None else view.tablet_servers


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


# Fed through the real SASL path (server.yaml's JAAS config); must surface nowhere else.
SECRET = "Xq7-sasl-Secret-4711"


def assert_secret_nowhere(run: Path, *outputs: subprocess.CompletedProcess[str]) -> None:
    """Not in any command output, the state file, or any log the servers or runner wrote."""
    for out in outputs:
        assert SECRET not in out.stdout and SECRET not in out.stderr, out.args
    checked = 0
    for path in run.rglob("*"):
        if path.is_file() and path.name not in ("server.yaml", "server.base.yaml"):
            assert SECRET.encode() not in path.read_bytes(), path
            checked += 1
    assert checked >= 5  # cluster.json, logs, .out files: the scan saw them
    yamls = list(run.rglob("server.yaml"))
    assert yamls and all(SECRET in p.read_text() for p in yamls)  # it really was fed


def test_start_status_kill_restart_stop(fluss_server: FlussServer, tmp_path: Path) -> None:
    run = str(tmp_path / "run")
    started = konsole(
        "cluster",
        "start",
        *fluss_server.cli_args(),
        "--tablet-servers",
        "2",
        "--sasl",
        f"admin:{SECRET}",
        "--json",
        "--run-dir",
        run,
    )
    assert started.returncode == 0, started.stderr
    desc = json.loads(started.stdout)
    outputs = [started]
    try:
        assert desc["sasl"] == {"enabled": True, "mechanism": "PLAIN", "users": ["admin"]}
        assert desc["version"] == fluss_server.version and desc["running"]
        assert desc["fluss_home"] == fluss_server.fluss_home
        roles = [(p["role"], p["id"], p["alive"]) for p in desc["processes"]]
        assert roles == [
            ("zookeeper", 0, True),
            ("coordinator", 0, True),
            ("tablet-server", 0, True),
            ("tablet-server", 1, True),
        ]
        coord = desc["processes"][1]
        assert coord["metrics_url"].startswith("http://127.0.0.1:")
        assert all(Path(p["log"]).exists() for p in desc["processes"])
        assert metadata_ids(coord["ports"]["rpc"]) == {0, 1}

        # A second start on a live run dir never starts a duplicate.
        again = konsole("cluster", "start", *fluss_server.cli_args(), "--run-dir", run)
        assert again.returncode == 1 and "already running" in again.stderr
        assert len(our_java_processes(Path(desc["run_dir"]))) == 4

        status = konsole("cluster", "status", "--format", "json", "--run-dir", run)
        assert status.returncode == 0 and json.loads(status.stdout)["running"]
        text_status = konsole("cluster", "status", "--run-dir", run)
        assert "SASL/PLAIN users: admin" in text_status.stdout
        outputs += [again, status, text_status]

        ts1 = desc["processes"][3]
        killed = konsole("cluster", "kill", "ts", "1", "--run-dir", run)
        assert killed.returncode == 0, killed.stderr
        after = json.loads(konsole("cluster", "status", "--json", "--run-dir", run).stdout)
        assert [p["alive"] for p in after["processes"]] == [True, True, True, False]
        # The coordinator drops it once its ZooKeeper session expires (10 s in our config).
        wait_for(lambda: metadata_ids(coord["ports"]["rpc"]) == {0}, 40, "ts 1 to leave")

        restarted = konsole("cluster", "start-server", "ts", "1", "--run-dir", run)
        assert restarted.returncode == 0, restarted.stderr
        back = json.loads(konsole("cluster", "status", "--json", "--run-dir", run).stdout)
        assert back["processes"][3]["alive"] and back["processes"][3]["ports"] == ts1["ports"]
        assert metadata_ids(coord["ports"]["rpc"]) == {0, 1}
        assert metadata_ids(ts1["ports"]["rpc"]) == {0, 1}
    finally:
        stopped = konsole("cluster", "stop", "--run-dir", run)
    assert stopped.returncode == 0 and "stopped 4 processes" in stopped.stdout
    assert our_java_processes(Path(desc["run_dir"])) == []
    assert_secret_nowhere(Path(run), *outputs, stopped)
    # Nothing to stop, nothing running: one code for both (docs/cli.md, unavailable)
    twice = konsole("cluster", "stop", "--run-dir", run)
    assert twice.returncode == 69 and "konsole: error: nothing is running" in twice.stderr
    assert konsole("cluster", "status", "--run-dir", run).returncode == 69


def test_port_taken_means_another_port(
    fluss_server: FlussServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ZooKeeper is handed a port someone else holds: the runner notices and picks another."""
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    taken = squatter.getsockname()[1]
    real = cluster_mod.free_ports
    calls = {"n": 0}

    def first_call_gets_a_taken_port(n: int, host: str = "127.0.0.1") -> list[int]:
        calls["n"] += 1
        return [taken] if calls["n"] == 1 else real(n, host)

    monkeypatch.setattr(cluster_mod, "free_ports", first_call_gets_a_taken_port)
    lc = LocalCluster(tmp_path / "run")
    try:
        desc = lc.start(
            **fluss_server.start_kwargs(), tablet_servers=1, progress=lambda _line: None
        )
        zk_port = desc.processes[0].ports["client"]
        assert zk_port != taken
        assert metadata_ids(desc.processes[1].ports["rpc"]) == {0}
    finally:
        lc.stop(graceful=False)
        squatter.close()
    assert our_java_processes(lc.run_dir) == []


def test_failed_start_shows_the_log_and_cleans_up(
    fluss_server: FlussServer, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    # A tablet server whose listener cannot be parsed fails during start-up.
    result = konsole(
        "cluster",
        "start",
        *fluss_server.cli_args(),
        "--run-dir",
        str(run),
        "--set",
        "ts0:bind.listeners=not a listener",
        "--sasl",
        f"admin:{SECRET}",
        "--timeout",
        "60",
    )
    assert result.returncode == 1
    assert "tablet-server 0 exited during start-up" in result.stderr
    assert "last lines of" in result.stderr
    assert_secret_nowhere(run, result)
    assert our_java_processes(run.resolve()) == []
    assert os.path.exists(run / "logs" / "tablet-server-0.log")

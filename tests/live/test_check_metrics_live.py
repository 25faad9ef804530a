"""`konsole check` and the servers' metrics, against the session cluster (both generations):
not configured, a wrong ``--metrics-port``, the right endpoints.

The local cluster's servers share one host and each exports Prometheus on its own port, so
no single ``--metrics-port`` reaches them all: the right-endpoints case is a profile with
explicit ``metrics = [...]`` URLs (the ports the cluster's description lists), and
``--metrics-port`` with one tablet server's port shows that port scraped on the host
metadata names (that server judged, the others' metrics unknown).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from konsole.model.health import METRIC_RULES
from tests.conftest import FlussServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 10.0


def check(*args: str, config: Path | None = None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k != "FLUSS_BOOTSTRAP"}
    env["KONSOLE_CONFIG"] = str(config or "/nonexistent/konsole-check-metrics.toml")
    proc = subprocess.run(
        [sys.executable, "-m", "konsole.cli", "check", "-t", f"{TIMEOUT:g}", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=TIMEOUT + 20,  # a safety net: the check ends on its own
        check=False,
    )
    print(f"[exit {proc.returncode}] {proc.stdout.strip()[:800]}")
    return proc.returncode, proc.stdout


def check_json(*args: str, config: Path | None = None) -> tuple[int, dict[str, Any]]:
    code, out = check(*args, "--format", "json", config=config)
    return code, json.loads(out)


def settled(*args: str, want: int, config: Path | None = None) -> dict[str, Any]:
    """The check's JSON once it exits ``want`` (a cluster just used by another test may
    still be settling); bounded in count and time."""
    deadline = time.monotonic() + 60
    seen = []
    for _ in range(20):
        code, data = check_json(*args, config=config)
        if code == want:
            return data
        seen.append(f"{code} {data['summary']}")
        if time.monotonic() > deadline:
            break
        time.sleep(1.0)
    raise AssertionError(f"exit {want} not seen; last: {seen[-3:]}")


def rules(data: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(f["status"], f["rule"], f["subject"]) for f in data["findings"]}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def metrics_urls(cluster: dict[str, Any], role: str) -> dict[int, str]:
    """Server id -> its Prometheus URL, for the servers of ``role``."""
    return {
        int(p["id"]): str(p["metrics_url"])
        for p in cluster["processes"]
        if p.get("metrics_url") and p["role"] == role
    }


def test_without_metrics_configured_the_check_is_ok_and_lists_the_metric_rules(
    bootstrap: str,
) -> None:
    data = settled("--bootstrap", bootstrap, want=0)
    assert data["status"] == "OK"
    assert data["metrics"] == {
        "origin": "none",
        "not_configured": list(METRIC_RULES),
        "answered": [],
        "failed": [],
    }
    assert ("GREEN", "metrics_not_configured", "cluster") in rules(data)
    assert not [f for f in data["findings"] if f["rule"] == "metrics_unknown"]
    for label in ("disk_usage_max", "write_locked_servers", "kv_rejections"):
        measure = data["measures"][label]
        assert measure["value"] is None and measure["unknown_because"] == "metrics not configured"
    code, out = check("--bootstrap", bootstrap)
    assert code == 0, out
    first = out.splitlines()[0]
    assert first.startswith("FLUSS OK: healthy; metrics not configured; ")
    assert "'disk_usage_max'=U;" in first
    assert "[GREEN] cluster: metrics not configured: " in out


def test_a_wrong_metrics_port_is_a_warning_naming_the_endpoint(bootstrap: str) -> None:
    port = closed_port()
    code, data = check_json("--bootstrap", bootstrap, "--metrics-port", str(port))
    assert code == 1 and data["status"] == "WARNING", data["summary"]
    assert data["metrics"]["origin"] == "configured" and not data["metrics"]["answered"]
    (failed,) = data["metrics"]["failed"]
    assert f":{port}/metrics: unreachable" in failed
    subjects = {f["subject"] for f in data["findings"] if f["rule"] == "metrics_unknown"}
    assert any(s.startswith("metrics http://") and s.endswith(f":{port}/metrics") for s in subjects)
    assert {"tablet-server 0", "tablet-server 1", "tablet-server 2"} <= subjects
    code, out = check("--bootstrap", bootstrap, "--metrics-port", str(port))
    assert code == 1 and out.startswith("FLUSS WARNING: metrics http://")
    assert f":{port}/metrics: unreachable" in out.splitlines()[0]  # the summary names it


def test_one_servers_port_is_scraped_on_the_host_metadata_names(
    fluss_cluster: dict[str, Any], bootstrap: str
) -> None:
    url = metrics_urls(fluss_cluster, "tablet-server")[0]
    port = urlsplit(url).port
    assert port is not None
    code, data = check_json("--bootstrap", bootstrap, "--metrics-port", str(port))
    assert code == 1, data["summary"]  # the other two servers' metrics are unknown
    (answered,) = data["metrics"]["answered"]
    assert answered.endswith(f":{port}/metrics")
    unknown = {f["subject"] for f in data["findings"] if f["rule"] == "metrics_unknown"}
    assert unknown == {"tablet-server 1", "tablet-server 2"}  # server 0 was judged


def test_the_right_endpoints_have_the_metric_rules_judged(
    fluss_cluster: dict[str, Any], fluss_server: FlussServer, bootstrap: str, tmp_path: Path
) -> None:
    roles = ("coordinator", "tablet-server")
    urls = sorted(u for role in roles for u in metrics_urls(fluss_cluster, role).values())
    assert len(urls) == 4  # the coordinator and three tablet servers
    config = tmp_path / "config.toml"
    listed = ", ".join(f'"{u}"' for u in urls)
    config.write_text(f'[profiles.here]\nbootstrap = "{bootstrap}"\nmetrics = [{listed}]\n')
    data = settled("--profile", "here", want=0, config=config)
    assert data["metrics"]["origin"] == "configured"
    assert sorted(data["metrics"]["answered"]) == urls and not data["metrics"]["failed"]
    assert data["metrics"]["not_configured"] == []
    assert not [f for f in data["findings"] if f["rule"].startswith("metrics_")]
    disk = data["measures"]["disk_usage_max"]
    if fluss_server.is_1_0:  # judged: a value, the disk rule's limits beside it
        assert disk["value"] is not None and 0 <= disk["value"] <= 1
        assert data["measures"]["write_locked_servers"]["value"] == 0
    else:  # read, but 0.9.1 servers do not export it
        assert disk["value"] is None
        assert disk["unknown_because"] == "no tablet server exports it (the 1.0 line does)"

"""`konsole serve` as a subprocess on two real clusters, scraped by a real Prometheus.

Per server generation: cluster ``b`` is the session cluster, cluster ``a`` a small one of
this module's own (it is faulted). One serve process polls both every second and records
each into its own history file (under a temporary XDG data dir); a real Prometheus
(Debian's ``prometheus``, own data dir, loopback port) scrapes it every second. PromQL
through Prometheus's HTTP API shows 3 tablet servers alive on each cluster; a tablet server
of ``a`` is stopped: Prometheus shows 2 for ``a`` and 3 for ``b``, every scrape after serve
exported the change holding it, and ``b`` kept polling (as often as ``a``) meanwhile. Under
pyfluss writes to ``b``, the dashboard's families (the cluster's throughput, each server's
bytes, CPU and heap) are exported and add up, and Prometheus holds them. The
exposition answers OpenMetrics when asked by ``Accept``, and ``/healthz`` describes the
process. SIGTERM stops serve with exit 0 within 5 s.

Every wait is bounded; everything listens on loopback only.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from konsole.collect.profiles import profile_from_local
from konsole.localcluster import LocalCluster
from konsole.localcluster.ports import free_port
from konsole.localcluster.seed import wait_leaders
from konsole.model.alerts import subject_labels
from tests._testutil import pyfluss_data as pf
from tests._testutil.prometheus import Prometheus, running_prometheus
from tests._testutil.waiting import wait_until
from tests.conftest import TABLET_SERVERS, FlussServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

#: Seconds between serve's polls and between Prometheus's scrapes.
INTERVAL = 1.0
SCRAPE = 1.0
#: The tablet server of cluster a that is stopped.
STOPPED = 2
ALIVE = 'konsole_servers{role="tablet",state="alive"}'
#: The shipped alerting rules, loaded as they are into the Prometheus.
RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "konsole-rules.yml"


def profile_toml(name: str, description: dict[str, Any]) -> str:
    profile = profile_from_local(description)
    quoted = lambda items: "[" + ", ".join(json.dumps(i) for i in items) + "]"  # noqa: E731
    return (
        f"[profiles.{name}]\n"
        f"bootstrap = {json.dumps(','.join(profile.bootstrap))}\n"
        f"coordinators = {quoted(profile.coordinators)}\n"
        f"metrics = {quoted(e.url for e in profile.metrics)}\n"
    )


@dataclass
class Serve:
    proc: subprocess.Popen[str]
    port: int
    data_home: Path
    stderr: list[str] = field(default_factory=list)
    drained: threading.Thread = field(init=False)

    def __post_init__(self) -> None:
        self.drained = threading.Thread(target=self.drain, daemon=True)
        self.drained.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip("\n"))

    def history(self, cluster: str) -> Path:
        return self.data_home / "konsole" / "history" / f"{cluster}.sqlite"


@dataclass
class Fleet:
    server: FlussServer
    a: LocalCluster
    serve: Serve
    prometheus: Prometheus
    #: Cluster b's description (the session cluster: never faulted here).
    b: dict[str, Any]


@pytest.fixture(scope="module")
def fleet(
    fluss_server: FlussServer,
    fluss_cluster: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Fleet]:
    work = tmp_path_factory.mktemp(f"serve-{fluss_server.generation}")
    a = LocalCluster(work / "cluster-a")
    serve: Serve | None = None
    try:
        described = a.start(
            **fluss_server.start_kwargs(), tablet_servers=TABLET_SERVERS, ready_timeout=180
        ).to_dict()
        config = work / "config.toml"
        config.write_text(profile_toml("a", described) + profile_toml("b", fluss_cluster))
        port = free_port()
        data_home = work / "data"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "konsole.cli",
                "serve",
                "--config",
                str(config),
                "--interval",
                str(INTERVAL),
                "--listen",
                f"127.0.0.1:{port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "XDG_DATA_HOME": str(data_home), "PYTHONUNBUFFERED": "1"},
        )
        serve = Serve(proc, port, data_home)
        with running_prometheus(
            work / "prometheus", [f"127.0.0.1:{port}"], SCRAPE, rules=[RULES]
        ) as prom:
            yield Fleet(fluss_server, a, serve, prom, fluss_cluster)
    finally:
        if serve is not None and serve.proc.poll() is None:
            serve.proc.kill()
            serve.proc.wait(timeout=10)
        a.stop(graceful=False)


def alive_by_cluster(prom: Prometheus) -> dict[str, float]:
    return prom.by(ALIVE, "cluster")


def test_prometheus_sees_both_clusters_and_a_stopped_server(fleet: Fleet) -> None:
    prom, serve = fleet.prometheus, fleet.serve
    prom.wait_for(
        "3 tablet servers alive on a and b in Prometheus",
        lambda: alive_by_cluster(prom) == {"a": 3.0, "b": 3.0},
        timeout=60,
    )
    assert prom.targets_up() == 1
    fault_at = time.time()
    fleet.a.stop_server("tablet-server", STOPPED, timeout=60)

    def exported() -> bool:
        text = httpx.get(f"{serve.url}/metrics", timeout=5).text
        return 'konsole_servers{cluster="a",role="tablet",state="alive"} 2.0' in text

    prom.wait_for("serve exports 2 alive on a", exported, timeout=60)
    seen_at = time.time()
    prom.wait_for(
        "Prometheus shows 2 alive on a, 3 on b",
        lambda: alive_by_cluster(prom) == {"a": 2.0, "b": 3.0},
        timeout=60,
    )
    # Order, not wall time: every scrape Prometheus took after serve exported 2 for a holds
    # 2 (so the change reached it at the next scrape), never 3 again; b held 3 throughout.
    prom.wait_for(
        "a scrape of a after serve exported the change",
        lambda: any(t > seen_at for t, _ in prom.samples(ALIVE, 60).get("a", [])),
        timeout=60,
    )
    window = round(time.time() - fault_at) + 10
    series = prom.samples(ALIVE, window)
    after = [v for t, v in series["a"] if t > seen_at]
    assert after and set(after) == {2.0}, series["a"]
    a_values = [v for _, v in series["a"]]
    assert a_values == sorted(a_values, reverse=True), a_values  # 3s, then 2s only
    assert {v for _, v in series["b"]} == {3.0}, series["b"]
    down = prom.by('konsole_tablet_server_up{cluster="a"} == 0', "server")
    assert down == {str(STOPPED): 0.0}
    # b kept polling through a's fault, as often as a (one process polls both): read from
    # the clusters' own history files.
    since = round(fault_at * 1000)
    b_polls = wait_until(
        lambda: polls_since(serve, "b", since),
        lambda polls: len(polls) >= 5,
        "5 polls of b recorded after the fault",
    )
    a_polls = polls_since(serve, "a", since, until=b_polls[-1].at_ms)
    assert all(p.ok for p in b_polls), [p.error for p in b_polls]
    assert len(b_polls) >= len(a_polls) - 1, (len(b_polls), len(a_polls))


def test_the_shipped_rules_alert_on_serves_series(fleet: Fleet) -> None:
    """deploy/prometheus/konsole-rules.yml, evaluated by the real Prometheus on the series
    serve exports: the stopped server of a makes FlussTabletServerDown active (pending
    while its ``for:`` holds, then firing: Prometheus's own clock, not waited for here),
    labelled as konsole labels its own alert (cluster, severity, the subject's server id
    taken from the series) plus the scrape's job and instance; nothing is active for b."""
    prom, serve = fleet.prometheus, fleet.serve
    stopped_on_a(fleet)  # done by the test before when it ran; this one also runs alone

    def down() -> list[dict[str, Any]]:
        return [a for a in prom.alerts() if a["labels"]["alertname"] == "FlussTabletServerDown"]

    (alert,) = prom.wait_for("FlussTabletServerDown active", down, timeout=60)
    assert alert["state"] in ("pending", "firing"), alert
    assert alert["labels"] == {
        "alertname": "FlussTabletServerDown",
        "cluster": "a",
        "severity": "warning",
        **subject_labels(f"tablet-server {STOPPED}"),
        "job": "konsole",
        "instance": f"127.0.0.1:{serve.port}",
    }
    assert float(alert["value"]) == 0.0  # konsole_tablet_server_up of that server
    assert f"Tablet server {STOPPED} of a is not alive" in alert["annotations"]["summary"]
    assert [a["labels"]["alertname"] for a in prom.alerts() if a["labels"]["cluster"] == "b"] == []


def stopped_on_a(fleet: Fleet) -> None:
    """Tablet server STOPPED of cluster a stopped, whether or not a test did it before:
    seen alive through serve in Prometheus first, so that its stop reads as down."""
    state = fleet.a.status()
    assert state is not None
    if any(p.alive for p in state.of_role("tablet-server") if p.id == STOPPED):
        fleet.prometheus.wait_for(
            "3 tablet servers alive on a in Prometheus",
            lambda: alive_by_cluster(fleet.prometheus).get("a") == 3.0,
            timeout=60,
        )
        fleet.a.stop_server("tablet-server", STOPPED, timeout=60)


def polls_since(serve: Serve, cluster: str, since_ms: int, until: int | None = None) -> list[Any]:
    """The polls ``cluster``'s history file holds from ``since_ms`` (to ``until``)."""
    from store import open_reader

    reader = open_reader(serve.history(cluster))
    try:
        return reader.polls(since=since_ms, until=until)
    finally:
        reader.close()


def test_openmetrics_by_accept_and_healthz(fleet: Fleet) -> None:
    serve = fleet.serve
    with httpx.Client(timeout=5) as client:
        om = client.get(
            f"{serve.url}/metrics",
            headers={"Accept": "application/openmetrics-text; version=1.0.0"},
        )
        assert om.headers["content-type"].startswith("application/openmetrics-text")
        assert om.text.rstrip().endswith("# EOF")
        assert "# TYPE konsole_polls counter" in om.text
        text = client.get(f"{serve.url}/metrics")
        assert text.headers["content-type"].startswith("text/plain")
        assert "# EOF" not in text.text
        health = client.get(f"{serve.url}/healthz")
    assert health.status_code == 200
    body = health.json()
    assert body["status"] == "ok"
    assert set(body["clusters"]) == {"a", "b"}
    for cluster in body["clusters"].values():
        assert cluster["running"] and cluster["history"] == "recording" and cluster["polls"] > 0


#: One exposition sample: family, labels, value.
SAMPLE = re.compile(r"^(\w+)\{([^}]*)\} (\S+)$", re.M)
LABEL = re.compile(r'(\w+)="([^"]*)"')


def scrape_of(serve: Serve, cluster: str) -> dict[str, dict[str, float]]:
    """serve's samples for ``cluster``: family -> its ``server`` label ("" without) -> value."""
    out: dict[str, dict[str, float]] = {}
    for family, labels, value in SAMPLE.findall(httpx.get(f"{serve.url}/metrics", timeout=5).text):
        named = dict(LABEL.findall(labels))
        if named.get("cluster") == cluster:
            out.setdefault(family, {})[named.get("server", "")] = float(value)
    return out


def test_the_dashboard_families_follow_pyfluss_writes(fleet: Fleet) -> None:
    """Under pyfluss writes to b: serve's cluster throughput for b is non-zero, the tablet
    servers' own bytes in/s sum to the cluster's in the same scrape, each server's CPU and
    heap are in 0..1 (tablet servers by id, the coordinator by address), and Prometheus
    holds the families too."""
    stop, written, failed = threading.Event(), [0], []

    def writer() -> None:  # bounded: at most 300 writes
        async def write() -> None:
            conn = await pf.connect(str(fleet.b["bootstrap_servers"]))
            try:
                db = pf.unique_name("serve")
                await pf.create_database(conn.get_admin(), db)
                path = await pf.create_log_table(
                    conn, db, pf.unique_name("busy"), buckets=TABLET_SERVERS
                )
                assert await wait_leaders(conn.get_admin(), path, TABLET_SERVERS)
                for _ in range(300):
                    if stop.is_set():
                        return
                    await pf.write_rows(conn, path, 200, start=written[0])
                    written[0] += 200
                    await asyncio.sleep(0.3)
            finally:
                await pf.close_connection(conn)

        try:
            asyncio.run(write())
        except BaseException as e:  # reported by the test, not lost in the thread
            failed.append(e)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    tablets = {str(p["id"]) for p in fleet.b["processes"] if p["role"] == "tablet-server"}
    assert len(tablets) == TABLET_SERVERS, fleet.b["processes"]
    try:
        wait_until(lambda: written[0] or failed, bool, "a pyfluss write to b acknowledged")
        assert not failed, failed

        def busy(samples: dict[str, dict[str, float]]) -> bool:
            return (
                samples.get("konsole_bytes_in_per_second", {}).get("", 0.0) > 0
                and samples.get("konsole_messages_in_per_second", {}).get("", 0.0) > 0
                # the JVMs' CPU load is unknown (negative) until they first measured it
                and set(samples.get("konsole_server_cpu_load", {})) > tablets
            )

        samples = wait_until(lambda: scrape_of(fleet.serve, "b"), busy, "b's throughput", 60)
        prom_in = fleet.prometheus.wait_for(
            "Prometheus holds b's bytes in/s above 0",
            lambda: fleet.prometheus.by("konsole_bytes_in_per_second > 0", "cluster").get("b"),
            timeout=30,
        )
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not failed, failed
    assert prom_in > 0
    per_server = samples["konsole_server_bytes_in_per_second"]
    assert set(per_server) == tablets, per_server
    total = samples["konsole_bytes_in_per_second"][""]
    assert sum(per_server.values()) == pytest.approx(total, rel=1e-6)
    assert set(samples["konsole_server_bytes_out_per_second"]) == tablets
    assert samples["konsole_bytes_out_per_second"][""] >= 0
    for family in ("konsole_server_cpu_load", "konsole_server_heap_used_ratio"):
        servers = samples[family]
        assert set(servers) > tablets, (family, servers)  # and the coordinator
        assert len(set(servers) - tablets) == 1, servers  # b has one coordinator
        assert all(0.0 <= v <= 1.0 for v in servers.values()), (family, servers)


def test_sigterm_stops_within_five_seconds_and_flushes(fleet: Fleet) -> None:
    serve = fleet.serve
    started = time.monotonic()
    serve.proc.send_signal(signal.SIGTERM)
    assert serve.proc.wait(timeout=5) == 0  # docs/serve.md: exits 0 within 5 s
    assert time.monotonic() - started < 5
    serve.drained.join(timeout=10)  # stderr's end: every last line read
    assert not serve.drained.is_alive()
    assert any("stopped on SIGTERM" in line for line in serve.stderr), serve.stderr[-5:]
    from store import open_writer

    for cluster in ("a", "b"):
        open_writer(serve.history(cluster)).close()  # the writer lock was released

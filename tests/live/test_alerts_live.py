"""Alerts to a real Alertmanager from ``konsole serve`` on a real Fluss cluster, both
server generations.

One small cluster per generation (module-scoped: 3 tablet servers; 2 coordinators on the 1.0
line), one real ``prometheus-alertmanager`` (tests/_testutil/alertmanager.py) that routes
every alert to a webhook receiver in the test, and one ``konsole serve --local
--alertmanager URL`` subprocess (short ``--alert-for``, ``--alert-resend``, no hold-down).
A replicated table (pyfluss) puts a replica of every bucket on every tablet server. What
serve holds (firing alerts, delivery counters, poll times) is read from its ``/metrics``.

Tests run in file order; each leaves every server running with its normal settings. Every
wait is bounded; everything listens on loopback.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from konsole.localcluster import LocalCluster
from tests._testutil import pyfluss_data as pf
from tests._testutil.alertmanager import AlertmanagerProcess, Webhook, free_port, wait_for
from tests._testutil.processes import terminate
from tests._testutil.system_tools import need_binary
from tests.conftest import TABLET_SERVERS, FlussServer, our_java_processes

pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(240),
]

VICTIM = 2
LOCK_SETTINGS = [
    "server.data-disk.write-limit-ratio=0.05",
    "server.data-disk.write-recover-ratio=0.04",
    "server.data-disk.check-interval=1s",
]
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
Samples = list[tuple[str, dict[str, str], float]]


@dataclass
class Served:
    """The cluster, the Alertmanager and its webhook, and the serve process."""

    server: FlussServer
    lc: LocalCluster
    am: AlertmanagerProcess
    hook: Webhook
    proc: subprocess.Popen[str]
    port: int
    cluster: str = "local"
    stderr: list[str] = field(default_factory=list)

    def drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip("\n"))

    def scrape(self) -> Samples:
        """serve's /metrics (bounded); fails the test when it does not answer."""
        with _NO_PROXY.open(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as resp:
            text = resp.read().decode()
        return [
            (s.name, s.labels, s.value)
            for family in text_string_to_metric_families(text)
            for s in family.samples
        ]

    def value(self, name: str, **labels: str) -> float:
        found = [v for n, lab, v in self.scrape() if n == name and labels.items() <= lab.items()]
        return sum(found)

    def firing(self, alertname: str) -> bool:
        return self.value("konsole_alerts_firing", alertname=alertname) > 0

    def server_up(self, server: int) -> tuple[float, float | None]:
        """From one scrape: the last poll's time and whether it saw tablet server ``server``
        alive (1), not alive (0) or not at all (None)."""
        samples = self.scrape()
        at = [v for n, _, v in samples if n == "konsole_poll_timestamp_seconds"]
        up = [
            v
            for n, labels, v in samples
            if n == "konsole_tablet_server_up" and labels.get("server") == str(server)
        ]
        return (at[0] if at else 0.0), (up[0] if up else None)


@pytest.fixture(scope="module")
def cluster(
    fluss_server: FlussServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[FlussServer, LocalCluster]]:
    run_dir = tmp_path_factory.mktemp(f"alerts-{fluss_server.generation}")
    lc = LocalCluster(run_dir)
    try:
        description = lc.start(
            **fluss_server.start_kwargs(),
            tablet_servers=TABLET_SERVERS,
            coordinators=2 if fluss_server.is_1_0 else 1,
            ready_timeout=180,
        )
        asyncio.run(_replicated_table(str(description.to_dict()["bootstrap_servers"])))
        yield fluss_server, lc
    finally:
        lc.stop(graceful=False)
        assert our_java_processes(run_dir) == [], "Java processes of the alerts cluster remain"


async def _replicated_table(bootstrap: str) -> None:
    conn = await pf.connect(bootstrap)
    try:
        db = await pf.create_database(conn.get_admin(), pf.unique_name("alerts"))
        path = await pf.create_log_table(
            conn, db, "replicated", buckets=3, replication_factor=TABLET_SERVERS
        )
        await pf.write_rows(conn, path, 30)
    finally:
        await pf.close_connection(conn)


def _serve(
    server: FlussServer,
    lc: LocalCluster,
    am: AlertmanagerProcess,
    hook: Webhook,
    cluster: list[str],
    alerting: list[str],
    name: str = "local",
) -> Served:
    """A `konsole serve` process polling every second (``cluster``: what it polls) that
    posts its alerts to ``am`` with the ``alerting`` options; once it has polled."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "konsole.cli", "serve", *cluster, "--no-history",
         "--interval", "1", "--listen", f"127.0.0.1:{port}", "--alertmanager", am.url,
         *alerting],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    s = Served(server, lc, am, hook, proc, port, name)
    threading.Thread(target=s.drain, daemon=True).start()
    if not wait_for(lambda: _polls(s) >= 3, 60):
        terminate(proc)
        raise AssertionError(f"serve did not poll: {s.stderr[-5:]}")
    return s


@pytest.fixture(scope="module")
def served(
    cluster: tuple[FlussServer, LocalCluster], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    server, lc = cluster
    binary = need_binary("prometheus-alertmanager")
    work = Path(tmp_path_factory.mktemp("alerts-serve"))
    hook = Webhook().start()
    am = AlertmanagerProcess(binary, work / "am", hook.url)
    s: Served | None = None
    try:
        am.start()
        config = work / "config.toml"  # empty: nothing of the operator's config leaks in
        config.write_text("")
        s = _serve(
            server, lc, am, hook,
            ["--local", "--run-dir", str(lc.run_dir), "--config", str(config)],
            ["--alert-for", "2", "--alert-resend", "2", "--alert-keep-firing", "0"],
        )  # fmt: skip
        yield s
        assert s.proc.poll() is None, f"serve exited during the tests: {s.stderr[-5:]}"
    finally:
        if s is not None:
            terminate(s.proc)
        am.stop()
        hook.stop()


def _polls(s: Served) -> float:
    try:
        return s.value("konsole_polls_total")
    except OSError:
        return 0.0


async def _until(probe: Any, timeout: float) -> Any:
    return await asyncio.to_thread(wait_for, probe, timeout)


async def _wait_alert(s: Served, since: int, status: str, timeout: float, **labels: str) -> Any:
    return await asyncio.to_thread(s.hook.wait_alert, since, status, timeout, **labels)


# ------------------------------------------------------------------ both generations


async def test_stopped_tablet_server_fires_also_after_alertmanager_was_down_and_resolves(
    served: Served,
) -> None:
    """One stop of a tablet server proves both: Alertmanager is stopped first, so the alert
    is raised while it is down (serve counts failed posts, keeps polling and answering
    /metrics); once it is back the firing notification arrives, naming the cluster and the
    server; starting the server again delivers the resolved one."""
    s = served
    errors = "konsole_alertmanager_posts_total"
    failed_before = s.value(errors, result="error")
    await asyncio.to_thread(s.am.stop)
    mark = s.hook.mark()
    await asyncio.to_thread(s.lc.stop_server, "ts", VICTIM)
    assert await _until(lambda: s.firing("FlussTabletServerDown"), 90), s.stderr[-5:]
    assert await _until(lambda: s.value(errors, result="error") > failed_before, 30)
    assert s.value("konsole_alertmanager_up") == 0
    # serve keeps polling and answering /metrics while Alertmanager is away (a poll hands
    # its alerts over and goes on while a post hangs: test_alertmanager_sink.py's slow one)
    polls = _polls(s)
    assert await _until(lambda: _polls(s) >= polls + 2, 30), "polling stopped without Alertmanager"
    assert s.value("konsole_alertmanager_up") == 0
    assert s.hook.mark() == mark  # nothing could be delivered
    assert any("alertmanager" in line and "retrying" in line for line in s.stderr)

    await asyncio.to_thread(s.am.start)
    fired = await _wait_alert(
        s, mark, "firing", 30, alertname="FlussTabletServerDown", server=str(VICTIM)
    )
    assert fired["labels"]["cluster"] == s.cluster
    assert fired["labels"]["severity"] == "warning"
    assert f"tablet-server {VICTIM}" in fired["annotations"]["summary"]
    assert await _until(lambda: s.value("konsole_alertmanager_up") == 1, 10)

    mark = s.hook.mark()
    await asyncio.to_thread(s.lc.start_server, "ts", VICTIM, 120.0)
    resolved = await _wait_alert(
        s, mark, "resolved", 120, alertname="FlussTabletServerDown", server=str(VICTIM)
    )
    assert resolved["labels"]["cluster"] == s.cluster
    assert resolved["startsAt"] == fired["startsAt"]
    assert not resolved["endsAt"].startswith("0001")


# ------------------------------------------------------------------ the 1.0 line


def only_1_0(s: Served) -> None:
    if not s.server.is_1_0:
        pytest.skip("the 1.0 line only (0.9.1 has no standby coordinator, no disk write lock)")


async def test_killed_active_coordinator_fires_the_failover_alert(served: Served) -> None:
    s = served
    only_1_0(s)
    active = s.lc.active_coordinator()
    assert active is not None
    mark = s.hook.mark()
    await asyncio.to_thread(s.lc.kill, "coordinator", active)
    try:
        fired = await _wait_alert(s, mark, "firing", 90, alertname="FlussCoordinatorFailover")
        assert fired["labels"]["cluster"] == s.cluster
        assert "failover" in fired["annotations"]["summary"]
    finally:
        await asyncio.to_thread(s.lc.start_server, "coordinator", active, 120.0)


async def test_disk_write_lock_fires_writes_rejected(served: Served) -> None:
    s = served
    only_1_0(s)
    mark = s.hook.mark()
    await asyncio.to_thread(s.lc.stop_server, "ts", VICTIM)
    await asyncio.to_thread(s.lc.start_server, "ts", VICTIM, 120.0, LOCK_SETTINGS)
    try:
        fired = await _wait_alert(
            s, mark, "firing", 90, alertname="FlussWritesRejected", server=str(VICTIM)
        )
        assert fired["labels"]["severity"] == "critical"
        assert "write lock" in fired["annotations"]["summary"]
    finally:
        await asyncio.to_thread(s.lc.stop_server, "ts", VICTIM)
        await asyncio.to_thread(s.lc.start_server, "ts", VICTIM, 120.0)


# ------------------------------------------------------------------ damping (client side)

#: The damped serve's ``--alert-for`` and ``--alert-keep-firing`` (the hold-down), seconds.
DAMP_FOR = 3
HOLD = 45


def _epoch(rfc3339: str) -> float:
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


async def _seen(d: Served, up: float, what: str, timeout: float = 120) -> float:
    """The time of serve's first poll (as its /metrics gives it) that sees VICTIM ``up``."""

    def probe() -> float | None:
        at, seen = d.server_up(VICTIM)
        return at if seen == up else None

    found = await _until(probe, timeout)
    assert found, f"{what}: not within {timeout:g}s ({d.server_up(VICTIM)})"
    return float(found)


@pytest.mark.client_side("damping is konsole's own (konsole.model.alerts); the fault is the same")
async def test_damping_holds_a_flapping_servers_alert_through_its_hold_down(
    served: Served, tmp_path: Path
) -> None:
    """docs/alerts.md's damping, against the real Alertmanager: a second serve (cluster
    label ``damped``, ``--alert-for 3 --alert-keep-firing 45``) sees tablet server 2
    stopped; its alert reaches Alertmanager only once the finding has held for ``for``;
    the server started and stopped again within the hold-down (a flap) neither resolves
    nor pages again; started for good, the alert resolves no sooner than the hold-down
    after the last poll that saw the server down, with the startsAt it fired with."""
    s = served
    config = tmp_path / "damped.toml"
    bootstrap = (await asyncio.to_thread(s.lc.describe)).bootstrap_servers
    config.write_text(f'[profiles.damped]\nbootstrap = "{bootstrap}"\n')
    d = await asyncio.to_thread(
        _serve, s.server, s.lc, s.am, s.hook, ["--config", str(config)],
        ["--alert-for", str(DAMP_FOR), "--alert-resend", "2",
         "--alert-keep-firing", str(HOLD)],
        "damped",
    )  # fmt: skip
    labels = {"cluster": "damped", "alertname": "FlussTabletServerDown", "server": str(VICTIM)}
    mark = s.hook.mark()
    try:
        await asyncio.to_thread(s.lc.stop_server, "ts", VICTIM)
        fired = await _wait_alert(d, mark, "firing", 90, **labels)
        received = min(n.received for n in s.hook.received[mark:] if fired in n.alerts)
        assert received - _epoch(fired["startsAt"]) >= DAMP_FOR  # `for` held it back

        # the flap: up again, down again, within the hold-down
        await asyncio.to_thread(s.lc.start_server, "ts", VICTIM, 120.0)
        up_at = await _seen(d, 1.0, "serve sees the server up")
        assert d.firing("FlussTabletServerDown"), "resolved at once: no hold-down"
        await asyncio.to_thread(s.lc.stop_server, "ts", VICTIM)
        down_at = await _seen(d, 0.0, "serve sees the server down again")
        assert down_at - up_at < HOLD, "the flap outlasted the hold-down: nothing proven"
        flapped = [a for a in s.hook.alerts(mark) if labels.items() <= a["labels"].items()]
        assert {a["status"] for a in flapped} == {"firing"}, flapped
        assert {a["startsAt"] for a in flapped} == {fired["startsAt"]}, flapped

        # up for good: resolved as the one alert it fired as, its endsAt the hold-down
        # after the first poll that saw the server up (later than down_at, a poll seeing
        # it down: resolving at once would end it within the restart's seconds)
        await asyncio.to_thread(s.lc.start_server, "ts", VICTIM, 120.0)
        resolved = await _wait_alert(d, mark, "resolved", HOLD + 90, **labels)
        assert resolved["startsAt"] == fired["startsAt"]
        assert _epoch(resolved["endsAt"]) - down_at >= HOLD, (resolved, down_at)
    finally:
        terminate(d.proc)
        if not _alive(s.lc, VICTIM):
            await asyncio.to_thread(s.lc.start_server, "ts", VICTIM, 120.0)


def _alive(lc: LocalCluster, sid: int) -> bool:
    return any(
        p.role == "tablet-server" and p.id == sid and p.alive for p in lc.describe().processes
    )

"""Alerts to a real Alertmanager from a real Fluss cluster, both server generations.

One small cluster per generation (module-scoped: 3 tablet servers; 2 coordinators on the 1.0
line) and one real ``prometheus-alertmanager`` (tests/_testutil/alertmanager.py) that routes
every alert to a webhook receiver in the test. The alerts are made by the same path serve
runs after each poll: the live poller, ``events.advance``, and the
:class:`~konsole.collect.alertmanager.AlertmanagerSink`, driven by a poll loop in the test.
A replicated table (pyfluss) puts a replica of every bucket on every tablet server.

Tests run in file order; each leaves every server running with its normal settings. Every
wait is bounded; everything listens on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from konsole.collect.alertmanager import AlertmanagerSink
from konsole.collect.connect import build_poller, resolve
from konsole.localcluster import LocalCluster
from konsole.model.alerts import AlertSettings
from konsole.model.events import EventState, advance
from tests._testutil import pyfluss_data as pf
from tests._testutil.alertmanager import AlertmanagerProcess, Webhook, wait_for
from tests._testutil.system_tools import need_binary
from tests.conftest import TABLET_SERVERS, FlussServer, our_java_processes

pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(240),
]

CLUSTER = "alerts-live"
VICTIM = 2
SETTINGS = AlertSettings(for_s=2.0, keep_firing_s=0.0, event_hold_s=60.0)
LOCK_SETTINGS = [
    "server.data-disk.write-limit-ratio=0.05",
    "server.data-disk.write-recover-ratio=0.04",
    "server.data-disk.check-interval=1s",
]


@dataclass
class Served:
    """The cluster, the Alertmanager and the poll loop that feeds the sink."""

    server: FlussServer
    lc: LocalCluster
    am: AlertmanagerProcess
    hook: Webhook
    sink: AlertmanagerSink
    polls: list[float] = field(default_factory=list)

    def firing(self, name: str, **labels: str) -> bool:
        return any(
            a.name == name and all(a.label(k) == v for k, v in labels.items())
            for a in self.sink.firing(CLUSTER)
        )


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
        lc.stop(timeout=60)
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


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served(
    cluster: tuple[FlussServer, LocalCluster], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Served]:
    server, lc = cluster
    binary = need_binary("prometheus-alertmanager")
    hook = Webhook().start()
    am = AlertmanagerProcess(binary, Path(tmp_path_factory.mktemp("am")), hook.url)
    am.start()
    sink = AlertmanagerSink([am.url], SETTINGS, resend_s=2.0, backoff_s=0.5, max_backoff_s=2.0)
    s = Served(server, lc, am, hook, sink)
    stop = asyncio.Event()
    task = asyncio.create_task(_poll_loop(s, stop))
    try:
        # the first polls: a whole cluster, nothing firing
        assert await _until(lambda: len(s.polls) >= 3, 60), "no polls"
        yield s
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)
        await sink.aclose()
        am.stop()
        hook.stop()


async def _poll_loop(s: Served, stop: asyncio.Event) -> None:
    """What serve does for one cluster: poll, derive events and health, hand to the sink."""
    profile = resolve(None, None, True, s.lc.run_dir, None)
    poller, release = build_poller(profile, 1.0)
    state = EventState()
    try:
        async for snapshot in poller.snapshots(stop):
            events, state = advance(state, snapshot)
            await s.sink.on_poll(CLUSTER, snapshot, state.health, events)
            s.polls.append(snapshot.taken_at)
    finally:
        await release()


async def _until(probe: Any, timeout: float) -> Any:
    """Like wait_for, without blocking the event loop the poll loop runs on."""
    return await asyncio.to_thread(wait_for, probe, timeout)


async def _wait_alert(s: Served, since: int, status: str, timeout: float, **labels: str) -> Any:
    return await asyncio.to_thread(s.hook.wait_alert, since, status, timeout, **labels)


# ------------------------------------------------------------------ both generations


async def test_stopped_tablet_server_fires_and_resolves(served: Served) -> None:
    s = served
    mark = s.hook.mark()
    await asyncio.to_thread(s.lc.stop_server, "ts", VICTIM)
    fired = await _wait_alert(
        s, mark, "firing", 90, alertname="FlussTabletServerDown", server=str(VICTIM)
    )
    assert fired["labels"]["cluster"] == CLUSTER
    assert fired["labels"]["severity"] == "warning"
    assert f"tablet-server {VICTIM}" in fired["annotations"]["summary"]

    mark = s.hook.mark()
    await asyncio.to_thread(s.lc.start_server, "ts", VICTIM, 120.0)
    resolved = await _wait_alert(
        s, mark, "resolved", 120, alertname="FlussTabletServerDown", server=str(VICTIM)
    )
    assert resolved["startsAt"] == fired["startsAt"]
    assert not resolved["endsAt"].startswith("0001")


async def test_alert_raised_while_alertmanager_is_down_arrives_when_it_is_back(
    served: Served,
) -> None:
    s = served
    stats = s.sink.stats[0]
    failed_before = stats.posts_failed
    await asyncio.to_thread(s.am.stop)
    mark = s.hook.mark()
    await asyncio.to_thread(s.lc.stop_server, "ts", VICTIM)
    assert await _until(lambda: s.firing("FlussTabletServerDown", server=str(VICTIM)), 90)
    assert await _until(lambda: stats.posts_failed > failed_before, 30)
    polls_while_down = len(s.polls)
    await asyncio.sleep(3)
    assert len(s.polls) >= polls_while_down + 2, "polling waited on Alertmanager"
    assert s.hook.mark() == mark  # nothing could be delivered

    await asyncio.to_thread(s.am.start)
    fired = await _wait_alert(
        s, mark, "firing", 30, alertname="FlussTabletServerDown", server=str(VICTIM)
    )
    assert fired["labels"]["cluster"] == CLUSTER
    assert stats.up is True

    mark = s.hook.mark()
    await asyncio.to_thread(s.lc.start_server, "ts", VICTIM, 120.0)
    await _wait_alert(
        s, mark, "resolved", 120, alertname="FlussTabletServerDown", server=str(VICTIM)
    )


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
        assert fired["labels"]["cluster"] == CLUSTER
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

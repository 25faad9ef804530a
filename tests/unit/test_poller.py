"""Poller: fakes for the client, gather, probes and scrape; no sockets."""

from __future__ import annotations

import asyncio

import pytest

from fluss_proto.errors import UnreachableError
from fluss_proto.model import ClusterHealth, HealthStatus
from konsole.collect.cluster.poller import PollerConfig
from konsole.collect.profiles import Profile
from konsole.model.snapshot import CoordinatorRole
from tests._testutil.builders import addr, view
from tests._testutil.poller import Fakes, V


async def test_a_poll_gathers_probes_and_scrapes() -> None:
    fakes = Fakes()
    poller = fakes.poller()
    s = await poller.poll()
    assert s.ok and s.view is V and s.seq == 1
    assert [c.role for c in s.coordinators] == [CoordinatorRole.ACTIVE]
    assert [m.server_id for m in s.metrics] == ["0"]
    assert [e.server_id for e in s.metrics_errors] == ["1"]
    assert poller.last is s


@pytest.mark.parametrize(
    ("every", "earliest"),
    [
        (1, [True, True, True, True]),
        (2, [True, False, True, False]),
        (3, [True, False, False, True]),
    ],
)
async def test_guided_by_the_previous_view_and_earliest_every_nth_poll(
    every: int, earliest: list[bool]
) -> None:
    fakes = Fakes()
    poller = fakes.poller(earliest_every=every)
    for _ in range(4):
        await poller.poll()
    assert [c["earliest"] for c in fakes.gather_calls] == earliest
    assert [c["previous"] for c in fakes.gather_calls] == [None, V, V, V]


async def test_gather_probes_and_scrape_run_concurrently() -> None:
    # Each part waits until all three have started (no timing: a loaded machine once took
    # 0.146 s for three 50 ms parts at once, against a 0.13 s bound).
    fakes = Fakes(together=3)
    poller = fakes.poller(poll_timeout=2.0)
    s = await poller.poll()
    assert s.ok, s.error


@pytest.mark.parametrize(
    ("fakes", "error"),
    [
        (Fakes(connects=[UnreachableError("none of the bootstrap servers answered")]), "bootstrap"),
        (Fakes(views=[RuntimeError("bug in gather")]), "bug in gather"),
        (Fakes(views=["hang"]), "no answer within 0.1s"),
        (Fakes(views=[view((), coordinator=False)]), "named no servers"),
    ],
)
async def test_a_failed_poll_is_a_snapshot_not_an_exception(fakes: Fakes, error: str) -> None:
    # Only the hang waits the poll timeout out; the others fail at once, and a starved run
    # (nice 19) must not see its deadline first.
    hangs = "no answer within" in error
    poller = fakes.poller(poll_timeout=0.1 if hangs else 10.0)
    s = await poller.poll()
    assert not s.ok and s.view is None
    assert error in (s.error or "")
    assert s.consecutive_failures == 1
    assert [c.role for c in s.coordinators] == [CoordinatorRole.ACTIVE]  # probes still ran


async def test_backoff_while_unreachable_then_reset() -> None:
    down = UnreachableError("down")
    fakes = Fakes(connects=[down, down, down, down, down, None])
    poller = fakes.poller(interval=2.0, max_backoff=10.0)
    delays, failures = [], []
    for _ in range(6):
        s = await poller.poll()
        failures.append(s.consecutive_failures)
        delays.append(poller.next_delay())
    assert failures == [1, 2, 3, 4, 5, 0]
    assert delays == [2.0, 4.0, 8.0, 10.0, 10.0, 2.0]
    assert fakes.connected == 6


async def test_client_dropped_after_a_failed_gather_and_connected_again() -> None:
    fakes = Fakes(views=[V, RuntimeError("lost"), V])
    poller = fakes.poller()
    assert (await poller.poll()).ok
    assert not (await poller.poll()).ok
    assert fakes.clients[0].closed
    assert (await poller.poll()).ok
    assert fakes.connected == 2
    assert [c["previous"] for c in fakes.gather_calls] == [None, V, V]


@pytest.mark.parametrize(
    ("advertised", "result", "health", "health_error"),
    [
        (False, ClusterHealth(3, 3, 1, 1, HealthStatus.GREEN), None, None),
        (True, ClusterHealth(3, 3, 1, 1, HealthStatus.GREEN), HealthStatus.GREEN, None),
        (True, RuntimeError("health timed out"), None, "health timed out"),
    ],
)
async def test_cluster_health_when_advertised(
    advertised: bool,
    result: ClusterHealth | BaseException,
    health: HealthStatus | None,
    health_error: str | None,
) -> None:
    fakes = Fakes(health=result, cluster_health=advertised)
    s = await fakes.poller().poll()
    assert s.ok
    assert (s.health.status if s.health else None) is health
    errors = [e.message for e in s.errors if e.scope == "health"]
    assert errors == ([health_error] if health_error else [])


async def test_polls_never_overlap() -> None:
    fakes = Fakes(delay=0.02)
    poller = fakes.poller()
    results = await asyncio.gather(*(poller.poll() for _ in range(4)))
    assert fakes.max_in_gather == 1
    assert sorted(s.seq for s in results) == [1, 2, 3, 4]


async def test_learns_coordinators_and_forgets_tablet_servers() -> None:
    fakes = Fakes(roles={addr(0): "active", addr(5): "tablet"})
    poller = fakes.poller(coordinators=(), bootstrap=(addr(5), addr(0)))
    first = await poller.poll()
    assert sorted(fakes.probed) == [addr(0), addr(5)]
    assert [c.address for c in first.coordinators] == [addr(0)]
    fakes.probed.clear()
    await poller.poll()
    # metadata named 127.0.0.1:9123 as coordinator; the tablet server is not asked again
    assert fakes.probed == [addr(0)]


async def test_snapshots_loop_stops_cleanly_and_keeps_flat_tasks_and_memory() -> None:
    fakes = Fakes()
    poller = fakes.poller(interval=0.001)
    stop = asyncio.Event()
    baseline_tasks = len(asyncio.all_tasks())
    seen = 0
    async for s in poller.snapshots(stop):
        seen += 1
        assert poller.last is s
        assert len(asyncio.all_tasks()) <= baseline_tasks
        if seen == 50:
            stop.set()
    assert seen == 50
    await poller.aclose()
    assert fakes.clients[-1].closed


async def test_snapshots_loop_wakes_up_on_stop_during_the_wait() -> None:
    fakes = Fakes()
    poller = fakes.poller(interval=30.0)
    stop = asyncio.Event()

    async def consume() -> int:
        n = 0
        async for _ in poller.snapshots(stop):
            n += 1
        return n

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.02)
    stop.set()
    assert await asyncio.wait_for(task, 1.0) == 1


def test_config_from_profile() -> None:
    profile = Profile(
        "p", "profile", (addr(0),), coordinators=(addr(1),), poll_interval=3.0, earliest_every=4
    )
    config = PollerConfig.from_profile(profile, max_backoff=5.0)
    assert (config.interval, config.earliest_every, config.max_backoff) == (3.0, 4, 5.0)
    assert (config.coordinators, config.bootstrap) == ((addr(1),), (addr(0),))

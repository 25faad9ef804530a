"""One server that accepts and never answers (a SIGSTOPped one) never fails the whole poll:
each server's requests have their own deadline inside the poll's budget, the client's
quarantine fails it at once for the rest of the poll, health names it, and the next poll
asks it again on a new connection. Fake servers on loopback, the real client, gather and
poller (``assemble_poller``: the wiring every face uses)."""

from __future__ import annotations

import time

import pytest

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.errors import RequestTimeoutError, ServerSilentError
from fluss_proto.model import HealthStatus
from konsole.collect.cluster.connect import assemble_poller
from konsole.collect.cluster.poller import SERVER_SHARE, Poller, PollerConfig, server_deadline
from konsole.collect.profiles import Profile
from konsole.model.health import HealthRules
from konsole.model.snapshot import ClusterSnapshot
from tests._testutil.fakes import FakeCluster, connect, no_asyncio_complaints
from tests._testutil.judging import health_of
from tests._testutil.unstarved import Stopwatch

__all__ = ["no_asyncio_complaints"]

#: Each server's deadline in these tests (the poll's budget is far larger). The fake
#: servers share the test's event loop, so a starved loop (nice 19 beside the live tests)
#: can find a healthy server's answer and the expired deadline in one turn (at 0.3 s the
#: silent-server poll test failed in a run at nice 19 beside 2 busy loops); 1 s leaves room.
DEADLINE = 1.0
RULES = HealthRules(require_metrics=False)


# =========================================================================== the arithmetic


@pytest.mark.parametrize(
    ("budget", "setting", "expected"),
    [
        (30.0, 2.0, 2.0),  # watch, record, serve: the setting
        (15.58, 2.0, 2.0),  # check -t 20
        (6.0, 2.0, 1.5),  # check -t 8: a quarter of the poll
        (30.0, 5.0, 5.0),  # a profile's longer setting
        (0.2, 2.0, 0.1),  # never below 0.1 s
        (7.77, 9.0, 1.94),  # rounded: it shows in findings
    ],
)
def test_server_deadline_is_the_setting_within_a_share_of_the_poll(
    budget: float, setting: float, expected: float
) -> None:
    assert server_deadline(budget, setting) == expected


def test_server_deadline_leaves_the_poll_room_for_two_waits_and_the_rest() -> None:
    for budget in (0.5, 1.0, 4.4, 15.58, 30.0, 120.0):
        assert 2 * server_deadline(budget) <= budget * 2 * SERVER_SHARE + 0.01


@pytest.mark.parametrize(("budget", "setting"), [(0.0, 2.0), (10.0, 0.0), (-1.0, 2.0)])
def test_server_deadline_refuses_a_budget_or_setting_that_is_not_positive(
    budget: float, setting: float
) -> None:
    with pytest.raises(ValueError, match="positive"):
        server_deadline(budget, setting)


def test_every_poller_config_from_a_profile_carries_the_deadline() -> None:
    profile = Profile("p", "profile", ("127.0.0.1:1",), server_timeout=3.0)
    config = PollerConfig.from_profile(profile)  # poll budget max(3 x 10 s, 5 s)
    assert config.server_timeout == 3.0
    assert config.probe_timeout == 3.0
    short = PollerConfig.from_profile(profile, poll_timeout=4.0)
    assert short.server_timeout == 1.0 and short.probe_timeout == 1.0


# =========================================================================== the client


async def test_a_silent_server_costs_one_timeout_then_fails_at_once_until_the_next_round() -> None:
    async with FakeCluster(tablets=2) as fc:
        client = await connect(
            fc.coordinator.address,
            request_timeout=DEADLINE,
            connect_timeout=DEADLINE,
            retries=0,
            quarantine=True,
        )
        try:
            await client.call(ApiKey.API_VERSIONS, _versions(), node=1)  # connected, answered
            fc.tablets[1].silent = True
            watch = Stopwatch()  # the upper bound less a starved run's CPU waits (nice 19)
            with pytest.raises(ServerSilentError) as first:
                await client.call(ApiKey.API_VERSIONS, _versions(), node=1)
            assert watch.wall() >= DEADLINE and watch.elapsed() < DEADLINE + 1.0
            assert first.value.seconds == DEADLINE and not first.value.again
            assert str(first.value).endswith(f"gave no answer within {DEADLINE:g} s (API_VERSIONS)")
            assert fc.tablets[1].address in client.silent_servers
            assert fc.tablets[1].address not in client.connected_servers  # socket closed
            watch = Stopwatch()
            with pytest.raises(ServerSilentError) as again:
                await client.call(ApiKey.API_VERSIONS, _versions(), node=1)
            assert watch.elapsed() < DEADLINE / 2 and again.value.again
            # the other server is not held up
            await client.call(ApiKey.API_VERSIONS, _versions(), node=0)

            fc.tablets[1].silent = False
            connections = fc.tablets[1].connections
            client.new_round()
            assert not client.silent_servers
            await client.call(ApiKey.API_VERSIONS, _versions(), node=1)  # a new connection
            assert fc.tablets[1].connections == connections + 1
        finally:
            await client.close()


async def test_without_quarantine_a_timeout_stays_a_plain_timeout_and_is_waited_again() -> None:
    async with FakeCluster(tablets=1) as fc:
        client = await connect(
            fc.coordinator.address, request_timeout=DEADLINE, connect_timeout=DEADLINE, retries=0
        )
        try:
            fc.tablets[0].silent = True
            for _ in range(2):
                t0 = time.monotonic()
                with pytest.raises(RequestTimeoutError) as caught:
                    await client.call(ApiKey.API_VERSIONS, _versions(), node=0)
                assert not isinstance(caught.value, ServerSilentError)
                assert time.monotonic() - t0 >= DEADLINE
            assert not client.silent_servers
        finally:
            await client.close()


# =========================================================================== the poll


async def test_a_server_that_never_answers_does_not_fail_the_poll_and_is_named() -> None:
    async with FakeCluster(tablets=3) as fc:
        for server in fc.servers:  # one database, no tables
            server.handlers[ApiKey.LIST_TABLES] = lambda _s, _f: pb.ListTablesResponse()
        profile = Profile(
            "silent", "--bootstrap", (fc.coordinator.address,), server_timeout=DEADLINE
        )
        config = PollerConfig.from_profile(profile, poll_timeout=10.0)
        assert config.server_timeout == DEADLINE
        live = assemble_poller(
            profile,
            config,
            connect_timeout=profile.connect_timeout,
            request_timeout=profile.request_timeout,
            scrape_timeout=profile.metrics_timeout,
        )
        try:
            first, _ = await _poll_unstarved(live.poller)
            assert first.ok and _named(first) == {}

            fc.tablets[1].silent = True  # SIGSTOP: the kernel still accepts
            hung, took = await _poll_unstarved(live.poller)
            assert hung.ok, hung.error  # the poll completes with what the others said
            assert took < 10.0 * SERVER_SHARE  # one deadline, not the budget
            health = health_of(hung, RULES)
            assert _named(hung) == {"tablet-server 1": f"no answer within {DEADLINE:g} s"}
            assert health.status is HealthStatus.YELLOW
            assert "unreachable" not in {f.rule for f in health.findings}  # not the cluster
            assert hung.view is not None
            answered = {s.node_id for s in hung.view.tablet_servers if s.error is None}
            assert answered == {0, 2}
            assert hung.view.coordinator is not None and hung.view.coordinator.error is None

            connections = fc.tablets[1].connections
            again = await live.poller.poll()  # asked again, on a new connection
            assert again.ok and _named(again) == {
                "tablet-server 1": f"no answer within {DEADLINE:g} s"
            }
            assert fc.tablets[1].connections == connections + 1

            fc.tablets[1].silent = False  # SIGCONT
            back, _ = await _poll_unstarved(live.poller)
            assert back.ok and _named(back) == {}
            assert health_of(back, RULES).status is HealthStatus.GREEN
        finally:
            await live.aclose()


async def _poll_unstarved(poller: Poller, tries: int = 3) -> tuple[ClusterSnapshot, float]:
    """A poll during which this thread did not wait half a server deadline for a CPU (at
    most ``tries`` polls; the last one whatever it met), and its time less those waits. A
    poll starved that long can meet its deadlines on servers that answered at once (CI,
    nice 19: a RED ``coordinator``)."""
    for _ in range(tries):
        watch = Stopwatch()
        snapshot = await poller.poll()
        if watch.wall() - watch.elapsed() < DEADLINE / 2:
            break
    return snapshot, watch.elapsed()


def _named(snapshot: ClusterSnapshot) -> dict[str, str]:
    health = health_of(snapshot, RULES)
    return {f.subject: f.reason for f in health.findings if f.rule == "server_unreachable"}


def _versions() -> pb.ApiVersionsRequest:
    return pb.ApiVersionsRequest(client_software_name="t", client_software_version="0")

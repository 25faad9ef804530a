"""The poller, events and health over the real gather and FlussAdmin, on test_admin's
in-process fake cluster (real request and response messages, no sockets)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.client import Features, TablePath
from fluss_proto.coordinators import CoordinatorProbe
from fluss_proto.model import HealthStatus
from konsole.collect.cluster.poller import Poller, PollerConfig
from konsole.model.events import EventKind, EventState, advance
from konsole.model.health import HealthRules
from tests._testutil.admin import FakeClient, FakeTable
from tests._testutil.judging import health_of


@dataclass
class PollableFake(FakeClient):
    """test_admin's fake plus what the poller asks of a client."""

    closed: bool = False

    @property
    def features(self) -> Features:
        return Features(cluster_health=self.fluss_1_0)

    async def close(self) -> None:
        self.closed = True


def cluster(*, fluss_1_0: bool = False) -> PollableFake:
    client = PollableFake(fluss_1_0=fluss_1_0)
    client.databases.append("db")
    client.tables[TablePath("db", "log")] = FakeTable(1, buckets=6)
    return client


def poller(client: PollableFake) -> Poller:
    async def connect() -> PollableFake:
        return client

    async def probe(addresses: Sequence[str]) -> tuple[CoordinatorProbe, ...]:
        return tuple(CoordinatorProbe(a, "active") for a in addresses)

    return Poller(PollerConfig(coordinators=("127.0.0.1:9000",)), connect=connect, probe=probe)


RULES = HealthRules(require_metrics=False)


async def test_a_server_leaving_through_the_real_gather() -> None:
    client = cluster()
    p = poller(client)
    state = EventState()
    first = await p.poll()
    events, state = advance(state, first)
    assert first.ok and events == []
    assert health_of(first, RULES).status is HealthStatus.GREEN
    assert first.view is not None and len(first.view.buckets) == 6

    client.tablets = (0, 1)  # tablet-server 2 is gone; its leaders moved
    second = await p.poll()
    events, state = advance(state, second)
    kinds = [(e.kind, e.subject.name) for e in events]
    assert (EventKind.SERVER_LEFT, "tablet-server 2") in kinds
    moved = [e for e in events if e.kind is EventKind.LEADERS_MOVED]
    assert sum(e.count for e in moved) > 0
    assert p.last is second and second.view is not None
    assert second.view.coordinator is not None


async def test_cluster_health_of_a_1_0_server_reaches_the_snapshot() -> None:
    client = cluster(fluss_1_0=True)
    client.overrides[ApiKey.GET_CLUSTER_HEALTH] = lambda t, r: pb.GetClusterHealthResponse(
        num_replicas=18,
        in_sync_replicas=16,
        num_leader_replicas=6,
        active_leader_replicas=6,
        status=1,
    )
    snapshot = await poller(client).poll()
    assert snapshot.health is not None and snapshot.health.in_sync_replicas == 16
    health = health_of(snapshot, RULES)
    assert health.source == "server"
    assert health.status is HealthStatus.YELLOW


async def test_0_9_sends_no_cluster_health_request() -> None:
    client = cluster()
    snapshot = await poller(client).poll()
    assert snapshot.ok and snapshot.health is None
    sent = {api for batch in client.batches for _, api, _ in batch}
    assert ApiKey.GET_CLUSTER_HEALTH not in sent

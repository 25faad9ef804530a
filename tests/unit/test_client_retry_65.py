"""The end of a coordinator election (issue 19, item 4c), replayed with the fake servers:
the coordinator metadata names answers NOT_COORDINATOR_LEADER (65) a few times (1 to 4,
observed on the 1.0 line) before it serves. The client rides it out with a short bounded
backoff instead of giving up; a coordinator that never serves still fails, in bounded time.
"""

from __future__ import annotations

from typing import Any

import pytest

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.client.retry import ELECTION_BACKOFF, ELECTION_RETRIES
from fluss_proto.error_codes import NotCoordinatorLeaderError
from tests._testutil.fakes import (
    Err,
    FakeCluster,
    FakeServer,
    Frame,
    connect,
    no_asyncio_complaints,  # noqa: F401 - autouse fixture
)
from tests._testutil.unstarved import Stopwatch


def electing(answers_65: int) -> Any:
    """A handler that answers 65 ``answers_65`` times, then serves."""
    left = [answers_65]

    def handler(_s: FakeServer, _f: Frame) -> Any:
        if left[0] > 0:
            left[0] -= 1
            return Err(65, "This coordinator server is not the current leader.")
        return pb.DescribeClusterConfigsResponse()

    return handler


async def describe(client: Any) -> Any:
    return await client.call(
        ApiKey.DESCRIBE_CLUSTER_CONFIGS, pb.DescribeClusterConfigsRequest(), coordinator=True
    )


@pytest.mark.parametrize("answers_65", [1, 2, 3, 4])
async def test_new_coordinator_answering_65_a_few_times_is_ridden_out(answers_65: int) -> None:
    """Killed active coordinator: the standby is elected; metadata already names it while
    it still answers 65 for a moment."""
    async with FakeCluster(tablets=1) as fc:
        old = fc.coordinator
        old.handlers[ApiKey.DESCRIBE_CLUSTER_CONFIGS] = electing(0)
        new = fc.add(
            FakeServer(1, handlers={ApiKey.DESCRIBE_CLUSTER_CONFIGS: electing(answers_65)})
        )
        await new.start()
        async with await connect(fc.tablets[0].address) as client:
            await describe(client)
            await old.stop()
            fc.active = new
            watch = Stopwatch()  # less the CPU waits of a starved run (nice 19)
            await describe(client)
            took = watch.elapsed()
            assert new.count(ApiKey.DESCRIBE_CLUSTER_CONFIGS) == 1 + answers_65
            assert client.coordinator is not None and client.coordinator.address == new.address
            backoff = sum(ELECTION_BACKOFF * 2**i for i in range(answers_65))
            assert took < backoff + 1.5


async def test_a_standby_redirect_to_a_coordinator_still_electing_is_ridden_out() -> None:
    async with FakeCluster(tablets=1) as fc:
        standby = fc.coordinator
        standby.standby = True
        new = fc.add(FakeServer(1, handlers={ApiKey.DESCRIBE_CLUSTER_CONFIGS: electing(2)}))
        await new.start()
        async with await connect(fc.tablets[0].address) as client:
            fc.active = new
            await describe(client)
            assert standby.count(ApiKey.DESCRIBE_CLUSTER_CONFIGS) == 1
            assert new.count(ApiKey.DESCRIBE_CLUSTER_CONFIGS) == 3
            assert [(e.old_address, e.new_address) for e in client.events] == [
                (standby.address, new.address)
            ]


async def test_a_coordinator_that_keeps_answering_65_fails_in_bounded_time() -> None:
    async with FakeCluster(tablets=1) as fc:
        fc.coordinator.handlers[ApiKey.DESCRIBE_CLUSTER_CONFIGS] = electing(1000)
        async with await connect(fc.tablets[0].address) as client:
            watch = Stopwatch()  # less the CPU waits of a starved run (nice 19)
            with pytest.raises(NotCoordinatorLeaderError):
                await describe(client)
            assert watch.elapsed() < sum(ELECTION_BACKOFF * 2**i for i in range(5)) + 1
            count = fc.coordinator.count(ApiKey.DESCRIBE_CLUSTER_CONFIGS)
            assert count == 1 + ELECTION_RETRIES

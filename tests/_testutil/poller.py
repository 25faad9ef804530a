"""Fakes for the poller: a client, the gather, the coordinator probes and the scrape, driven
by a script (:class:`Fakes`); no sockets."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fluss_proto.coordinators import CoordinatorProbe
from fluss_proto.model import ClusterHealth, ClusterView
from konsole.collect.cluster.metrics import MetricsResult
from konsole.collect.cluster.poller import EndpointsFn, Poller, PollerConfig
from konsole.collect.profiles import MetricsEndpoint, Profile
from tests._testutil.builders import addr, metrics_error, table, tm, view

#: The view a poll gathers unless a script says otherwise.
V = view(tables=[table("db.t", 1, [(0, (0, 1), 5)])])


@dataclass
class FakeFeatures:
    cluster_health: bool = False


@dataclass
class FakeClient:
    features: FakeFeatures = field(default_factory=FakeFeatures)
    closed: bool = False

    async def close(self) -> None:
        self.closed = True


class Fakes:
    """Scripted seams; each list item is used once, the last one repeats."""

    def __init__(
        self,
        *,
        views: Sequence[ClusterView | BaseException | str] = (V,),
        connects: Sequence[BaseException | None] = (None,),
        roles: dict[str, str] | None = None,
        delay: float = 0.0,
        health: ClusterHealth | BaseException | None = None,
        cluster_health: bool = False,
        together: int = 0,
    ) -> None:
        self.views = list(views)
        self.connects = list(connects)
        self.roles = roles or {addr(0): "active"}
        self.delay = delay
        self.health_result = health
        self.cluster_health = cluster_health
        self.gather_calls: list[dict[str, Any]] = []
        self.probed: list[str] = []
        self.scraped: list[tuple[MetricsEndpoint, ...]] = []
        self.connected = 0
        self.clients: list[FakeClient] = []
        self.in_gather = 0
        self.max_in_gather = 0
        #: With ``together`` (the gather, the probes and the scrape: 3), each of them waits
        #: until all have started: a poll that ran them one after another never gets past
        #: the first (its poll timeout ends it), whatever the machine's load.
        self._together = asyncio.Barrier(together) if together else None

    async def _meet(self) -> None:
        if self._together is not None:
            await asyncio.wait_for(self._together.wait(), 5.0)

    @staticmethod
    def _next(items: list[Any]) -> Any:
        return items.pop(0) if len(items) > 1 else items[0]

    async def connect(self) -> FakeClient:
        self.connected += 1
        outcome = self._next(self.connects)
        if outcome is not None:
            raise outcome
        client = FakeClient(FakeFeatures(self.cluster_health))
        self.clients.append(client)
        return client

    async def gather(self, client: FakeClient, **kwargs: Any) -> ClusterView:
        self.gather_calls.append(kwargs)
        self.in_gather += 1
        self.max_in_gather = max(self.max_in_gather, self.in_gather)
        try:
            outcome = self._next(self.views)
            if outcome == "hang":
                await asyncio.sleep(10)
            await self._meet()
            await asyncio.sleep(self.delay)
            if isinstance(outcome, BaseException):
                raise outcome
            assert isinstance(outcome, ClusterView)
            return outcome
        finally:
            self.in_gather -= 1

    async def health(self, client: FakeClient) -> ClusterHealth | None:
        if not client.features.cluster_health:
            return None
        if isinstance(self.health_result, BaseException):
            raise self.health_result
        return self.health_result

    async def probe(self, addresses: Sequence[str]) -> tuple[CoordinatorProbe, ...]:
        self.probed.extend(addresses)
        await self._meet()
        await asyncio.sleep(self.delay)
        roles = {"tablet": "tablet-server"}
        return tuple(
            CoordinatorProbe(a, roles.get(r, r))  # type: ignore[arg-type]
            for a in addresses
            for r in [self.roles.get(a, "unreachable")]
        )

    async def scrape(self, endpoints: Sequence[MetricsEndpoint]) -> Sequence[MetricsResult]:
        self.scraped.append(tuple(endpoints))
        await self._meet()
        await asyncio.sleep(self.delay)
        return (tm(0), metrics_error(1))

    def poller(self, *, endpoints: EndpointsFn | None = None, **config: Any) -> Poller:
        """A poller on these fakes; ``endpoints`` chooses what it scrapes (one URL)."""
        config.setdefault("coordinators", (addr(0),))
        config.setdefault("interval", 1.0)
        return Poller(
            PollerConfig(**config),
            connect=self.connect,
            gather=self.gather,
            health=self.health,
            probe=self.probe,
            scrape=self.scrape,
            endpoints=endpoints or (lambda v: (MetricsEndpoint("http://127.0.0.1:1/metrics"),)),
        )


def fake_build_poller(
    fakes: Fakes, asked: list[Profile] | None = None
) -> Callable[[Profile, float | None], tuple[Poller, Callable[[], Awaitable[None]]]]:
    """A stand-in for ``konsole.collect.cluster.connect.build_poller`` (what ``watch`` and
    ``record`` call): a poller on ``fakes``; each profile asked for goes to ``asked``."""

    def build(
        profile: Profile, interval: float | None
    ) -> tuple[Poller, Callable[[], Awaitable[None]]]:
        if asked is not None:
            asked.append(profile)
        poller = Poller(
            PollerConfig(interval=0.001, coordinators=profile.coordinators or ("127.0.0.1:9123",)),
            connect=fakes.connect,
            gather=fakes.gather,
            health=fakes.health,
            probe=fakes.probe,
            scrape=fakes.scrape,
        )

        async def release() -> None:
            await poller.aclose()

        return poller, release

    return build

"""The poller: one :class:`~konsole.model.snapshot.ClusterSnapshot` per interval, for days.

Each poll runs three things at once (``asyncio.gather``): the cluster gather (guided by the
previous view, earliest offsets every Nth poll, GetClusterHealth beside it when the servers
advertise it), the coordinator probes and the metrics scrape. The scrape's endpoints come
from the previous view's servers; when they depend on the servers' hosts (a metrics port)
and there is no previous view yet (a first poll, ``konsole check``'s only one), the scrape
waits for this poll's metadata and gets what is left of the poll's time. Every snapshot
carries how its endpoints were chosen (``metrics_origin``). Polls never overlap (a
lock), never raise (a failure is a failed snapshot) and are bounded in time. While the
cluster is unreachable the delay grows (doubling, capped) and the snapshot says how many
polls failed in a row; the client is dropped and connected again on the next poll.

Memory stays flat: the poller keeps the last snapshot, the last good view (the guide) and
a capped set of coordinator addresses it has learned; no task outlives a poll, but one: the
storage poll (``konsole.collect.cluster.storage``), which runs beside the polls on its own slower
cadence (``storage_interval``) so that it never slows the offsets poll. Its part is attached
to every snapshot from the first poll after it finished (carried forward between storage
polls); it is bounded by the poll timeout and cancelled by :meth:`Poller.aclose`. One-look
commands (``storage_inline``) wait for it within the poll instead. A good poll's capacity
part (``konsole.collect.cluster.capacity``: the servers' write limits, data dirs and forecasts) is
made within the poll, in what is left of its time.

Each server has its own deadline inside the poll's budget (:func:`server_deadline`): a
request to it (the handshake included) that gets no answer in that time makes the server
*silent* for the rest of the poll (the client's quarantine: its connection is closed and
every later request to it fails at once), so a hung server costs one deadline per poll,
the poll completes with what the others said, and the snapshot names the server that did
not answer. The next poll asks it again on a new connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

from fluss_proto.admin import FlussAdmin
from fluss_proto.coordinators import CoordinatorProbe, probe_coordinators
from fluss_proto.gather import gather_cluster
from fluss_proto.model import ClusterHealth, ClusterView
from konsole.collect.cluster.metrics import MetricsError, MetricsResult, ServerMetrics
from konsole.collect.profiles import MetricsEndpoint, Profile
from konsole.model.capacity import CapacityPart
from konsole.model.known_servers import KnownServers
from konsole.model.metrics import MetricsOrigin
from konsole.model.roles import AddressRoles, Probed, Role, sort_probes
from konsole.model.snapshot import ClusterSnapshot, CoordinatorStatus, SnapshotError
from konsole.model.storage import StoragePart, carry

__all__ = [
    "SERVER_SHARE",
    "SERVER_TIMEOUT",
    "PollClient",
    "Poller",
    "PollerConfig",
    "fetch_cluster_health",
    "server_deadline",
]

log = logging.getLogger(__name__)

#: Most coordinator addresses remembered (named by metadata or answering as one) and
#: probed each poll.
MAX_KNOWN_COORDINATORS: Final = 8
#: Seconds one server may take to answer a request of a poll (the profile's
#: ``server_timeout`` overrides it), before the share below.
SERVER_TIMEOUT: Final = 2.0
#: At most this share of a poll's budget goes to waiting for one server: a hung server is
#: met at most twice in a poll (the client's warm-up, then the gather), and the poll must
#: still end with what the others said.
SERVER_SHARE: Final = 0.25


def server_deadline(poll_timeout: float, setting: float = SERVER_TIMEOUT) -> float:
    """Seconds one server has to answer a request of a poll bounded by ``poll_timeout``:
    ``min(setting, SERVER_SHARE * poll_timeout)``, rounded (it shows in findings), and
    never below 0.1 s. The one rule for every request of a poll."""
    if poll_timeout <= 0 or setting <= 0:
        raise ValueError("the poll's budget and the server timeout must be positive")
    return round(max(0.1, min(setting, poll_timeout * SERVER_SHARE)), 2)


class PollClient(Protocol):
    """What the poller needs of a connected client (``FlussClient`` provides it)."""

    @property
    def closed(self) -> bool: ...

    async def close(self) -> None: ...


GatherFn = Callable[..., Awaitable[ClusterView]]
ConnectFn = Callable[[], Awaitable[Any]]
HealthFn = Callable[[Any], Awaitable[ClusterHealth | None]]
#: Probes every address at once (fluss_proto.coordinators.probe_coordinators' shape).
ProbeFn = Callable[[Sequence[str]], Awaitable[Sequence[CoordinatorProbe]]]
ScrapeFn = Callable[[Sequence[MetricsEndpoint]], Awaitable[Sequence[MetricsResult]]]
EndpointsFn = Callable[[ClusterView | None], Sequence[MetricsEndpoint]]
#: One storage poll: (client, view, now) -> its part (konsole.collect.cluster.storage.poll_storage).
StorageFn = Callable[[Any, ClusterView, float], Awaitable[StoragePart]]
#: A good poll's capacity part: (client, snapshot) -> the part
#: (konsole.collect.cluster.capacity.CapacityCollector.collect).
CapacityFn = Callable[[Any, ClusterSnapshot], Awaitable[CapacityPart | None]]


async def fetch_cluster_health(client: Any) -> ClusterHealth | None:
    """GetClusterHealth when the servers advertise it (1.0 line), else None (nothing sent)."""
    if not client.features.cluster_health:
        return None
    return await FlussAdmin(client).cluster_health()


async def _no_scrape(endpoints: Sequence[MetricsEndpoint]) -> Sequence[MetricsResult]:
    return ()


@dataclass(frozen=True, slots=True)
class PollerConfig:
    interval: float = 5.0
    #: Earliest offsets are read on poll 1, N+1, 2N+1...
    earliest_every: int = 10
    #: Bound on one gather (connecting included).
    poll_timeout: float = 30.0
    probe_timeout: float = 2.0
    #: Longest delay between polls while the cluster is unreachable.
    max_backoff: float = 60.0
    #: Coordinator addresses to probe; empty = learn them from metadata and bootstrap.
    coordinators: tuple[str, ...] = ()
    bootstrap: tuple[str, ...] = ()
    #: How the metrics endpoints are chosen (stamped on every snapshot).
    metrics_origin: MetricsOrigin = MetricsOrigin.CONFIGURED
    #: The endpoints depend on the servers' hosts: without a previous view, scrape after
    #: this poll's metadata named them (not the bootstrap hosts).
    metrics_from_view: bool = False
    #: Seconds between storage polls (when the poller has a storage function).
    storage_interval: float = 30.0
    #: Wait for the storage poll within the poll (one-look commands), not beside it.
    storage_inline: bool = False
    #: The tablet servers known before the first poll (the profile's expected set and
    #: grace); the poller adds those it sees alive (konsole.model.known_servers).
    known: KnownServers = field(default_factory=KnownServers)
    #: Seconds each server has to answer a request of the poll (:func:`server_deadline`).
    server_timeout: float = SERVER_TIMEOUT

    @classmethod
    def from_profile(cls, profile: Profile, **overrides: Any) -> PollerConfig:
        poll_timeout = overrides.get(
            "poll_timeout", max(profile.request_timeout * 3, profile.connect_timeout)
        )
        server_timeout = server_deadline(poll_timeout, profile.server_timeout)
        values: dict[str, Any] = {
            "interval": profile.poll_interval,
            "earliest_every": profile.earliest_every,
            "poll_timeout": poll_timeout,
            "probe_timeout": min(profile.connect_timeout, profile.request_timeout, server_timeout),
            "server_timeout": server_timeout,
            "coordinators": profile.coordinators,
            "bootstrap": profile.bootstrap,
            "metrics_origin": profile.metrics_origin,
            "metrics_from_view": profile.metrics_from_hosts,
            "storage_interval": profile.storage_interval,
            "known": profile.known_servers,
        }
        values.update(overrides)
        return cls(**values)


@dataclass(frozen=True, slots=True)
class _Gathered:
    view: ClusterView | None
    error: str | None
    health: ClusterHealth | None = None
    health_error: str | None = None


class Poller:
    """Polls one cluster; see the module docs. Inject fakes for every seam in tests."""

    def __init__(
        self,
        config: PollerConfig,
        *,
        connect: ConnectFn,
        gather: GatherFn = gather_cluster,
        health: HealthFn = fetch_cluster_health,
        probe: ProbeFn | None = None,
        scrape: ScrapeFn = _no_scrape,
        endpoints: EndpointsFn = lambda view: (),
        storage: StorageFn | None = None,
        capacity: CapacityFn | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self._connect = connect
        self._gather = gather
        self._health = health
        self._probe = probe or (lambda a: probe_coordinators(a, timeout=config.probe_timeout))
        self._scrape = scrape
        self._endpoints = endpoints
        self._storage_fn = storage
        self._storage: StoragePart | None = None
        self._storage_seed: StoragePart | None = None
        self._storage_task: asyncio.Future[StoragePart] | None = None
        self._storage_due = 0.0
        self._capacity_fn = capacity
        self._clock = clock
        self._monotonic = monotonic
        self._lock = asyncio.Lock()
        self._client: Any = None
        self._seq = 0
        self._failures = 0
        self._last: ClusterSnapshot | None = None
        self._guide: ClusterView | None = None
        #: What the cluster said each address is (metadata, probe answers, a seed), and
        #: the addresses that answered this process as tablet servers (not asked again).
        self._roles = AddressRoles()
        self._tablets: set[str] = set()
        #: The tablet servers known (seen, recalled, expected), stamped on each snapshot,
        #: and where retirements written meanwhile come from (a history's feed).
        self._known = config.known
        self._retirements: Callable[[], Mapping[int, float]] | None = None

    @property
    def last(self) -> ClusterSnapshot | None:
        return self._last

    def seed_storage(self, part: StoragePart | None) -> None:
        """Start from a storage part seen before (a history's last): the next storage poll
        carries its observed times, so a one-look command can tell a value that stood still."""
        self._storage_seed = part

    @property
    def known(self) -> KnownServers:
        return self._known

    def seed_known(self, known: KnownServers) -> None:
        """Start from ``known`` (the profile's, plus what a history recalls)."""
        self._known = known

    def follow_retirements(self, look: Callable[[], Mapping[int, float]]) -> None:
        """``look()`` (blocking: run in a thread) before each poll: node id -> when, of the
        servers retired since the last look; the poller forgets them."""
        self._retirements = look

    def seed_roles(self, known: Iterable[tuple[str, Role]]) -> None:
        """Start from what earlier polls (a history's) said each address is, oldest first:
        a bootstrap address that does not answer is then named by the role it had."""
        for address, role in known:
            self._roles.learn(address, role)

    @property
    def consecutive_failures(self) -> int:
        return self._failures

    def next_delay(self) -> float:
        """Seconds to wait before the next poll: the interval, or the backoff."""
        if self._failures == 0:
            return self.config.interval
        return min(self.config.max_backoff, self.config.interval * 2 ** (self._failures - 1))

    async def aclose(self) -> None:
        task, self._storage_task = self._storage_task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    # ------------------------------------------------------------------ one poll

    async def poll(self) -> ClusterSnapshot:
        """One poll; never raises (cancellation apart), never overlaps another."""
        async with self._lock:
            self._seq += 1
            taken_at, t0 = self._clock(), self._monotonic()
            earliest = (self._seq - 1) % max(1, self.config.earliest_every) == 0
            guide = self._guide
            addresses = self._probe_addresses()
            new_round = getattr(self._client, "new_round", None)
            if new_round is not None:  # servers silent in the last poll are asked again
                new_round()
            gathering = asyncio.ensure_future(self._gather_part(guide, earliest))
            gathered, probed, scraped = await asyncio.gather(
                gathering,
                self._probe_part(addresses),
                self._scrape_part(guide, gathering, t0),
            )
            latency = self._monotonic() - t0
            probes, unanswered = self._sort(gathered.view, probed)
            await self._learn_known(gathered.view, taken_at)
            metrics = tuple(r for r in scraped if isinstance(r, ServerMetrics))
            metrics_errors = tuple(r for r in scraped if isinstance(r, MetricsError))
            if gathered.view is None:
                self._failures += 1
                snapshot = ClusterSnapshot.failed(
                    seq=self._seq,
                    taken_at=taken_at,
                    latency_s=latency,
                    error=gathered.error or "no answer",
                    consecutive_failures=self._failures,
                    coordinators=probes,
                    unanswered=unanswered,
                    metrics=metrics,
                    metrics_errors=metrics_errors,
                    metrics_origin=self.config.metrics_origin,
                )
            else:
                self._failures = 0
                self._guide = gathered.view
                snapshot = ClusterSnapshot.assemble(
                    seq=self._seq,
                    taken_at=taken_at,
                    latency_s=latency,
                    view=gathered.view,
                    coordinators=probes,
                    unanswered=unanswered,
                    health=gathered.health,
                    health_error=gathered.health_error,
                    metrics=metrics,
                    metrics_errors=metrics_errors,
                    metrics_origin=self.config.metrics_origin,
                )
                await self._storage_step(gathered.view)
                snapshot = await self._capacity_step(snapshot, t0)
            if self._storage is not None:
                snapshot = replace(snapshot, storage=self._storage)
            snapshot = snapshot.with_known(self._known)
            self._last = snapshot
            return snapshot

    async def _learn_known(self, view: ClusterView | None, taken_at: float) -> None:
        """Forget the servers retired since the last poll; remember those ``view`` lists."""
        if self._retirements is not None:
            try:
                retired = await asyncio.to_thread(self._retirements)
            except Exception as exc:  # the feed never raises; a bug might
                log.debug("retirements not read: %s", _text(exc))
                retired = {}
            for node_id, at in retired.items():
                self._known = self._known.retire(node_id, at)
        if view is not None:
            self._known = self._known.seen(view, taken_at)

    # ------------------------------------------------------------------ capacity

    async def _capacity_step(self, snapshot: ClusterSnapshot, t0: float) -> ClusterSnapshot:
        """A good poll with its capacity part, in what is left of the poll's time (the
        collector reads the servers' configs now and then; a failure leaves it out)."""
        if self._capacity_fn is None:
            return snapshot
        left = self.config.poll_timeout - (self._monotonic() - t0)
        try:
            async with asyncio.timeout(max(0.0, left)):
                part = await self._capacity_fn(self._client, snapshot)
        except Exception as exc:  # the collector never raises; a timeout or a bug might
            log.debug("capacity part failed: %s", _text(exc))
            return snapshot
        return snapshot if part is None else replace(snapshot, capacity=part)

    # ------------------------------------------------------------------ storage

    async def _storage_step(self, view: ClusterView) -> None:
        """Collect a finished storage poll; start the next one when it is due."""
        task = self._storage_task
        if task is not None and task.done():
            self._storage_task = None
            self._take_storage(task)
        if self._storage_fn is None or self._storage_task is not None:
            return
        now = self._monotonic()
        if now < self._storage_due or self._client is None:
            return
        self._storage_due = now + self.config.storage_interval
        task = asyncio.ensure_future(self._storage_run(self._client, view))
        if self.config.storage_inline:
            await asyncio.wait([task])
            self._take_storage(task)
        else:
            self._storage_task = task

    async def _storage_run(self, client: Any, view: ClusterView) -> StoragePart:
        assert self._storage_fn is not None
        async with asyncio.timeout(self.config.poll_timeout):
            return await self._storage_fn(client, view, self._clock())

    def _take_storage(self, task: asyncio.Future[StoragePart]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:  # poll_storage never raises; a timeout or a bug might
            log.debug("storage poll failed: %s", _text(error))
            return
        self._storage = carry(self._storage or self._storage_seed, task.result())

    async def _gather_part(self, guide: ClusterView | None, earliest: bool) -> _Gathered:
        try:
            async with asyncio.timeout(self.config.poll_timeout):
                if self._client is None or self._client.closed:
                    self._client = await self._connect()
                client = self._client
                view_result, health_result = await asyncio.gather(
                    self._gather(client, previous=guide, earliest=earliest),
                    self._health(client),
                    return_exceptions=True,
                )
        except TimeoutError:
            await self.aclose()
            return _Gathered(None, f"no answer within {self.config.poll_timeout:g}s")
        except Exception as exc:
            await self.aclose()
            return _Gathered(None, _text(exc))
        if isinstance(view_result, BaseException):
            if not isinstance(view_result, Exception):
                raise view_result
            await self.aclose()
            return _Gathered(None, _text(view_result))
        if _unreachable(view_result):
            await self.aclose()
            return _Gathered(None, _first_error(view_result))
        if isinstance(health_result, BaseException):
            if not isinstance(health_result, Exception):
                raise health_result
            return _Gathered(view_result, None, None, _text(health_result))
        return _Gathered(view_result, None, health_result)

    async def _probe_part(self, addresses: Sequence[str]) -> tuple[Probed, ...]:
        if not addresses:
            return ()
        try:
            probes = await self._probe(addresses)
        except Exception as exc:  # the probe never raises; a fake or a bug might
            log.debug("coordinator probes failed: %s", _text(exc))
            return ()
        return tuple(
            Probed(p.address, p.role, _text(p.error) if p.error is not None else None, p.latency_s)
            for p in probes
        )

    def _sort(
        self, view: ClusterView | None, probed: Sequence[Probed]
    ) -> tuple[tuple[CoordinatorStatus, ...], tuple[SnapshotError, ...]]:
        """Learns what this poll's metadata and answers said of each address, then tells
        the coordinators from the bootstrap addresses that did not answer."""
        if view is not None:
            self._roles.learn_view(view)
        for p in probed:
            self._roles.learn_answer(p.address, p.answer)
            if p.answer == "tablet-server":
                self._tablets.add(p.address)
        return sort_probes(probed, self._roles, declared=self.config.coordinators)

    async def _scrape_part(
        self, guide: ClusterView | None, gathering: Awaitable[_Gathered], t0: float
    ) -> Sequence[MetricsResult]:
        view = guide
        if view is None and self.config.metrics_from_view:
            # The servers' hosts come from metadata: wait for this poll's.
            view = (await gathering).view
        endpoints = self._endpoints(view)
        left = self.config.poll_timeout - (self._monotonic() - t0)
        try:
            async with asyncio.timeout(max(0.0, left)):
                return await self._scrape(endpoints)
        except TimeoutError:  # the gather took the poll's time: each endpoint is unknown
            at = self._clock()
            return tuple(
                MetricsError(e.url, e.role, e.server_id, "timeout", "no time left in the poll", at)
                for e in endpoints
            )
        except Exception as exc:  # the scraper never raises; a fake or a bug might
            log.debug("metrics scrape failed: %s", _text(exc))
            return ()

    # ------------------------------------------------------------------ coordinators

    def _probe_addresses(self) -> list[str]:
        if self.config.coordinators:
            return list(self.config.coordinators)
        candidates = dict.fromkeys(self._roles.coordinators[-MAX_KNOWN_COORDINATORS:])
        if self._guide is None:
            # Before any metadata: a bootstrap address may be a coordinator; the probe
            # tells (tablet servers say so in ApiVersions and are not asked again). One
            # that does not answer is named by the role the cluster gave it (a seed).
            candidates.update(dict.fromkeys(self.config.bootstrap))
        return [a for a in candidates if a not in self._tablets]

    # ------------------------------------------------------------------ loop

    async def snapshots(self, stop: asyncio.Event) -> AsyncIterator[ClusterSnapshot]:
        """Poll until ``stop`` is set, yielding each snapshot. Polls start ``interval``
        apart (a slow poll delays the next one, never overlaps it); while unreachable,
        the backoff counts from the end of the failed poll."""
        while not stop.is_set():
            snapshot = await self.poll()
            yield snapshot
            delay = self.next_delay()
            if snapshot.ok:
                delay = max(0.0, delay - snapshot.latency_s)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)


def _text(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _unreachable(view: ClusterView) -> bool:
    """No server answered at all (metadata named none): the poll failed."""
    return view.coordinator is None and not view.tablet_servers


def _first_error(view: ClusterView) -> str:
    for error in view.errors:
        return f"{error.subject}: {error.error}"
    return "the cluster named no servers"

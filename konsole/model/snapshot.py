"""What one poll saw: an immutable :class:`ClusterSnapshot`.

A snapshot is the unit the console, the history, the check and ``konsole watch`` consume.
A failed poll is a snapshot too (``ok`` False, ``error`` set, ``view`` None), never an
exception. Every per-item failure (a bucket, a server, a metrics endpoint, a coordinator
probe, the health request) is kept in :attr:`ClusterSnapshot.errors` as plain text that
names its subject; no error text carries a secret (the client and the scraper never put
credentials into messages).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType

from fluss_proto.model import BucketView, ClusterHealth, ClusterView, GatherError
from konsole.model.capacity import CapacityPart
from konsole.model.known_servers import KnownServers
from konsole.model.metrics import MetricsError, MetricsOrigin, ServerMetrics
from konsole.model.storage import StoragePart

__all__ = [
    "ClusterSnapshot",
    "CoordinatorRole",
    "CoordinatorStatus",
    "SnapshotError",
    "bucket_name",
    "table_names",
]


class CoordinatorRole(StrEnum):
    ACTIVE = "active"
    STANDBY = "standby"
    UNREACHABLE = "unreachable"


@dataclass(frozen=True, slots=True)
class CoordinatorStatus:
    """One coordinator address as the probe found it."""

    address: str
    role: CoordinatorRole
    #: Why it is unreachable (or what the probe's cheap request answered), secret-free.
    error: str | None = None
    latency_s: float | None = None


@dataclass(frozen=True, slots=True)
class SnapshotError:
    """One per-item failure of a poll."""

    #: "cluster", "server", "database", "table", "partition", "bucket", "metrics",
    #: "coordinator", "bootstrap" (an address whose role the cluster has not said, or
    #: last said: :mod:`konsole.model.roles`) or "health".
    scope: str
    subject: str
    #: The API, "metrics" or "probe".
    source: str
    message: str

    @classmethod
    def from_gather(cls, error: GatherError) -> SnapshotError:
        return cls(error.scope, error.subject, error.api, str(error.error))

    @classmethod
    def from_metrics(cls, error: MetricsError) -> SnapshotError:
        return cls("metrics", error.subject, "metrics", f"{error.kind}: {error.message}")


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """One poll of one cluster. Immutable; safe to keep, share and record."""

    #: Poll number, from 1, counted by the poller.
    seq: int
    #: Wall-clock start of the poll (time.time()) and how long it took.
    taken_at: float
    latency_s: float
    ok: bool
    #: Why the poll failed (None when ok).
    error: str | None
    view: ClusterView | None
    coordinators: tuple[CoordinatorStatus, ...] = ()
    #: GetClusterHealth, when the servers advertise it (1.0 line) and it answered.
    health: ClusterHealth | None = None
    metrics: tuple[ServerMetrics, ...] = ()
    metrics_errors: tuple[MetricsError, ...] = ()
    #: Every per-item error: the view's, the metrics endpoints', the probes', health's.
    errors: tuple[SnapshotError, ...] = ()
    #: Failed polls in a row, this one included (0 when ok).
    consecutive_failures: int = 0
    #: How the metrics endpoints were chosen (the health rules read silence by it). The
    #: default is the strict reading: a server without metrics is not GREEN.
    metrics_origin: MetricsOrigin = MetricsOrigin.CONFIGURED
    #: The storage polls' last word (slower cadence, carried between them); None: not
    #: polled yet, or storage polling is off.
    storage: StoragePart | None = None
    #: The tablet servers' write limits, data dirs and forecasts (konsole.model.capacity);
    #: None: not collected (no capacity collector, or a failed poll).
    capacity: CapacityPart | None = None
    #: The tablet servers the poller knew at this poll (seen, recalled from a history,
    #: expected by the profile): those metadata no longer lists are gone
    #: (:mod:`konsole.model.known_servers`). Empty: the poller knew none beyond this poll.
    known: KnownServers = field(default_factory=KnownServers)

    @classmethod
    def failed(
        cls,
        *,
        seq: int,
        taken_at: float,
        latency_s: float,
        error: str,
        consecutive_failures: int = 1,
        coordinators: tuple[CoordinatorStatus, ...] = (),
        unanswered: tuple[SnapshotError, ...] = (),
        metrics: tuple[ServerMetrics, ...] = (),
        metrics_errors: tuple[MetricsError, ...] = (),
        metrics_origin: MetricsOrigin = MetricsOrigin.CONFIGURED,
    ) -> ClusterSnapshot:
        """A failed poll. ``unanswered``: bootstrap addresses that did not answer and are
        not coordinators (:func:`konsole.model.roles.sort_probes`)."""
        extra = (
            *unanswered,
            *_probe_errors(coordinators),
            *(SnapshotError.from_metrics(e) for e in metrics_errors),
        )
        return cls(
            seq=seq,
            taken_at=taken_at,
            latency_s=latency_s,
            ok=False,
            error=error,
            view=None,
            coordinators=coordinators,
            metrics=metrics,
            metrics_errors=metrics_errors,
            errors=(SnapshotError("cluster", "cluster", "poll", error), *extra),
            consecutive_failures=consecutive_failures,
            metrics_origin=metrics_origin,
        )

    @classmethod
    def assemble(
        cls,
        *,
        seq: int,
        taken_at: float,
        latency_s: float,
        view: ClusterView,
        coordinators: tuple[CoordinatorStatus, ...] = (),
        unanswered: tuple[SnapshotError, ...] = (),
        health: ClusterHealth | None = None,
        health_error: str | None = None,
        metrics: tuple[ServerMetrics, ...] = (),
        metrics_errors: tuple[MetricsError, ...] = (),
        metrics_origin: MetricsOrigin = MetricsOrigin.CONFIGURED,
    ) -> ClusterSnapshot:
        """A successful poll, with every per-item error collected in one place (the
        bootstrap addresses first: the history keeps a poll's first errors)."""
        errors = list(unanswered)
        errors += [SnapshotError.from_gather(e) for e in view.errors]
        errors += _probe_errors(coordinators)
        errors += [SnapshotError.from_metrics(e) for e in metrics_errors]
        if health_error is not None:
            errors.append(SnapshotError("health", "cluster", "GET_CLUSTER_HEALTH", health_error))
        return cls(
            seq=seq,
            taken_at=taken_at,
            latency_s=latency_s,
            ok=True,
            error=None,
            view=view,
            coordinators=coordinators,
            health=health,
            metrics=metrics,
            metrics_errors=metrics_errors,
            errors=tuple(errors),
            metrics_origin=metrics_origin,
        )

    def with_known(self, known: KnownServers) -> ClusterSnapshot:
        """This snapshot with what the poller knows of the tablet servers attached."""
        return replace(self, known=known)

    def with_storage(self, storage: StoragePart | None) -> ClusterSnapshot:
        """This snapshot with the storage polls' part attached."""
        return replace(self, storage=storage)

    # ------------------------------------------------------------------ derived views

    @property
    def active_coordinator(self) -> str | None:
        """The active coordinator's address: the probe's answer, else metadata's."""
        for status in self.coordinators:
            if status.role is CoordinatorRole.ACTIVE:
                return status.address
        if self.coordinators:
            return None  # probed, and none answered as active
        if self.view is not None and self.view.coordinator is not None:
            return self.view.coordinator.address
        return None

    @property
    def standby_coordinators(self) -> tuple[str, ...]:
        return tuple(s.address for s in self.coordinators if s.role is CoordinatorRole.STANDBY)

    @property
    def tablet_metrics(self) -> Mapping[str, ServerMetrics]:
        """server_id label -> metrics, for tablet servers whose scrape succeeded."""
        return MappingProxyType(
            {m.server_id: m for m in self.metrics if m.role == "tablet" and m.server_id}
        )

    @property
    def coordinator_metrics(self) -> tuple[ServerMetrics, ...]:
        return tuple(m for m in self.metrics if m.role == "coordinator")


def bucket_name(
    view: ClusterView | None, bucket: BucketView, names: Mapping[int, str] | None = None
) -> str:
    """``db.table#3`` or ``db.table[partition]#3``; ``names`` (:func:`table_names`) saves
    looking the table up again for every bucket."""
    if names is None:
        names = table_names(view)
    table = names.get(bucket.table_id, f"table-{bucket.table_id}")
    part = f"[{bucket.partition_name}]" if bucket.partition_name is not None else ""
    return f"{table}{part}#{bucket.bucket_id}"


def table_names(view: ClusterView | None) -> dict[int, str]:
    """table id -> ``db.table``."""
    if view is None:
        return {}
    return {t.table_id: str(t.path) for t in view.tables if t.table_id is not None}


def _probe_errors(coordinators: Iterable[CoordinatorStatus]) -> list[SnapshotError]:
    return [
        SnapshotError("coordinator", s.address, "probe", s.error)
        for s in coordinators
        if s.role is CoordinatorRole.UNREACHABLE and s.error
    ]

"""The store's own row types: what goes in and what comes out, as frozen dataclasses.

Times are epoch milliseconds (int). ``partition_id`` None means a table without partitions.
The store knows nothing of Fluss types: :mod:`konsole.collect.history.rows` converts both ways.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "CoordinatorRow",
    "DatabaseRow",
    "EpochMark",
    "EpochRow",
    "EventRow",
    "MetricRow",
    "NoteRow",
    "OffsetsRow",
    "PartitionRow",
    "PlacementRow",
    "PollRecord",
    "PollRow",
    "SchemaRow",
    "ServerRow",
    "Slot",
    "TableRow",
]


# ----------------------------------------------------------------- kept as change intervals
# Each of these is a state: the writer keeps one row per distinct value with the interval
# [from_ms, to_ms) in which it held, so an unchanged cluster costs nothing per poll.


@dataclass(frozen=True, slots=True)
class ServerRow:
    node_id: int
    role: str
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class CoordinatorRow:
    address: str
    #: "active", "standby" or "unreachable".
    role: str


@dataclass(frozen=True, slots=True)
class DatabaseRow:
    name: str


@dataclass(frozen=True, slots=True)
class TableRow:
    table_id: int
    database: str
    name: str
    schema_id: int
    #: The table's descriptor as JSON text (no schema: see :class:`SchemaRow`).
    descriptor: str
    created_ms: int
    modified_ms: int
    remote_data_dir: str | None = None


@dataclass(frozen=True, slots=True)
class SchemaRow:
    """One schema version of one table (kept once; schemas never change in place)."""

    table_id: int
    schema_id: int
    schema: str


@dataclass(frozen=True, slots=True)
class PartitionRow:
    table_id: int
    partition_id: int
    name: str
    #: JSON object of partition key -> value.
    spec: str
    remote_data_dir: str | None = None


@dataclass(frozen=True, slots=True)
class PlacementRow:
    """Where the buckets of one table (or partition) are, bucket by bucket.

    One row per table or partition, not per bucket: a leader move replaces the slot's row,
    and comparing a slot is one tuple comparison (1,600 buckets cost ~200 comparisons).
    """

    table_id: int
    partition_id: int | None
    #: Per bucket, in bucket order (index = bucket id); None = no leader / unknown.
    leaders: tuple[int | None, ...]
    replicas: tuple[tuple[int, ...], ...]
    epochs: tuple[int | None, ...]


# ----------------------------------------------------------------- per-poll series


@dataclass(frozen=True, slots=True)
class Slot:
    """One table (or one partition) in an offsets layout: ``buckets`` values in bucket order."""

    table_id: int
    partition_id: int | None
    buckets: int


@dataclass(frozen=True, slots=True)
class OffsetsRow:
    """Every bucket's offsets of one poll, in layout order (slot after slot)."""

    layout: tuple[Slot, ...]
    #: High watermarks; None = unknown.
    latest: tuple[int | None, ...]
    #: Log start offsets when this poll read them (not every poll does), else None.
    earliest: tuple[int | None, ...] | None = None

    def slice_of(self, table_id: int, partition_id: int | None) -> slice | None:
        start = 0
        for slot in self.layout:
            if slot.table_id == table_id and slot.partition_id == partition_id:
                return slice(start, start + slot.buckets)
            start += slot.buckets
        return None


@dataclass(frozen=True, slots=True)
class MetricRow:
    """One server's metrics of one poll: name -> value (None = not exported / unknown)."""

    subject: str
    values: tuple[tuple[str, float | None], ...]

    def get(self, name: str) -> float | None:
        for key, value in self.values:
            if key == name:
                return value
        return None


# ----------------------------------------------------------------- timeline


@dataclass(frozen=True, slots=True)
class EventRow:
    at_ms: int
    kind: str
    #: "info", "warning" or "critical" (the store does not check: it keeps what it is given).
    severity: str
    subject: str
    message: str
    #: JSON object text with anything else the event carries.
    details: str = "{}"
    id: int | None = None


@dataclass(frozen=True, slots=True)
class NoteRow:
    at_ms: int
    subject: str
    text: str
    id: int | None = None


@dataclass(frozen=True, slots=True)
class LogExcerptRow:
    """A server's log lines around an event (since version 4): kept so the evidence
    survives the server's log rotation. ``lines`` are the lines as read (masked by the
    caller); ``error`` says why none could be read."""

    at_ms: int
    #: The server: "tablet-server 2", "coordinator 127.0.0.1:9123".
    subject: str
    #: The event kind it was taken for.
    kind: str
    from_ms: int
    to_ms: int
    #: Where the lines came from (a path, a glob or a command), for the reader.
    source: str
    lines: tuple[str, ...] = ()
    error: str | None = None
    id: int | None = None


@dataclass(frozen=True, slots=True)
class PollRow:
    id: int
    at_ms: int
    seq: int
    latency_ms: int
    ok: bool
    error: str | None
    n_errors: int
    #: The first few per-item errors, as text.
    errors: tuple[str, ...]
    #: 0 full resolution, 1 kept as the minute's sample, 2 kept as the hour's sample.
    level: int


# ----------------------------------------------------------------- epochs


@dataclass(frozen=True, slots=True)
class EpochRow:
    """One cluster's stretch of a history: from its first poll until the next epoch's.

    ``identity`` is the cluster's identity as JSON text (the store keeps it as given;
    :mod:`konsole.model.identity` reads it), kept up to date while the cluster changes.
    """

    id: int
    from_ms: int
    first_poll: int
    identity: str
    #: Why this epoch began (the first poll, another cluster...).
    reason: str


@dataclass(frozen=True, slots=True)
class EpochMark:
    """What a poll says about its epoch: a new one begins with it (``start``), or the
    current one's identity becomes ``identity``."""

    identity: str
    start: bool
    reason: str = ""


# ----------------------------------------------------------------- one poll, as written


@dataclass(frozen=True, slots=True)
class PollRecord:
    """Everything one poll contributes. A state part that is None was not known at this
    poll (a failed poll knows no servers): its recorded intervals stay as they are."""

    at_ms: int
    seq: int
    latency_ms: int
    ok: bool
    error: str | None = None
    errors: tuple[str, ...] = ()
    n_errors: int = 0
    servers: tuple[ServerRow, ...] | None = None
    coordinators: tuple[CoordinatorRow, ...] | None = None
    databases: tuple[DatabaseRow, ...] | None = None
    tables: tuple[TableRow, ...] | None = None
    schemas: tuple[SchemaRow, ...] = ()
    partitions: tuple[PartitionRow, ...] | None = None
    placement: tuple[PlacementRow, ...] | None = None
    #: Tables whose metadata could not be read at this poll: their table, partition and
    #: placement intervals are left open rather than closed.
    unknown_tables: frozenset[int] = field(default_factory=frozenset)
    offsets: OffsetsRow | None = None
    metrics: tuple[MetricRow, ...] = ()
    events: tuple[EventRow, ...] = ()
    #: None: the poll belongs to the current epoch, which stays as it is.
    epoch: EpochMark | None = None
    #: A new storage part (opaque, packed by konsole), or None when the poll brought none.
    storage: bytes | None = None

"""Snapshots to history rows and back: the only place that knows both konsole and store types.

:func:`poll_record` turns one :class:`~konsole.model.snapshot.ClusterSnapshot` (and its events)
into a :class:`store.rows.PollRecord`; :func:`snapshot_at` rebuilds the
:class:`ClusterSnapshot` a past poll recorded, so a screen given a :class:`Recorded` shows
history the way it shows live data (``recorded.historic`` is the flag).

No secret reaches the store: table properties whose key names a password, secret, token,
credential or key are written as ``<redacted>``; error texts are secret-free by contract
(see :mod:`konsole.model.snapshot`); the profile's password never comes near this module.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Final

from fluss_proto.cluster import TablePath
from fluss_proto.errors import DecodeError
from fluss_proto.model import (
    BucketView,
    ClusterHealth,
    ClusterView,
    HealthStatus,
    PartitionInfo,
    ServerInfo,
    TableView,
)
from fluss_proto.types import FrozenDict, TableInfo, parse_table_descriptor
from konsole.collect.history.capacity_rows import capacity_from_values, capacity_values
from konsole.collect.history.storage_rows import pack_storage, unpack_storage
from konsole.model.events import Event, EventKind, Severity, Subject
from konsole.model.identity import ClusterIdentity, identity_of, judge
from konsole.model.metrics import MetricsOrigin, ServerMetrics
from konsole.model.snapshot import (
    ClusterSnapshot,
    CoordinatorRole,
    CoordinatorStatus,
    SnapshotError,
)
from konsole.model.timefmt import to_ms
from store.queries import HistoryReader, StateAt
from store.rows import (
    CoordinatorRow,
    DatabaseRow,
    EpochMark,
    EpochRow,
    EventRow,
    MetricRow,
    OffsetsRow,
    PartitionRow,
    PlacementRow,
    PollRecord,
    SchemaRow,
    ServerRow,
    Slot,
    TableRow,
)

__all__ = [
    "METRIC_FIELDS",
    "REDACTED",
    "Recorded",
    "epoch_mark",
    "event_document",
    "event_from_row",
    "event_row",
    "poll_record",
    "redact",
    "snapshot_at",
    "snapshot_from_state",
    "to_ms",
    "with_epoch",
]

REDACTED: Final = "<redacted>"
_SECRET_KEY: Final = re.compile(
    r"pass(word|wd)?|secret|token|credential|jaas|private|(access|secret|api|auth)[._-]?key",
    re.IGNORECASE,
)
#: ServerMetrics fields kept as series (numbers only; identity fields are in the subject).
METRIC_FIELDS: Final = tuple(
    f.name
    for f in fields(ServerMetrics)
    if f.name
    not in {
        "url",
        "role",
        "server_id",
        "host",
        "scraped_at",
        "requests",
        "request_latency_ms",
        "tables",
        "cluster_id",
    }
)
_DERIVED: Final = ("request_rate", "request_error_rate", "kv_rejections")
_HEALTH: Final = "cluster"


def redact(properties: FrozenDict | dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if _SECRET_KEY.search(k) else v) for k, v in properties.items()}


# =========================================================================== snapshot -> rows


def poll_record(
    snapshot: ClusterSnapshot, events: Sequence[EventRow] = (), *, storage: bool = True
) -> PollRecord:
    """The rows one snapshot contributes; unknown parts are None (kept as they were).
    ``storage``: include the snapshot's storage part (the recorder writes each part once)."""
    view = snapshot.view
    coordinators = (
        tuple(CoordinatorRow(c.address, str(c.role)) for c in snapshot.coordinators)
        if snapshot.coordinators
        else None
    )
    base: dict[str, Any] = {
        "at_ms": to_ms(snapshot.taken_at),
        "seq": snapshot.seq,
        "latency_ms": to_ms(snapshot.latency_s),
        "ok": snapshot.ok,
        "error": snapshot.error,
        "errors": tuple(
            json.dumps([e.scope, e.subject, e.source, e.message]) for e in snapshot.errors[:20]
        ),
        "n_errors": len(snapshot.errors),
        "coordinators": coordinators,
        "metrics": _metric_rows(snapshot),
        "events": tuple(events),
        "storage": pack_storage(snapshot.storage)
        if storage and snapshot.storage is not None
        else None,
    }
    if view is None or not snapshot.ok:
        return PollRecord(**base)
    tables: list[TableRow] = []
    schemas: list[SchemaRow] = []
    partitions: list[PartitionRow] = []
    unknown: set[int] = set()
    for t in view.tables:
        if t.table_id is None:
            continue
        if t.info is None or t.error is not None:
            unknown.add(t.table_id)
            continue
        table_row, schema_row = _table_rows(t.info)
        tables.append(table_row)
        schemas.append(schema_row)
        partitions.extend(
            PartitionRow(
                t.table_id,
                p.partition_id,
                p.name,
                json.dumps(p.spec.to_dict(), sort_keys=True),
                p.remote_data_dir,
            )
            for p in t.partitions
        )
    placement, offsets = _slots(view, unknown)
    return PollRecord(
        **base,
        servers=tuple(ServerRow(s.node_id, s.role, s.host, s.port, s.rack) for s in view.servers),
        databases=tuple(DatabaseRow(d) for d in view.databases),
        tables=tuple(tables),
        schemas=tuple(schemas),
        partitions=tuple(partitions),
        placement=placement,
        unknown_tables=frozenset(unknown),
        offsets=offsets,
    )


#: Rows of a table's info, by the whole info (conversion is the costly part of recording
#: 200 tables every few seconds). Keyed by the value, not by ids: two clusters (or two
#: tests) may hold a table with the same id, path and times but another bucket count.
_TABLE_ROWS: dict[TableInfo, tuple[TableRow, SchemaRow]] = {}
_TABLE_ROWS_MAX: Final = 4096


def _table_rows(info: TableInfo) -> tuple[TableRow, SchemaRow]:
    rows = _TABLE_ROWS.get(info)
    if rows is None:
        if len(_TABLE_ROWS) >= _TABLE_ROWS_MAX:
            _TABLE_ROWS.clear()
        rows = (
            _table_row(info),
            SchemaRow(info.table_id, info.schema_id, json.dumps(info.schema.to_json())),
        )
        _TABLE_ROWS[info] = rows
    return rows


def _table_row(info: TableInfo) -> TableRow:
    descriptor: dict[str, Any] = {
        "version": 1,
        "partition_key": list(info.partition_keys),
        "bucket_key": list(info.bucket_keys),
        "bucket_count": info.bucket_count,
        "properties": redact(info.properties),
        "custom_properties": redact(info.custom_properties),
    }
    if info.comment is not None:
        descriptor["comment"] = info.comment
    return TableRow(
        table_id=info.table_id,
        database=info.database,
        name=info.table,
        schema_id=info.schema_id,
        descriptor=json.dumps(descriptor, sort_keys=True, separators=(",", ":")),
        created_ms=info.created_ms,
        modified_ms=info.modified_ms,
        remote_data_dir=info.remote_data_dir,
    )


def _slots(
    view: ClusterView, unknown: set[int]
) -> tuple[tuple[PlacementRow, ...], OffsetsRow | None]:
    """Placement and offsets, one slot per table or partition, buckets in id order.

    Runs every poll over every bucket: the usual shapes (a table's buckets of one partition
    together, in id order) take list comprehensions, anything else the general path.
    """
    groups: dict[tuple[int, int | None], list[BucketView]] = {}
    counts: dict[int, int] = {}
    for t in view.tables:
        if t.table_id is None:
            continue
        if t.info is not None:
            counts[t.table_id] = t.info.bucket_count
        keys = {(b.table_id, b.partition_id) for b in t.buckets}
        if len(keys) == 1:
            groups.setdefault(keys.pop(), []).extend(t.buckets)
            continue
        for b in t.buckets:
            group = groups.get((b.table_id, b.partition_id))
            if group is None:
                group = groups[(b.table_id, b.partition_id)] = []
            group.append(b)
    placement: list[PlacementRow] = []
    layout: list[Slot] = []
    latest: list[int | None] = []
    earliest: list[int | None] = []
    for (table_id, partition_id), group in sorted(
        groups.items(), key=lambda kv: (kv[0][0], -1 if kv[0][1] is None else kv[0][1])
    ):
        ids = [b.bucket_id for b in group]
        n = max(counts.get(table_id, 0), max(ids) + 1)
        if ids == list(range(n)):  # every bucket, in order
            if table_id not in unknown:
                placement.append(
                    PlacementRow(
                        table_id,
                        partition_id,
                        tuple([b.leader_id for b in group]),
                        tuple([b.replica_ids for b in group]),
                        tuple([b.leader_epoch for b in group]),
                    )
                )
            layout.append(Slot(table_id, partition_id, n))
            latest += [b.latest_offset for b in group]
            if view.earliest_read:
                earliest += [b.earliest_offset for b in group]
            continue
        by_id: list[BucketView | None] = [None] * n
        for b in group:
            by_id[b.bucket_id] = b
        if table_id not in unknown:
            placement.append(
                PlacementRow(
                    table_id,
                    partition_id,
                    tuple(None if b is None else b.leader_id for b in by_id),
                    tuple(() if b is None else b.replica_ids for b in by_id),
                    tuple(None if b is None else b.leader_epoch for b in by_id),
                )
            )
        layout.append(Slot(table_id, partition_id, n))
        latest.extend(None if b is None else b.latest_offset for b in by_id)
        if view.earliest_read:
            earliest.extend(None if b is None else b.earliest_offset for b in by_id)
    offsets = None
    if layout and view.latest_read:
        offsets = OffsetsRow(
            tuple(layout), tuple(latest), tuple(earliest) if view.earliest_read else None
        )
    return tuple(placement), offsets


def _metric_rows(snapshot: ClusterSnapshot) -> tuple[MetricRow, ...]:
    rows = []
    capacity = capacity_values(snapshot.capacity, snapshot.taken_at)
    for m in snapshot.metrics:
        values: list[tuple[str, float | None]] = []
        for name in (*METRIC_FIELDS, *_DERIVED):
            value = getattr(m, name)
            if value is not None:
                values.append((name, float(value)))
        if m.role == "tablet" and m.server_id is not None:
            values += capacity.get(m.server_id, ())  # konsole.collect.history.capacity_rows
        rows.append(MetricRow(m.subject, tuple(values)))
    if snapshot.health is not None:
        h = snapshot.health
        rows.append(
            MetricRow(
                _HEALTH,
                (
                    ("health_status", float(h.status)),
                    ("num_replicas", float(h.num_replicas)),
                    ("in_sync_replicas", float(h.in_sync_replicas)),
                    ("num_leader_replicas", float(h.num_leader_replicas)),
                    ("active_leader_replicas", float(h.active_leader_replicas)),
                ),
            )
        )
    return tuple(rows)


def epoch_mark(current: EpochRow | None, seen: ClusterIdentity) -> EpochMark | None:
    """What a poll showing ``seen`` does to the history's ``current`` epoch: start a new
    one (another cluster, or the first poll), keep it with a newer identity (a server
    added...; ``reason`` then says what changed when worth saying), or nothing (None)."""
    held = None if current is None else ClusterIdentity.from_json(current.identity)
    verdict = judge(held, seen)
    if not verdict.same:
        return EpochMark(verdict.identity.to_json(), start=True, reason=verdict.reason)
    text = verdict.identity.to_json()
    if current is not None and text == current.identity:
        return None
    return EpochMark(text, start=False, reason=verdict.note)


def with_epoch(
    record: PollRecord,
    snapshot: ClusterSnapshot,
    current: EpochRow | None,
    *,
    run_id: str | None = None,
) -> PollRecord:
    """``record`` marked with what its poll does to the history's ``current`` epoch; a
    failed poll shows no identity and stays unmarked (it belongs to the current epoch)."""
    seen = identity_of(snapshot, run_id=run_id)
    mark = None if seen is None else epoch_mark(current, seen)
    return record if mark is None else replace(record, epoch=mark)


def event_row(event: Event) -> EventRow:
    details = {
        "subject_kind": event.subject.kind,
        "count": event.count,
        "samples": list(event.samples),
        "details": dict(event.details),
    }
    return EventRow(
        at_ms=to_ms(event.time),
        kind=event.kind.value,
        severity=event.severity.value,
        subject=event.subject.name,
        message=event.message,
        details=json.dumps(details, default=str, separators=(",", ":")),
    )


def event_from_row(row: EventRow) -> Event:
    """The :class:`Event` a row was written from (a kind this konsole does not know, from
    a newer one, keeps its text in ``details['kind']`` and reads as ``health_changed``)."""
    try:
        extra = json.loads(row.details)
    except ValueError:
        extra = {}
    details = dict(extra.get("details") or {})
    try:
        kind = EventKind(row.kind)
    except ValueError:
        kind, details["kind"] = EventKind.HEALTH_CHANGED, row.kind
    try:
        severity = Severity(row.severity)
    except ValueError:
        severity = Severity.WARNING
    return Event(
        time=row.at_ms / 1000,
        kind=kind,
        severity=severity,
        subject=Subject(str(extra.get("subject_kind", "cluster")), row.subject),
        message=row.message,
        details=details,
        count=int(extra.get("count", 1)),
        samples=tuple(extra.get("samples", ())),
    )


def event_document(row: EventRow) -> dict[str, Any]:
    """A recorded event in the one JSON shape (:meth:`Event.as_dict`), its kind and
    severity as recorded (a newer konsole's kind stays itself)."""
    doc = event_from_row(row).as_dict()
    if doc["kind"] != row.kind:
        doc["details"].pop("kind", None)
    doc.update(kind=row.kind, severity=row.severity, time_ms=row.at_ms)
    return doc


# =========================================================================== rows -> snapshot


@dataclass(frozen=True, slots=True)
class Recorded:
    """A past poll as a live screen consumes it; ``historic`` is the only difference."""

    snapshot: ClusterSnapshot
    #: The moment asked for (epoch seconds); the snapshot is the last poll at or before it.
    as_of: float
    historic: bool = True


def snapshot_at(reader: HistoryReader, at: float) -> Recorded | None:
    """The cluster as recorded at ``at`` (epoch seconds); None before the first poll."""
    state = reader.state_at(to_ms(at))
    if state is None:
        return None
    snapshot = snapshot_from_state(state)
    if not snapshot.ok:
        # The file keeps each poll's outcome, not the run of failures: count it back (within
        # the hour before and the epoch), so a recorded failure reads as it did live.
        since, until = reader.epochs.narrow(state.poll.at_ms - 1000 * 3600, state.poll.at_ms)
        polls = reader.polls(since=since, until=until)
        run = 0
        for poll in reversed(polls):
            if poll.ok:
                break
            run += 1
        snapshot = replace(snapshot, consecutive_failures=max(1, run))
    return Recorded(snapshot, at)


def snapshot_from_state(state: StateAt) -> ClusterSnapshot:
    poll = state.poll
    taken_at, latency = poll.at_ms / 1000, poll.latency_ms / 1000
    coordinators = tuple(
        CoordinatorStatus(c.address, CoordinatorRole(c.role)) for c in state.coordinators
    )
    errors = tuple(_error(text) for text in poll.errors)
    metrics, health = _metrics(state, taken_at)
    origin = _metrics_origin(metrics, errors)
    capacity = capacity_from_values(
        (
            (row.subject.removeprefix("tablet-server "), dict(row.values))
            for row in state.metrics
            if row.subject.startswith("tablet-server ")
        ),
        taken_at,
    )
    if not poll.ok:
        return ClusterSnapshot(
            seq=poll.seq,
            taken_at=taken_at,
            latency_s=latency,
            ok=False,
            error=poll.error or "failed",
            view=None,
            coordinators=coordinators,
            metrics=metrics,
            errors=errors,
            consecutive_failures=1,
            metrics_origin=origin,
        )
    return ClusterSnapshot(
        seq=poll.seq,
        taken_at=taken_at,
        latency_s=latency,
        ok=True,
        error=None,
        view=_view(state, taken_at, latency),
        coordinators=coordinators,
        health=health,
        metrics=metrics,
        errors=errors,
        metrics_origin=origin,
        capacity=capacity,
        storage=unpack_storage(state.storage),
    )


def _metrics_origin(
    metrics: Sequence[ServerMetrics], errors: Sequence[SnapshotError]
) -> MetricsOrigin:
    """The file keeps no origin: a poll with neither a server's metrics nor a metrics
    error scraped no endpoint, so none was configured (a past moment reads as it did live)."""
    if metrics or any(e.scope == "metrics" for e in errors):
        return MetricsOrigin.CONFIGURED
    return MetricsOrigin.NONE


def _error(text: str) -> SnapshotError:
    try:
        scope, subject, source, message = json.loads(text)
        return SnapshotError(str(scope), str(subject), str(source), str(message))
    except (ValueError, TypeError):
        return SnapshotError("cluster", "cluster", "history", text)


def _view(state: StateAt, taken_at: float, latency: float) -> ClusterView:
    servers = [
        ServerInfo(node_id=s.node_id, role=s.role, host=s.host, port=s.port, rack=s.rack)  # type: ignore[arg-type]
        for s in state.servers
    ]
    coordinator = next((s for s in servers if s.role == "coordinator"), None)
    schemas = {(s.table_id, s.schema_id): s.schema for s in state.schemas}
    parts: dict[int, list[PartitionInfo]] = {}
    for p in state.partitions:
        parts.setdefault(p.table_id, []).append(
            PartitionInfo(p.partition_id, p.name, FrozenDict(json.loads(p.spec)), p.remote_data_dir)
        )
    placement: dict[int, list[PlacementRow]] = {}
    for slot in state.placement:
        placement.setdefault(slot.table_id, []).append(slot)
    offsets = _offset_map(state.offsets)
    names = {p.partition_id: p.name for p in state.partitions}
    tables = []
    for t in state.tables:
        buckets = []
        for slot in sorted(
            placement.get(t.table_id, ()),
            key=lambda r: -1 if r.partition_id is None else r.partition_id,
        ):
            pid = slot.partition_id
            for bucket_id, leader in enumerate(slot.leaders):
                latest, earliest = offsets.get((t.table_id, pid, bucket_id), (None, None))
                buckets.append(
                    BucketView(
                        table_id=t.table_id,
                        partition_id=pid,
                        partition_name=names.get(pid) if pid is not None else None,
                        bucket_id=bucket_id,
                        leader_id=leader,
                        replica_ids=slot.replicas[bucket_id],
                        leader_epoch=slot.epochs[bucket_id],
                        latest_offset=latest,
                        earliest_offset=earliest,
                    )
                )
        tables.append(
            TableView(
                path=TablePath(t.database, t.name),
                table_id=t.table_id,
                info=_table_info(t, schemas.get((t.table_id, t.schema_id))),
                partitions=tuple(sorted(parts.get(t.table_id, ()), key=lambda p: p.partition_id)),
                buckets=tuple(buckets),
            )
        )
    tables.sort(key=lambda tv: (tv.path.database, tv.path.table))
    return ClusterView(
        coordinator=coordinator,
        tablet_servers=tuple(
            sorted((s for s in servers if s.role == "tablet"), key=lambda s: s.node_id)
        ),
        databases=tuple(sorted(d.name for d in state.databases)),
        tables=tuple(tables),
        errors=(),
        round_trips=0,
        requests=0,
        started_at=taken_at,
        duration_s=latency,
        latest_read=state.offsets is not None,
        earliest_read=state.offsets is not None and state.offsets.earliest is not None,
    )


#: Parsed table infos by their rows (parsing 200 tables' JSON is most of an as-of's cost).
_INFOS: dict[tuple[TableRow, str], TableInfo | None] = {}


def _table_info(row: TableRow, schema: str | None) -> TableInfo | None:
    if schema is None:
        return None
    key = (row, schema)
    if key not in _INFOS:
        if len(_INFOS) >= _TABLE_ROWS_MAX:
            _INFOS.clear()
        _INFOS[key] = _parse_info(row, schema)
    return _INFOS[key]


def _parse_info(row: TableRow, schema: str) -> TableInfo | None:
    doc = json.loads(row.descriptor)
    doc["schema"] = json.loads(schema)
    try:
        descriptor = parse_table_descriptor(doc)
        return TableInfo.from_descriptor(
            row.database,
            row.name,
            table_id=row.table_id,
            schema_id=row.schema_id,
            descriptor=descriptor,
            created_ms=row.created_ms,
            modified_ms=row.modified_ms,
            remote_data_dir=row.remote_data_dir,
        )
    except DecodeError:
        return None


def _offset_map(
    offsets: OffsetsRow | None,
) -> dict[tuple[int, int | None, int], tuple[int | None, int | None]]:
    out: dict[tuple[int, int | None, int], tuple[int | None, int | None]] = {}
    if offsets is None:
        return out
    i = 0
    for slot in offsets.layout:
        for bucket in range(slot.buckets):
            early = offsets.earliest[i] if offsets.earliest is not None else None
            out[(slot.table_id, slot.partition_id, bucket)] = (offsets.latest[i], early)
            i += 1
    return out


def _metrics(
    state: StateAt, taken_at: float
) -> tuple[tuple[ServerMetrics, ...], ClusterHealth | None]:
    out: list[ServerMetrics] = []
    health: ClusterHealth | None = None
    for row in state.metrics:
        values = dict(row.values)
        if row.subject == _HEALTH:
            health = ClusterHealth(
                num_replicas=int(values.get("num_replicas") or 0),
                in_sync_replicas=int(values.get("in_sync_replicas") or 0),
                num_leader_replicas=int(values.get("num_leader_replicas") or 0),
                active_leader_replicas=int(values.get("active_leader_replicas") or 0),
                status=HealthStatus(int(values.get("health_status", 3) or 0)),
            )
            continue
        role, _, ident = row.subject.partition(" ")
        kwargs: dict[str, Any] = {}
        for f in fields(ServerMetrics):
            if f.name in values and values[f.name] is not None:
                kwargs[f.name] = _typed(f.type, values[f.name])
        out.append(
            ServerMetrics(
                url="",
                role="tablet" if role == "tablet-server" else "coordinator",
                server_id=ident if role == "tablet-server" else None,
                host=ident if role == "coordinator" else None,
                scraped_at=taken_at,
                **{k: v for k, v in kwargs.items() if k != "scraped_at"},
            )
        )
    return tuple(out), health


def _typed(annotation: Any, value: float | None) -> Any:
    text = str(annotation)
    if value is None:
        return None
    if text.startswith("bool"):
        return value >= 0.5
    if text.startswith("int"):
        return round(value)
    return value

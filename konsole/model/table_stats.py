"""Per-table and per-bucket figures the Tables and Table detail screens show (no Textual).

Bucket counts (offline, under-replicated) are :mod:`konsole.model.placement`'s, per table.
Rates come from two successful polls: the high watermarks of ``current`` minus those of
``previous`` over the time between them, summed over the buckets known in both (a
re-created table has a new id and so no rate yet). A bucket whose offset went down
(truncation, a new leader behind) gives no rate rather than a negative one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fluss_proto.model import BucketView, TableView
from konsole.model.placement import placement
from konsole.model.snapshot import ClusterSnapshot

__all__ = [
    "BucketKey",
    "TableFigures",
    "bucket_rates",
    "table_figures",
]

#: (partition id, bucket id)
BucketKey = tuple[int | None, int]


@dataclass(frozen=True, slots=True)
class TableFigures:
    path: str
    database: str
    table: str
    #: True: primary-key table, False: log table, None: metadata unreadable.
    primary_key: bool | None
    buckets: int
    partitions: int
    #: Rows per second from offset deltas; None when unknown.
    rows_per_s: float | None
    #: Sum of (latest - earliest) over buckets where both are known; None if none is.
    offset_span: int | None
    #: Buckets with a replica on a server that is not alive (placement; no server reports
    #: replication per table).
    under_replicated: int
    #: Buckets without an alive leader (placement).
    offline: int
    error: str | None = None


def _id(table: TableView) -> int:
    # Table ids start at 0: ``table_id or -1`` would give the first table no rate.
    return -1 if table.table_id is None else table.table_id


def _latest_by_table(snapshot: ClusterSnapshot | None) -> dict[int, dict[BucketKey, int]]:
    out: dict[int, dict[BucketKey, int]] = {}
    if snapshot is None or snapshot.view is None:
        return out
    for t in snapshot.view.tables:
        if t.table_id is None:
            continue
        out[t.table_id] = {
            (b.partition_id, b.bucket_id): b.latest_offset
            for b in t.buckets
            if b.latest_offset is not None
        }
    return out


def _dt(current: ClusterSnapshot, previous: ClusterSnapshot | None) -> float | None:
    if previous is None or previous.view is None:
        return None
    dt = current.taken_at - previous.taken_at
    return dt if dt > 0 else None


def bucket_rates(
    table: TableView, current: ClusterSnapshot, previous: ClusterSnapshot | None
) -> dict[BucketKey, float | None]:
    """(partition, bucket) -> rows/s for one table's buckets (None: unknown)."""
    dt = _dt(current, previous)
    before = _latest_by_table(previous).get(_id(table), {}) if dt else {}
    out: dict[BucketKey, float | None] = {}
    for b in table.buckets:
        key = (b.partition_id, b.bucket_id)
        old = before.get(key)
        if dt is None or old is None or b.latest_offset is None or b.latest_offset < old:
            out[key] = None
        else:
            out[key] = (b.latest_offset - old) / dt
    return out


def _table_rate(
    table: TableView, before: dict[BucketKey, int] | None, dt: float | None
) -> float | None:
    if dt is None or before is None:
        return None
    delta = 0
    known = 0
    for b in table.buckets:
        old = before.get((b.partition_id, b.bucket_id))
        if old is None or b.latest_offset is None:
            continue
        if b.latest_offset < old:
            return None
        delta += b.latest_offset - old
        known += 1
    return delta / dt if known else None


def _span(buckets: Iterable[BucketView]) -> int | None:
    total, known = 0, False
    for b in buckets:
        if b.latest_offset is not None and b.earliest_offset is not None:
            total += max(0, b.latest_offset - b.earliest_offset)
            known = True
    return total if known else None


def table_figures(
    current: ClusterSnapshot | None, previous: ClusterSnapshot | None
) -> list[TableFigures]:
    """One entry per table of ``current`` (a successful poll), in the poll's order."""
    if current is None or current.view is None:
        return []
    view = current.view
    facts = placement(view)
    dt = _dt(current, previous)
    before = _latest_by_table(previous) if dt else {}
    out: list[TableFigures] = []
    for t in view.tables:
        info = t.info
        partitions = len(t.partitions)
        counts = facts.table(t.table_id)
        out.append(
            TableFigures(
                path=str(t.path),
                database=t.path.database,
                table=t.path.table,
                primary_key=None if info is None else info.is_pk_table,
                buckets=len(t.buckets),
                partitions=partitions,
                rows_per_s=_table_rate(t, before.get(_id(t)), dt),
                offset_span=_span(t.buckets),
                under_replicated=counts.under_replicated,
                offline=counts.offline,
                error=None if t.error is None else str(t.error),
            )
        )
    return out

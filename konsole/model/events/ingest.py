"""Ingest: ingest_stalled when a table whose log end offsets advanced stops advancing for
``rules.ingest_stall_polls`` polls, ingest_resumed when it advances again.

A table that never advanced is idle, not stalled. Offsets going back (truncated or
recreated) start its track over; a poll without every bucket's offset keeps the track.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from fluss_proto.model import TableView
from konsole.model.events.base import (
    Emitter,
    Event,
    EventConfig,
    EventKind,
    Severity,
    Subject,
    plural,
)
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["IngestState", "TableIngest", "detect_ingest"]


@dataclass(frozen=True, slots=True)
class TableIngest:
    """One table's log end offsets (summed over its buckets) across polls."""

    total: int
    advanced: bool = False
    quiet_polls: int = 0
    stalled: bool = False


@dataclass(frozen=True, slots=True)
class IngestState:
    #: ``db.table#id`` -> its track; only tables of the last view (bounded by the cluster).
    tables: Mapping[str, TableIngest] = field(default_factory=lambda: MappingProxyType({}))


def detect_ingest(
    state: IngestState, current: ClusterSnapshot, config: EventConfig
) -> tuple[list[Event], IngestState]:
    """Stalls and resumptions in ``current`` after the tracks of ``state``."""
    out = Emitter(current, config)
    view = current.view
    if view is None or not view.latest_read:
        return out.events, state
    tracks: dict[str, TableIngest] = {}
    for table in view.tables:
        if table.table_id is None or not table.buckets:
            continue
        key = f"{table.path}#{table.table_id}"
        track = _track(out, table, state.tables.get(key), config.rules.ingest_stall_polls)
        if track is not None:
            tracks[key] = track
    return out.events, IngestState(MappingProxyType(tracks))


def _track(
    out: Emitter, table: TableView, old: TableIngest | None, need: int
) -> TableIngest | None:
    total = _log_end(table)
    if total is None:
        return old  # unknown this poll: keep what we knew
    if old is None or total < old.total:
        return TableIngest(total)
    subject = Subject("table", str(table.path))
    if total > old.total:
        if old.stalled:
            out.emit(
                EventKind.INGEST_RESUMED,
                Severity.INFO,
                subject,
                f"table {table.path}: log end offsets advance again",
                {"log_end_offset": total, "new_records": total - old.total},
            )
        return TableIngest(total, advanced=True)
    quiet = old.quiet_polls + 1
    stalled = old.stalled
    if old.advanced and not stalled and quiet >= need:
        stalled = True
        out.emit(
            EventKind.INGEST_STALLED,
            Severity.WARNING,
            subject,
            f"table {table.path}: no new records for {plural(quiet, 'poll')} after advancing",
            {"log_end_offset": total, "quiet_polls": quiet},
        )
    return TableIngest(total, old.advanced, quiet, stalled)


def _log_end(table: TableView) -> int | None:
    total = 0
    for bucket in table.buckets:
        if bucket.latest_offset is None:
            return None
        total += bucket.latest_offset
    return total

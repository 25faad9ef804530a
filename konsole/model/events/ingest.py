"""Ingest: ingest_stalled when a table whose log end offsets advanced stops advancing for
long enough, ingest_resumed when it advances again.

Long enough is time, not a count of polls (a producer that writes once a minute is not
stalled between two writes): the table has been quiet for ``rules.ingest_stall_after``
seconds **and** for :data:`GAP_FACTOR` times the longest of its last :data:`GAPS_KEPT`
gaps between advances (its own rhythm; the first gap counts from when the table was first
seen), **and** for at least ``rules.ingest_stall_polls`` polls (the older, count-based key,
still read as a floor).

A table that never advanced is idle, not stalled. Offsets going back (truncated or
recreated) start its track over; a poll without every bucket's offset keeps the track.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

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

__all__ = ["GAPS_KEPT", "GAP_FACTOR", "IngestState", "TableIngest", "detect_ingest"]

#: A table is stalled only after this many times its longest recent gap between advances.
GAP_FACTOR: Final = 3.0
#: How many recent gaps between advances a track keeps.
GAPS_KEPT: Final = 8


@dataclass(frozen=True, slots=True)
class TableIngest:
    """One table's log end offsets (summed over its buckets) across polls."""

    total: int
    advanced: bool = False
    quiet_polls: int = 0
    stalled: bool = False
    #: When the offsets last advanced (or the table was first seen): the quiet time's start.
    since: float | None = None
    #: Its latest gaps between advances, in seconds (newest last, at most GAPS_KEPT).
    gaps: tuple[float, ...] = ()

    def stall_after(self, floor: float) -> float:
        """Seconds of quiet after which this table counts as stalled."""
        return max(floor, GAP_FACTOR * max(self.gaps, default=0.0))


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
        track = _track(out, table, state.tables.get(key), config)
        if track is not None:
            tracks[key] = track
    return out.events, IngestState(MappingProxyType(tracks))


def _track(
    out: Emitter, table: TableView, old: TableIngest | None, config: EventConfig
) -> TableIngest | None:
    total = _log_end(table)
    now = out.time
    if total is None:
        return old  # unknown this poll: keep what we knew
    if old is None or total < old.total:
        return TableIngest(total, since=now)
    subject = Subject("table", str(table.path))
    since = now if old.since is None else old.since
    if total > old.total:
        if old.stalled:
            out.emit(
                EventKind.INGEST_RESUMED,
                Severity.INFO,
                subject,
                f"table {table.path}: log end offsets advance again",
                {"log_end_offset": total, "new_records": total - old.total},
            )
        gaps = (*old.gaps, max(0.0, now - since))[-GAPS_KEPT:]
        return TableIngest(total, advanced=True, since=now, gaps=gaps)
    quiet = old.quiet_polls + 1
    quiet_s = max(0.0, now - since)
    stalled = old.stalled
    rules = config.rules
    if (
        old.advanced
        and not stalled
        and quiet >= rules.ingest_stall_polls
        and quiet_s >= old.stall_after(rules.ingest_stall_after)
    ):
        stalled = True
        out.emit(
            EventKind.INGEST_STALLED,
            Severity.WARNING,
            subject,
            f"table {table.path}: no new records for {quiet_s:.0f}s "
            f"({plural(quiet, 'poll')}) after advancing",
            {"log_end_offset": total, "quiet_polls": quiet, "quiet_s": round(quiet_s, 1)},
        )
    return TableIngest(total, old.advanced, quiet, stalled, since, old.gaps)


def _log_end(table: TableView) -> int | None:
    total = 0
    for bucket in table.buckets:
        if bucket.latest_offset is None:
            return None
        total += bucket.latest_offset
    return total

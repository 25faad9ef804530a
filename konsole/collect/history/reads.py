"""Reading a history file from the faces: one reader, opened for one read and closed.

The console's screens ask for series, events and past moments through these (the app runs
them in a worker): the ui does no I/O of its own. :func:`read_history` is the one way async
code reads a history file: ``read(reader)`` in a thread, the reader closed whatever happens,
so a slow disk never blocks the event loop that paints the screens.

``store`` (and with it sqlite3) is imported when a history is read, not with this module:
the console paints its first frame without it (docs/performance.md, the first paint).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from konsole.collect.cluster.capacity import CapacityCollector
    from konsole.collect.logs.evidence import LogView
    from konsole.model.events import Event
    from konsole.model.snapshot import ClusterSnapshot

    # Re-exported for the faces' type hints: they name the reader without importing store.
    from store import HistoryReader as HistoryReader
    from store.rows import PollRow

__all__ = [
    "RecordedMoment",
    "RecordedNote",
    "event_timeline",
    "events_between_epoch",
    "evidence_of",
    "neighbour_event_time",
    "open_history_reader",
    "partition_recorded",
    "read_history",
    "recorded_moment",
    "seed_capacity",
    "server_metric_series",
    "table_rate_series",
    "throughput_series",
    "untiered_series",
    "untiered_values",
    "with_history",
    "write_report_around",
]

T = TypeVar("T")


def open_history_reader(path: Path | None) -> HistoryReader | None:
    """A reader of ``path``, or None when there is no usable history there."""
    if path is None or not path.exists():
        return None
    from store import HistoryError, open_reader

    try:
        return open_reader(path)
    except HistoryError:
        return None


def with_history(path: Path | None, read: Callable[[HistoryReader], T]) -> T | None:
    """``read(reader)`` on a reader of ``path``, closed afterwards; None without a usable
    history. Blocking (SQLite): from async code use :func:`read_history`."""
    reader = open_history_reader(path)
    if reader is None:
        return None
    try:
        return read(reader)
    finally:
        reader.close()


async def read_history(path: Path | None, read: Callable[[HistoryReader], T]) -> T | None:
    """:func:`with_history` in a thread: the event loop keeps painting while SQLite reads."""
    return await asyncio.to_thread(with_history, path, read)


async def seed_capacity(collector: CapacityCollector, path: Path | None, now: float) -> int:
    """Starts ``collector``'s forecasts from the disk usage recorded in ``path`` over its
    forecast window before ``now`` (a face that polls would otherwise begin with none and
    need ``forecast_min_span_s`` of polls); the samples read (0 without a history)."""
    from konsole.collect.history.capacity_rows import seed_from_history

    window = collector.thresholds.forecast_window_s
    read = await read_history(path, lambda r: seed_from_history(collector, r, now, window))
    return read or 0


# ============================================================ the screens' history questions
# Each question a console screen asks of the history, named: the screens hold no reader and
# know nothing of the store's rows (a contract: konsole.ui imports no store).


@dataclass(frozen=True, slots=True)
class RecordedNote:
    """An operator note as a screen shows it (epoch seconds)."""

    id: int | None
    at: float
    subject: str
    text: str


async def events_between_epoch(
    path: Path | None, at_ms: int | None, limit: int
) -> list[tuple[float, str, str]] | None:
    """The last ``limit`` recorded events of the epoch (the cluster) that holds ``at_ms``
    (None: the newest), as (time, severity, message), oldest first; None without a history."""

    def read(reader: HistoryReader) -> list[tuple[float, str, str]]:
        lo, hi = reader.epochs.span(at_ms)
        listed = reader.events(lo, None if hi is None else hi - 1)[-limit:]
        return [(r.at_ms / 1000, r.severity, r.message) for r in listed]

    return await read_history(path, read)


async def neighbour_event_time(
    path: Path | None, at: float | None, direction: int
) -> list[float] | None:
    """The time of the recorded event just before (``direction`` < 0) or after ``at``
    within its epoch (from live, ``at`` None: the latest); [] when there is none, None
    without a history. Stepping never crosses into another cluster's epoch."""
    from konsole.model.timefmt import to_ms

    def read(reader: HistoryReader) -> list[float]:
        lo, hi = reader.epochs.span(None if at is None else to_ms(at))
        last = None if hi is None else hi - 1
        if at is None:
            rows = reader.events(lo, last)[-1:]
        elif direction < 0:
            rows = reader.events(lo, to_ms(at) - 1)[-1:]
        else:
            rows = reader.events(to_ms(at) + 1, last, limit=1)
        return [r.at_ms / 1000 for r in rows]

    return await read_history(path, read)


async def event_timeline(
    path: Path | None, until_ms: int | None, limit: int
) -> tuple[list[Event], list[RecordedNote]] | None:
    """The last ``limit`` events and every note of the epoch up to ``until_ms`` (None: the
    newest epoch); None without a history. An earlier epoch of the file is another cluster."""
    from konsole.collect.history.rows import event_from_row

    def read(reader: HistoryReader) -> tuple[list[Event], list[RecordedNote]]:
        since, until_in = reader.epochs.narrow(None, until_ms)
        events = [event_from_row(r) for r in reader.events(since, until_in)[-limit:]]
        notes = [
            RecordedNote(n.id, n.at_ms / 1000, n.subject, n.text)
            for n in reader.notes(since, until_in)
        ]
        return events, notes

    return await read_history(path, read)


async def server_metric_series(
    path: Path | None, subject: str, names: Sequence[str], since_ms: int, until_ms: int
) -> dict[str, list[float | None]] | None:
    """:func:`~konsole.collect.history.metric_series.metric_series` of ``subject`` from the history
    ``path``; None without a history."""
    from konsole.collect.history.metric_series import metric_series

    return await read_history(path, lambda r: metric_series(r, subject, names, since_ms, until_ms))


async def throughput_series(
    path: Path | None, since_ms: int, until_ms: int
) -> dict[str, list[float | None]] | None:
    """The cluster's throughput per recorded poll in [since, until]
    (:func:`~konsole.collect.history.metric_series.cluster_throughput_series`); None without one."""
    from konsole.collect.history.metric_series import cluster_throughput_series

    return await read_history(path, lambda r: cluster_throughput_series(r, since_ms, until_ms))


async def evidence_of(
    path: Path | None, subject: str, names: Sequence[str], since_ms: int, until_ms: int, at: float
) -> tuple[dict[str, list[float | None]], LogView | None] | None:
    """A server's metric series in [since, until] and the log excerpt the history kept
    around ``at`` (an event's evidence); None without a history."""
    from konsole.collect.history.metric_series import metric_series
    from konsole.collect.logs.evidence import recorded_log

    def read(reader: HistoryReader) -> tuple[dict[str, list[float | None]], LogView | None]:
        found = metric_series(reader, subject, names, since_ms, until_ms)
        return found, recorded_log(reader, subject, at)

    return await read_history(path, read)


async def table_rate_series(
    path: Path | None, table_path: str, table_id: int | None, until_ms: int | None, points: int
) -> list[float | None] | None:
    """The table's rows/s at each of its last ``points`` recorded polls up to ``until_ms``
    (all partitions): the table ``table_id`` when the history knows it under that name in
    this epoch, else the newest table of that name (a table dropped and created again);
    None without a history."""
    database, _, name = table_path.partition(".")

    def read(reader: HistoryReader) -> list[float | None]:
        spans = reader.tables_named(database, name, until=until_ms, within_epoch=True)
        ids = [s.table_id for s in spans]
        chosen = table_id if table_id in ids else (ids[-1] if ids else None)
        if chosen is None:
            return []
        found = reader.throughput(chosen, None, None, until=until_ms, all_partitions=True)
        return [p.value for p in found[-points:]]

    return await read_history(path, read)


def partition_recorded(reader: HistoryReader, table_id: int, name: str) -> int | None:
    """The id a partition of table ``table_id`` named ``name`` was recorded with (None:
    never recorded): ``history series --partition``'s question."""
    from store.queries import partition_id

    return partition_id(reader, table_id, name)


def untiered_values(
    reader: HistoryReader, table: str, until_ms: int, parts: int
) -> list[float | None]:
    """The table's offsets not yet tiered at each of the last ``parts`` recorded storage
    parts up to ``until_ms``, oldest first (None: a part that did not know a bucket's lag)."""
    from konsole.collect.history.storage_rows import unpack_storage
    from konsole.model.storage import untiered
    from store.queries import storage_bodies

    out: list[float | None] = []
    for body in storage_bodies(reader, until_ms=until_ms, limit=parts):
        part = unpack_storage(body)
        facts = part.table(table) if part is not None else None
        if part is None or facts is None:
            continue
        left = [untiered(b) for b in part.buckets_of(facts.table_id)]
        out.append(None if not left or None in left else float(sum(v or 0 for v in left)))
    return out


async def untiered_series(
    path: Path | None, table: str, until_ms: int, parts: int
) -> list[float | None] | None:
    """:func:`untiered_values` from the history ``path``; None without a history."""
    return await read_history(path, lambda r: untiered_values(r, table, until_ms, parts))


async def write_report_around(
    path: Path | None, out: Path, at_ms: int, half_ms: int
) -> Path | None:
    """The incident report of [at - half, at + half] around ``at_ms`` written to ``out``
    (its folder made on first use); its path, None without a history."""

    def write(reader: HistoryReader) -> Path:
        from konsole.report import write_report

        out.parent.mkdir(exist_ok=True)
        lo, hi = at_ms - half_ms, at_ms + half_ms
        return write_report(reader, out, since_ms=lo, until_ms=hi, around_ms=at_ms).path

    return await read_history(path, write)


# =========================================================================== time travel


@dataclass(frozen=True, slots=True)
class RecordedMoment:
    """What a history says of one past moment, for judging it as a live judge would have."""

    snapshot: ClusterSnapshot
    #: The last good poll before the moment (this moment's epoch only) and the one before it.
    last_ok: ClusterSnapshot | None
    previous_ok: ClusterSnapshot | None
    #: Whether the poll right before the moment was good.
    just_before_ok: bool
    #: The last ``events_kept`` events up to the moment (its epoch only), oldest first.
    events: tuple[Event, ...]


def recorded_moment(reader: HistoryReader, at: float, *, events_kept: int) -> RecordedMoment | None:
    """The poll recorded at or before ``at`` and what came before it in its epoch (its
    cluster); None before the first poll. Blocking (reads SQLite): call it from a thread."""
    from konsole.collect.history.rows import event_from_row, snapshot_at
    from konsole.model.timefmt import to_ms

    recorded = snapshot_at(reader, at)
    if recorded is None:
        return None
    snap = recorded.snapshot
    at_ms = to_ms(snap.taken_at)
    since, _ = reader.epochs.narrow(None, at_ms)
    good: list[ClusterSnapshot] = []
    just_before: bool | None = None
    for poll in _polls_before(reader, at_ms, since):
        just_before = poll.ok if just_before is None else just_before
        if len(good) == 2:
            break
        if poll.ok:
            found = snapshot_at(reader, poll.at_ms / 1000)
            if found is not None:
                good.append(found.snapshot)
    rows = reader.events(until=to_ms(at), limit=None, within_epoch=True)[-events_kept:]
    return RecordedMoment(
        snap,
        good[0] if good else None,
        good[1] if len(good) > 1 else None,
        bool(just_before),
        tuple(event_from_row(r) for r in rows),
    )


def _polls_before(reader: HistoryReader, at_ms: int, since: int | None) -> Iterator[PollRow]:
    """The polls before ``at_ms`` (from ``since`` on), newest first: a few asked one by
    one (the usual case: the last good polls are the last ones), then the rest at once."""
    cursor = at_ms - 1
    for _ in range(3):
        poll = reader.poll_at(cursor)
        if poll is None or (since is not None and poll.at_ms < since):
            return
        yield poll
        cursor = poll.at_ms - 1
    yield from reversed(reader.polls(since=since, until=cursor))

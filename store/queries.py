"""Reading the history: any number of readers, each on its own read-only connection.

In WAL mode a reader sees the last committed poll and never waits for the writer. A reader
never writes: a file of an older schema is read as it is (every version since 1 reads
correctly; the next ``konsole record`` on it migrates it).

Epochs (schema 3, :attr:`HistoryReader.epochs`): a history may hold several clusters, one
epoch each. Whatever joins polls across time stays inside one epoch: a series
(:meth:`HistoryReader.offset_totals`, :meth:`~HistoryReader.throughput`,
:meth:`~HistoryReader.metric_series`) covers the epoch of its ``until`` (the latest
without one); :meth:`~HistoryReader.state_at` takes earlier offsets only from its own
epoch; :meth:`~HistoryReader.events` does so when asked (``within_epoch``). Files without
epochs read as one.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from store import codec
from store.epochs import Epochs
from store.errors import NotAHistoryFile
from store.excerpts import ExcerptReads
from store.files import connect, inspect, lock_holder, translate
from store.history import ENTITIES
from store.reads import PackedReads
from store.rows import (
    CoordinatorRow,
    DatabaseRow,
    EpochRow,
    EventRow,
    MetricRow,
    NoteRow,
    OffsetsRow,
    PartitionRow,
    PlacementRow,
    PollRow,
    SchemaRow,
    ServerRow,
    Slot,
    TableRow,
)
from store.schema import migrate

__all__ = [
    "HistoryInfo",
    "HistoryReader",
    "SeriesPoint",
    "StateAt",
    "TableSpan",
    "open_reader",
    "operator_subjects",
    "storage_at_poll",
    "storage_bodies",
    "tablet_servers_seen",
]

LEVELS: Final = ("full", "minute", "hour")


@dataclass(frozen=True, slots=True)
class StateAt:
    """The cluster as recorded by one poll."""

    poll: PollRow
    servers: tuple[ServerRow, ...]
    coordinators: tuple[CoordinatorRow, ...]
    databases: tuple[DatabaseRow, ...]
    tables: tuple[TableRow, ...]
    schemas: tuple[SchemaRow, ...]
    partitions: tuple[PartitionRow, ...]
    placement: tuple[PlacementRow, ...]
    #: This poll's offsets (None when it recorded none); ``earliest`` from the last poll
    #: at or before it that read them, if its layout is the same.
    offsets: OffsetsRow | None
    metrics: tuple[MetricRow, ...]
    #: The last storage part recorded at or before this poll, in its epoch (opaque body).
    storage: bytes | None = None


@dataclass(frozen=True, slots=True)
class SeriesPoint:
    at_ms: int
    value: float | None


@dataclass(frozen=True, slots=True)
class TableSpan:
    """One table id under one name, and when it existed."""

    table_id: int
    database: str
    name: str
    from_ms: int
    to_ms: int | None


@dataclass(frozen=True, slots=True)
class HistoryInfo:
    path: str
    size_bytes: int
    schema_version: int
    first_ms: int | None
    last_ms: int | None
    #: "full" / "minute" / "hour" -> polls kept at that resolution.
    polls: dict[str, int] = field(default_factory=dict)
    #: Events by the same age bands as the polls' levels (see :class:`RetentionPolicy`).
    events: dict[str, int] = field(default_factory=dict)
    notes: int = 0
    writer_pid: int | None = None
    #: Oldest first; empty for a file written before epochs (schema < 3).
    epochs: tuple[EpochRow, ...] = ()
    #: Polls that reached the cluster (an epoch begins with the first of them).
    good_polls: int = 0


def open_reader(path: Path) -> HistoryReader:
    """A reader on an existing history file; raises :class:`~store.errors.HistoryError`."""
    path = Path(path)
    if not path.exists():
        raise NotAHistoryFile(f"{path}: no such history file")
    found = inspect(path)
    if found == 0:
        # Empty, or a writer has created it and not committed the schema yet: an empty
        # history (the schema in memory), without writing to the file. It stays empty:
        # open a new reader to see what gets recorded.
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        try:
            migrate(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise translate(exc, path) from None
        return HistoryReader(path, conn, version=0)
    return HistoryReader(path, connect(path, readonly=True), version=found)


class HistoryReader:
    def __init__(self, path: Path, conn: sqlite3.Connection, *, version: int) -> None:
        self.path = path
        #: The file's schema version (0: nothing committed yet); an older one is read as is.
        self.version = version
        self._conn = conn
        reads = PackedReads(path, conn)
        self._query = reads.query
        self._layout = reads.layout
        self._chain = reads.chain
        self._decoded = reads.decoded
        #: Which stretch of polls is of which cluster (:mod:`store.epochs`).
        self.epochs = Epochs(reads.query, version)
        #: ``log_excerpts(since, until, subject)``: servers' log lines kept around events.
        self.log_excerpts = ExcerptReads(reads.query, version)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> HistoryReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ polls

    @staticmethod
    def _poll(row: Sequence[Any]) -> PollRow:
        return PollRow(
            id=row[0],
            at_ms=row[1],
            seq=row[2],
            latency_ms=row[3],
            ok=bool(row[4]),
            error=row[5],
            n_errors=row[6],
            errors=tuple(json.loads(row[7])) if row[7] else (),
            level=row[8],
        )

    _POLL_COLS: Final = "id, at_ms, seq, latency_ms, ok, error, n_errors, errors, level"

    def poll_at(self, at_ms: int) -> PollRow | None:
        """The last poll at or before ``at_ms``."""
        rows = self._query(
            f"SELECT {self._POLL_COLS} FROM polls WHERE at_ms <= ? ORDER BY at_ms DESC LIMIT 1",
            (at_ms,),
        )
        return self._poll(rows[0]) if rows else None

    def polls(self, since: int | None = None, until: int | None = None) -> list[PollRow]:
        where, params = _range("at_ms", since, until)
        return [
            self._poll(r)
            for r in self._query(
                f"SELECT {self._POLL_COLS} FROM polls {where} ORDER BY at_ms", params
            )
        ]

    # ------------------------------------------------------------------ timeline

    def events(
        self,
        since: int | None = None,
        until: int | None = None,
        *,
        kinds: Iterable[str] = (),
        severities: Iterable[str] = (),
        subject: str | None = None,
        limit: int | None = None,
        within_epoch: bool = False,
    ) -> list[EventRow]:
        """Oldest first. ``subject`` matches exactly or as a prefix ending at a word
        (``table db.t`` matches ``table db.t`` and ``table db.t#3``); ``*`` globs.
        ``within_epoch``: only the events of the epoch of ``until`` (the latest without)."""
        if within_epoch:
            since, until = self.epochs.narrow(since, until)
        where, params = _range("at_ms", since, until)
        clauses = [where[6:]] if where else []
        for column, values in (("kind", list(kinds)), ("severity", list(severities))):
            if values:
                clauses.append(f"{column} IN ({', '.join('?' * len(values))})")
                params += values
        if subject:
            if "*" in subject:
                clauses.append("subject GLOB ?")
                params.append(subject)
            else:
                clauses.append(
                    "(subject = ? OR subject GLOB ? OR subject GLOB ? OR subject GLOB ?)"
                )
                params += [subject, subject + "#*", subject + "[[]*", subject + " *"]
        sql = "SELECT at_ms, kind, severity, subject, message, details, id FROM events"
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        sql += " ORDER BY at_ms, id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [EventRow(*r) for r in self._query(sql, params)]  # columns in field order

    def notes(
        self, since: int | None = None, until: int | None = None, *, subject: str | None = None
    ) -> list[NoteRow]:
        where, params = _range("at_ms", since, until)
        if subject:
            where = (where + " AND" if where else "WHERE") + " subject = ?"
            params.append(subject)
        return [
            NoteRow(id=r[0], at_ms=r[1], subject=r[2], text=r[3])
            for r in self._query(
                f"SELECT id, at_ms, subject, text FROM notes {where} ORDER BY at_ms, id", params
            )
        ]

    # ------------------------------------------------------------------ the cluster at T

    def state_at(self, at_ms: int) -> StateAt | None:
        """The cluster as the last poll at or before ``at_ms`` recorded it; None before
        the first poll."""
        poll = self.poll_at(at_ms)
        if poll is None:
            return None
        t = poll.at_ms
        parts: dict[str, tuple[Any, ...]] = {}
        for name, entity in ENTITIES:
            cols = ", ".join(entity.columns)
            rows = self._query(
                f"SELECT {cols} FROM {entity.table} "
                "WHERE (to_ms IS NULL OR to_ms > ?) AND from_ms <= ? ORDER BY id",
                (t, t),
            )
            parts[name] = tuple(entity.load(tuple(r)) for r in rows)
        schemas = tuple(
            SchemaRow(r[0], r[1], r[2])
            for r in self._query(
                "SELECT s.table_id, s.schema_id, s.schema FROM schemas s JOIN tables t "
                "ON t.table_id = s.table_id AND t.schema_id = s.schema_id "
                "WHERE (t.to_ms IS NULL OR t.to_ms > ?) AND t.from_ms <= ?",
                (t, t),
            )
        )
        epoch = self.epochs.at(t)
        return StateAt(
            poll=poll,
            schemas=schemas,
            offsets=self.offsets_at_poll(
                poll.id, with_earliest=True, from_poll=epoch.first_poll if epoch else 0
            ),
            metrics=self.metrics_at_poll(poll.id),
            storage=storage_at_poll(self, poll.id, from_poll=epoch.first_poll if epoch else 0),
            **parts,
        )

    def offsets_at_poll(
        self, poll_id: int, *, with_earliest: bool = False, from_poll: int = 0
    ) -> OffsetsRow | None:
        """``earliest`` from an earlier poll is looked for from ``from_poll`` on."""
        rows = self._query(
            "SELECT layout_id, base_poll, latest, earliest FROM offsets WHERE poll_id = ?",
            (poll_id,),
        )
        if not rows:
            return None
        layout_id, _, _, early = rows[0]
        latest: list[int | None] = []
        for _, values in self._decoded(self._chain(poll_id)):
            latest = values
        earliest = codec.unpack_ints(early) if early is not None else None
        if earliest is None and with_earliest:
            prior = self._query(
                "SELECT earliest FROM offsets WHERE poll_id < ? AND poll_id >= ? "
                "AND layout_id = ? AND earliest IS NOT NULL ORDER BY poll_id DESC LIMIT 1",
                (poll_id, from_poll, layout_id),
            )
            if prior:
                earliest = codec.unpack_ints(prior[0][0])
        return OffsetsRow(
            self._layout(layout_id),
            tuple(latest),
            tuple(earliest) if earliest is not None else None,
        )

    def metrics_at_poll(self, poll_id: int) -> tuple[MetricRow, ...]:
        rows = self._query("SELECT layout_id, vals FROM metrics WHERE poll_id = ?", (poll_id,))
        if not rows:
            return ()
        shape = self._layout(rows[0][0])
        values = codec.unpack_floats(rows[0][1])
        out, at = [], 0
        for subject, names in shape:
            out.append(
                MetricRow(subject, tuple(zip(names, values[at : at + len(names)], strict=True)))
            )
            at += len(names)
        return tuple(out)

    # ------------------------------------------------------------------ series

    def tables_named(
        self,
        database: str,
        name: str,
        since: int | None = None,
        until: int | None = None,
        *,
        within_epoch: bool = False,
    ) -> list[TableSpan]:
        """Every table id that had this name in the range (a re-created table is another).
        ``within_epoch``: only in the epoch of ``until`` (the latest without), each span
        cut to it: two clusters may give one id to two tables."""
        cut = self.epochs.span(until) if within_epoch else (None, None)
        if within_epoch:
            since, until = self.epochs.narrow(since, until)
        sql, params = _tables_named_sql(database, name, since, until)
        return [_span(r, *cut) for r in self._query(sql, params)]

    def offset_totals(
        self,
        table_id: int,
        partition_id: int | None = None,
        bucket_id: int | None = None,
        *,
        since: int | None = None,
        until: int | None = None,
        step_ms: int | None = None,
        all_partitions: bool = False,
    ) -> list[SeriesPoint]:
        """Sum of high watermarks over the chosen buckets, per poll (or per ``step_ms``:
        the first poll of each step). None where any chosen bucket was unknown."""
        since, until = self.epochs.narrow(since, until)
        where, params = _range("p.at_ms", since, until)
        bounds = self._query(
            "SELECT min(o.poll_id), max(o.poll_id) FROM offsets o "
            f"JOIN polls p ON p.id = o.poll_id {where}",
            params,
        )
        first, last = bounds[0] if bounds else (None, None)
        if first is None:
            return []
        rows = self._chain(last, first)
        points: list[SeriesPoint] = []
        step_seen: int | None = None
        picks: dict[int, list[int]] = {}  # layout id -> positions of the chosen buckets
        current: list[int | None] | None = None  # the chosen buckets' running values
        prev_id = None
        for poll_id, base, blob, at_ms, layout_id in rows:
            positions = picks.get(layout_id)
            if positions is None:
                layout: tuple[Slot, ...] = self._layout(layout_id)
                slices = _slices(layout, table_id, partition_id, bucket_id, all_partitions)
                positions = picks[layout_id] = [i for s in slices for i in range(s.start, s.stop)]
            numbers, unknown = codec.unpack_array(blob)
            gone = set(unknown).intersection(positions) if unknown else ()
            chosen: list[int | None] = [None if i in gone else numbers[i] for i in positions]
            if base is not None:
                if base != prev_id or current is None or len(current) != len(chosen):
                    raise NotAHistoryFile(f"{self.path}: offsets row {poll_id} breaks its chain")
                chosen = [
                    None if c is None or d is None else c + d
                    for c, d in zip(current, chosen, strict=True)
                ]
            current, prev_id = chosen, poll_id
            if poll_id < first or not positions:
                continue  # decoded only to reach the range, or the table is not in it
            if step_ms:
                step = at_ms // step_ms
                if step == step_seen:
                    continue
                step_seen = step
            total = None if None in chosen else float(sum(chosen))  # type: ignore[arg-type]
            points.append(SeriesPoint(at_ms, total))
        return points

    def throughput(self, *args: Any, **kwargs: Any) -> list[SeriesPoint]:
        """Rows per second between consecutive points of :meth:`offset_totals` (same
        arguments); a point is at the end of its interval. A drop (truncation) is None."""
        totals = self.offset_totals(*args, **kwargs)
        return rates(totals)

    def metric_series(
        self,
        subject: str,
        name: str,
        *,
        since: int | None = None,
        until: int | None = None,
    ) -> list[SeriesPoint]:
        since, until = self.epochs.narrow(since, until)
        where, params = _range("p.at_ms", since, until)
        out = []
        for at_ms, layout_id, vals in self._query(
            "SELECT p.at_ms, m.layout_id, m.vals FROM metrics m JOIN polls p ON p.id = m.poll_id "
            f"{where} ORDER BY p.at_ms",
            params,
        ):
            index = self._metric_index(layout_id, subject, name)
            if index is not None:
                out.append(SeriesPoint(at_ms, codec.unpack_floats(vals)[index]))
        return out

    def _metric_index(self, layout_id: int, subject: str, name: str) -> int | None:
        at = 0
        for s, names in self._layout(layout_id):
            if s == subject:
                return at + names.index(name) if name in names else None
            at += len(names)
        return None

    def metric_names(self) -> dict[str, list[str]]:
        """subject -> metric names, over every layout recorded."""
        out: dict[str, list[str]] = {}
        for (body,) in self._query("SELECT body FROM layouts WHERE kind = 'metrics'"):
            for subject, names in json.loads(codec.unpack_text(body)):
                known = out.setdefault(subject, [])
                known.extend(n for n in names if n not in known)
        return dict(sorted(out.items()))

    # ------------------------------------------------------------------ info

    def info(self, now_ms: int, *, full_ms: int, minute_ms: int) -> HistoryInfo:
        size = sum(
            p.stat().st_size
            for p in (self.path, self.path.with_name(self.path.name + "-wal"))
            if p.exists()
        )
        first, last = self._query("SELECT min(at_ms), max(at_ms) FROM polls")[0]
        polls = {
            LEVELS[lvl]: n
            for lvl, n in self._query("SELECT level, count(*) FROM polls GROUP BY level")
        }
        bands = self._query(
            "SELECT sum(at_ms >= ?), sum(at_ms < ? AND at_ms >= ?), sum(at_ms < ?) FROM events",
            (now_ms - full_ms, now_ms - full_ms, now_ms - minute_ms, now_ms - minute_ms),
        )[0]
        (notes,) = self._query("SELECT count(*) FROM notes")[0]
        (good,) = self._query("SELECT count(*) FROM polls WHERE ok = 1")[0]
        return HistoryInfo(
            path=str(self.path),
            size_bytes=size,
            schema_version=self.version,
            first_ms=first,
            last_ms=last,
            polls={level: polls.get(level, 0) for level in LEVELS},
            events={level: int(n or 0) for level, n in zip(LEVELS, bands, strict=True)},
            notes=notes,
            writer_pid=lock_holder(self.path),
            epochs=tuple(self.epochs.all()),
            good_polls=good,
        )


def partition_id(reader: HistoryReader, table_id: int, name: str) -> int | None:
    """The id a partition of ``table_id`` named ``name`` was recorded with (None: never)."""
    rows = reader._query(
        "SELECT partition_id FROM partitions WHERE table_id = ? AND name = ? LIMIT 1",
        (table_id, name),
    )
    return rows[0][0] if rows else None


def roles_seen(
    reader: HistoryReader, *, limit: int = 1000
) -> tuple[list[ServerRow], list[CoordinatorRow]]:
    """Every server and coordinator row of the latest epoch (its cluster), oldest first (at
    most ``limit`` of each, the newest): what the cluster last named each address,
    including servers metadata no longer lists."""
    since, _ = reader.epochs.span(None)
    lo = since if since is not None else 0
    servers = reader._query(
        "SELECT node_id, role, host, port, rack FROM (SELECT * FROM servers "
        "WHERE to_ms IS NULL OR to_ms > ? ORDER BY from_ms DESC, id DESC LIMIT ?) "
        "ORDER BY from_ms, id",
        (lo, limit),
    )
    coordinators = reader._query(
        "SELECT address, role FROM (SELECT * FROM coordinators "
        "WHERE to_ms IS NULL OR to_ms > ? ORDER BY from_ms DESC, id DESC LIMIT ?) "
        "ORDER BY from_ms, id",
        (lo, limit),
    )
    return [ServerRow(*r) for r in servers], [CoordinatorRow(*r) for r in coordinators]


def tablet_servers_seen(
    reader: HistoryReader, at_ms: int, *, limit: int = 1000
) -> list[tuple[int, str, int, int]]:
    """(node id, host, port, when last seen in ms) of each tablet server a poll of the epoch
    holding ``at_ms`` listed, up to ``at_ms``: the last poll that listed it (a row still
    open: the last poll up to ``at_ms``). At most ``limit`` servers, by node id."""
    since, _ = reader.epochs.span(at_ms)
    lo = since if since is not None else 0
    rows = reader._query(
        "SELECT s.node_id, s.host, s.port, "
        "(SELECT MAX(p.at_ms) FROM polls p WHERE p.ok = 1 AND p.at_ms >= s.from_ms "
        " AND p.at_ms <= ? AND (s.to_ms IS NULL OR p.at_ms < s.to_ms)) AS seen "
        "FROM servers s WHERE s.role = 'tablet' AND s.from_ms <= ? "
        "AND (s.to_ms IS NULL OR s.to_ms > ?) ORDER BY s.node_id, s.from_ms",
        (at_ms, at_ms, lo),
    )
    last: dict[int, tuple[int, str, int, int]] = {}
    for node_id, host, port, seen in rows:
        if seen is not None and (node_id not in last or seen >= last[node_id][3]):
            last[node_id] = (int(node_id), str(host), int(port), int(seen))
    return [last[k] for k in sorted(last)[:limit]]


def operator_subjects(
    reader: HistoryReader, subjects: Sequence[str], action: str, outcome: str, *, until_ms: int
) -> list[tuple[str, int]]:
    """(subject, when in ms) of the newest operator event of ``action`` reaching
    ``outcome`` for each of ``subjects``, up to ``until_ms`` (through the events' subject
    index). The event's own details sit under ``details`` in the row's JSON."""
    if not subjects:
        return []
    marks = ",".join("?" * len(subjects))
    rows = reader._query(
        f"SELECT subject, MAX(at_ms) FROM events WHERE subject IN ({marks}) AND at_ms <= ? "
        "AND kind = 'operator' AND json_extract(details, '$.details.action') = ? "
        "AND json_extract(details, '$.details.outcome') = ? GROUP BY subject ORDER BY subject",
        (*subjects, until_ms, action, outcome),
    )
    return [(str(subject), int(at)) for subject, at in rows]


def storage_at_poll(reader: HistoryReader, poll_id: int, *, from_poll: int = 0) -> bytes | None:
    """The last storage body recorded at or before ``poll_id`` (from ``from_poll`` on);
    None before any, or in a file older than version 5 (no storage table)."""
    if reader.version < 5:
        return None
    rows = reader._query(
        "SELECT body FROM storage WHERE poll_id <= ? AND poll_id >= ? "
        "ORDER BY poll_id DESC LIMIT 1",
        (poll_id, from_poll),
    )
    return bytes(rows[0][0]) if rows else None


def storage_bodies(reader: HistoryReader, *, until_ms: int, limit: int) -> list[bytes]:
    """The last ``limit`` storage bodies recorded at or before ``until_ms``, oldest first,
    within that moment's epoch; none in a file older than version 5."""
    if reader.version < 5:
        return []
    epoch = reader.epochs.at(until_ms)
    rows = reader._query(
        "SELECT body FROM storage WHERE at_ms <= ? AND poll_id >= ? ORDER BY poll_id DESC LIMIT ?",
        (until_ms, epoch.first_poll if epoch else 0, limit),
    )
    return [bytes(r[0]) for r in reversed(rows)]


def rates(totals: Sequence[SeriesPoint]) -> list[SeriesPoint]:
    out: list[SeriesPoint] = []
    for prev, cur in itertools.pairwise(totals):
        dt = (cur.at_ms - prev.at_ms) / 1000
        if prev.value is None or cur.value is None or dt <= 0 or cur.value < prev.value:
            out.append(SeriesPoint(cur.at_ms, None))
        else:
            out.append(SeriesPoint(cur.at_ms, (cur.value - prev.value) / dt))
    return out


def _slices(
    layout: Sequence[Slot],
    table_id: int,
    partition_id: int | None,
    bucket_id: int | None,
    all_partitions: bool,
) -> list[slice]:
    out = []
    start = 0
    for slot in layout:
        if slot.table_id == table_id and (all_partitions or slot.partition_id == partition_id):
            if bucket_id is None:
                out.append(slice(start, start + slot.buckets))
            elif bucket_id < slot.buckets:
                out.append(slice(start + bucket_id, start + bucket_id + 1))
        start += slot.buckets
    return out


def events_after(
    reader: HistoryReader, after_id: int, *, kind: str, limit: int
) -> tuple[int, list[EventRow]]:
    """(the file's highest event id, up to ``limit`` events of ``kind`` with an id above
    ``after_id`` by id): what a follower of the file has not seen yet, whatever their times.
    A highest id below ``after_id`` says the file is another one."""
    query = reader._query
    top = query("SELECT MAX(id) FROM events", ())
    rows = query(
        "SELECT at_ms, kind, severity, subject, message, details, id FROM events "
        "WHERE id > ? AND kind = ? ORDER BY id LIMIT ?",
        (after_id, kind, int(limit)),
    )
    return int(top[0][0] or 0) if top else 0, [EventRow(*r) for r in rows]


def _range(column: str, since: int | None, until: int | None) -> tuple[str, list[Any]]:
    clauses, params = [], []
    if since is not None:
        clauses.append(f"{column} >= ?")
        params.append(since)
    if until is not None:
        clauses.append(f"{column} <= ?")
        params.append(until)
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


_OPEN_END: Final = 1 << 62


def _tables_named_sql(
    database: str, name: str, since: int | None, until: int | None
) -> tuple[str, list[Any]]:
    params: list[Any] = [database, name]
    sql = (
        "SELECT table_id, database, name, min(from_ms), max(coalesce(to_ms, 1 << 62)) "
        "FROM tables WHERE database = ? AND name = ?"
    )
    if until is not None:
        sql += " AND from_ms <= ?"
        params.append(until)
    if since is not None:
        sql += " AND (to_ms IS NULL OR to_ms > ?)"
        params.append(since)
    return sql + " GROUP BY table_id ORDER BY 4", params


def _span(row: tuple[Any, ...], lo: int | None, hi: int | None) -> TableSpan:
    """A row of :func:`_tables_named_sql` as a span, cut to ``[lo, hi)`` where given."""
    start = row[3] if lo is None else max(row[3], lo)
    end = row[4] if hi is None else min(row[4], hi)
    return TableSpan(row[0], row[1], row[2], start, None if end == _OPEN_END else end)

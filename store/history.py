"""The writer: one :class:`HistoryWriter` per file (a lock), one transaction per poll.

State is kept as change intervals: the writer remembers the rows open now (``to_ms`` NULL),
and a poll only closes the rows whose value changed or vanished and opens their successors;
an unchanged cluster adds one ``polls`` row, one packed ``offsets`` row and the metrics
rows. Memory follows the database: the remembered state changes only after a commit, so a
failed write (full disk, read-only) leaves nothing half-done and the next poll carries on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

from store import codec
from store.chain import Link, encode
from store.errors import HistoryGone, HistoryUnwritable
from store.excerpts import insert_excerpt
from store.files import FileWatch, WriterLock, connect, inspect, translate
from store.rows import (
    CoordinatorRow,
    DatabaseRow,
    EpochMark,
    EpochRow,
    EventRow,
    LogExcerptRow,
    MetricRow,
    NoteRow,
    OffsetsRow,
    PartitionRow,
    PlacementRow,
    PollRecord,
    ServerRow,
    Slot,
    TableRow,
)
from store.schema import migrate

__all__ = ["MAX_POLL_ERRORS", "HistoryWriter", "add_note", "layout_body", "open_writer", "prepare"]

#: Per-item errors kept in a poll row (the count is kept in full).
MAX_POLL_ERRORS: Final = 20

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class _Entity(Generic[R]):
    """How one kind of state maps to its interval table."""

    table: str
    columns: tuple[str, ...]
    key: Callable[[R], Hashable]
    values: Callable[[R], tuple[Any, ...]]
    load: Callable[[tuple[Any, ...]], R]
    #: The row's table id, for rows left open while their table is unknown.
    table_id: Callable[[R], int] | None = None


def _dump(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


SERVERS: Final[_Entity[ServerRow]] = _Entity(
    "servers",
    ("node_id", "role", "host", "port", "rack"),
    key=lambda r: (r.role, r.node_id),
    values=lambda r: (r.node_id, r.role, r.host, r.port, r.rack),
    load=lambda v: ServerRow(*v),
)
COORDINATORS: Final[_Entity[CoordinatorRow]] = _Entity(
    "coordinators",
    ("address", "role"),
    key=lambda r: r.address,
    values=lambda r: (r.address, r.role),
    load=lambda v: CoordinatorRow(*v),
)
DATABASES: Final[_Entity[DatabaseRow]] = _Entity(
    "databases",
    ("name",),
    key=lambda r: r.name,
    values=lambda r: (r.name,),
    load=lambda v: DatabaseRow(*v),
)
TABLES: Final[_Entity[TableRow]] = _Entity(
    "tables",
    (
        "table_id",
        "database",
        "name",
        "schema_id",
        "descriptor",
        "created_ms",
        "modified_ms",
        "remote_data_dir",
    ),
    key=lambda r: r.table_id,
    values=lambda r: (
        r.table_id,
        r.database,
        r.name,
        r.schema_id,
        r.descriptor,
        r.created_ms,
        r.modified_ms,
        r.remote_data_dir,
    ),
    load=lambda v: TableRow(*v),
    table_id=lambda r: r.table_id,
)
PARTITIONS: Final[_Entity[PartitionRow]] = _Entity(
    "partitions",
    ("table_id", "partition_id", "name", "spec", "remote_data_dir"),
    key=lambda r: (r.table_id, r.partition_id),
    values=lambda r: (r.table_id, r.partition_id, r.name, r.spec, r.remote_data_dir),
    load=lambda v: PartitionRow(*v),
    table_id=lambda r: r.table_id,
)
PLACEMENT: Final[_Entity[PlacementRow]] = _Entity(
    "placement",
    ("table_id", "partition_id", "leaders", "replicas", "epochs"),
    key=lambda r: (r.table_id, r.partition_id),
    values=lambda r: (
        r.table_id,
        r.partition_id,
        _dump(r.leaders),
        _dump(r.replicas),
        _dump(r.epochs),
    ),
    load=lambda v: PlacementRow(
        v[0],
        v[1],
        tuple(json.loads(v[2])),
        tuple(tuple(r) for r in json.loads(v[3])),
        tuple(json.loads(v[4])),
    ),
    table_id=lambda r: r.table_id,
)
ENTITIES: Final[tuple[tuple[str, _Entity[Any]], ...]] = (
    ("servers", SERVERS),
    ("coordinators", COORDINATORS),
    ("databases", DATABASES),
    ("tables", TABLES),
    ("partitions", PARTITIONS),
    ("placement", PLACEMENT),
)


def layout_body(layout: Sequence[Slot]) -> str:
    return json.dumps(
        [[s.table_id, s.partition_id, s.buckets] for s in layout], separators=(",", ":")
    )


class _Pending:
    """What to remember once the transaction commits."""

    def __init__(self) -> None:
        self.closed: list[tuple[dict[Hashable, tuple[int, Any]], Hashable]] = []
        self.opened: list[tuple[dict[Hashable, tuple[int, Any]], Hashable, int, Any]] = []
        self.layouts: dict[str, int] = {}
        self.key: Link | None = None
        self.epoch: EpochRow | None = None


class HistoryWriter:
    """Writes polls into one history file. Use :func:`open_writer`."""

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        lock: WriterLock,
        watch: FileWatch | None = None,
    ) -> None:
        self.path = path
        self._conn = conn
        self._lock = lock
        self._watch = watch
        #: The time of the newest poll in the file (None when it holds none).
        self.last_at_ms: int | None = None
        self._open: dict[str, dict[Hashable, tuple[int, Any]]] = {}
        self._layouts: dict[str, int] = {}  # digest -> id
        self._key: Link | None = None
        self._load()
        self._epoch = last_epoch(conn)

    def _load(self) -> None:
        for name, entity in ENTITIES:
            cols = ", ".join(entity.columns)
            rows: dict[Hashable, tuple[int, Any]] = {}
            for row in self._conn.execute(
                f"SELECT id, {cols} FROM {entity.table} WHERE to_ms IS NULL"
            ):
                value = entity.load(tuple(row[1:]))
                rows[entity.key(value)] = (row[0], value)
            self._open[name] = rows
        for layout_id, digest in self._conn.execute("SELECT id, digest FROM layouts"):
            self._layouts[digest] = layout_id
        # The next offsets row is a key: no key state survives a restart.
        self._load_last()

    def _load_last(self) -> None:
        (self.last_at_ms,) = self._conn.execute("SELECT max(at_ms) FROM polls").fetchone()

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        gone = self._watch is not None and self._watch.trouble() is not None
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA optimize")
        if gone:  # SQLite skips the checkpoint at close when the file moved
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        with contextlib.suppress(sqlite3.Error):  # a dead disk fails the last checkpoint
            self._conn.close()
        if self._watch is not None:
            if gone:
                self._watch.remove_leftovers()
            self._watch.close()  # after the connection (see FileWatch)
        self._lock.release()

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def forget_cached(self) -> None:
        """After retention: layouts are looked up again (unused ones may be gone); the
        next offsets row is a delta to the last one if that is kept (re-encoding keeps its
        values), else a key. Retention runs every few minutes: a key after each run would
        double the keys of full-rate polls."""
        self._layouts.clear()
        if self._key is not None:
            try:
                kept = self._conn.execute(
                    "SELECT 1 FROM offsets WHERE poll_id = ? AND layout_id = ?",
                    (self._key.poll_id, self._key.layout_id),
                ).fetchone()
            except sqlite3.Error:
                kept = None  # retention failed: start from a key, as after a restart
            if kept is None:
                self._key = None

    @property
    def connection(self) -> sqlite3.Connection:
        """For retention and tests; writes outside :meth:`record` must keep the state."""
        return self._conn

    # ------------------------------------------------------------------ one poll

    def record(self, poll: PollRecord) -> int:
        """Write one poll in one transaction; returns its id once committed.

        Raises :class:`~store.errors.HistoryUnwritable` (nothing written, state kept; try
        again with the next poll), :class:`~store.errors.HistoryGone` (the path no longer
        names this file: close this writer, open the path again) or
        :class:`~store.errors.NotAHistoryFile` (corrupt).
        """
        self.check_place(None)
        pending = _Pending()
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                poll_id = self._write(poll, pending)
            except BaseException:
                if conn.in_transaction:  # some errors (a full disk) roll back themselves
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from None
        for rows, key in pending.closed:
            rows.pop(key, None)
        for rows, key, row_id, value in pending.opened:
            rows[key] = (row_id, value)
        self._layouts.update(pending.layouts)
        if pending.key is not None:
            self._key = pending.key
        if pending.epoch is not None:
            self._epoch = pending.epoch
        self.last_at_ms = max(poll.at_ms, self.last_at_ms or poll.at_ms)
        self.check_place(poll_id)
        return poll_id

    def check_place(self, committed: int | None) -> None:
        """Raise :class:`~store.errors.HistoryGone` when the path no longer names the open
        file. ``committed``: the poll just committed (kept if its file is still linked)."""
        watch = self._watch
        trouble = watch.trouble() if watch is not None else None
        if watch is None or trouble is None:
            return
        raise HistoryGone(trouble, poll_id=committed if watch.linked else None)

    def _write(self, poll: PollRecord, pending: _Pending) -> int:
        conn = self._conn
        errors = json.dumps(list(poll.errors[:MAX_POLL_ERRORS])) if poll.errors else None
        cur = conn.execute(
            "INSERT INTO polls (at_ms, seq, latency_ms, ok, error, n_errors, errors) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                poll.at_ms,
                poll.seq,
                poll.latency_ms,
                int(poll.ok),
                poll.error,
                max(poll.n_errors, len(poll.errors)),
                errors,
            ),
        )
        poll_id = int(cur.lastrowid or 0)
        if poll.epoch is not None:
            self._write_epoch(poll.epoch, poll.at_ms, poll_id, pending)
        for name, entity in ENTITIES:
            rows = getattr(poll, name)
            if rows is not None:
                self._sync(name, entity, rows, poll.at_ms, poll.unknown_tables, pending)
        if poll.schemas:
            conn.executemany(
                "INSERT OR IGNORE INTO schemas (table_id, schema_id, schema, first_ms) "
                "VALUES (?, ?, ?, ?)",
                [(s.table_id, s.schema_id, s.schema, poll.at_ms) for s in poll.schemas],
            )
        if poll.offsets is not None:
            self._write_offsets(poll_id, poll.at_ms, poll.offsets, pending)
        if poll.metrics:
            self._write_metrics(poll_id, poll.metrics, pending)
        if poll.storage is not None:
            conn.execute(
                "INSERT INTO storage (poll_id, at_ms, body) VALUES (?, ?, ?)",
                (poll_id, poll.at_ms, poll.storage),
            )
        if poll.events:
            conn.executemany(
                "INSERT INTO events (at_ms, kind, severity, subject, message, details, poll_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (e.at_ms, e.kind, e.severity, e.subject, e.message, e.details, poll_id)
                    for e in poll.events
                ],
            )
        return poll_id

    def _sync(
        self,
        name: str,
        entity: _Entity[Any],
        rows: Iterable[Any],
        at_ms: int,
        unknown_tables: frozenset[int],
        pending: _Pending,
    ) -> None:
        current = self._open[name]
        rows = tuple(rows)
        seen: dict[Hashable, Any] = dict(zip(map(entity.key, rows), rows, strict=True))
        to_close: list[int] = []
        for key, (row_id, old) in current.items():
            new = seen.get(key)
            if new == old:
                continue
            if (
                new is None
                and entity.table_id is not None
                and entity.table_id(old) in unknown_tables
            ):
                continue  # not seen because its table could not be read: still open
            to_close.append(row_id)
            pending.closed.append((current, key))
        if to_close:
            self._conn.executemany(
                f"UPDATE {entity.table} SET to_ms = ? WHERE id = ?",
                [(at_ms, row_id) for row_id in to_close],
            )
        cols = ", ".join((*entity.columns, "from_ms"))
        marks = ", ".join("?" * (len(entity.columns) + 1))
        sql = f"INSERT INTO {entity.table} ({cols}) VALUES ({marks})"
        for key, row in seen.items():
            old_entry = current.get(key)
            if old_entry is not None and old_entry[1] == row:
                continue
            cur = self._conn.execute(sql, (*entity.values(row), at_ms))
            pending.opened.append((current, key, int(cur.lastrowid or 0), row))

    def _layout_id(self, kind: str, body: str, pending: _Pending) -> int:
        digest = hashlib.blake2b(f"{kind}\n{body}".encode(), digest_size=16).hexdigest()
        known = self._layouts.get(digest) or pending.layouts.get(digest)
        if known is not None:
            return known
        self._conn.execute(
            "INSERT OR IGNORE INTO layouts (kind, digest, body) VALUES (?, ?, ?)",
            (kind, digest, codec.pack_text(body)),
        )
        (layout_id,) = self._conn.execute(
            "SELECT id FROM layouts WHERE digest = ?", (digest,)
        ).fetchone()
        pending.layouts[digest] = layout_id
        return int(layout_id)

    def _write_offsets(
        self, poll_id: int, at_ms: int, offsets: OffsetsRow, pending: _Pending
    ) -> None:
        layout_id = self._layout_id("offsets", layout_body(offsets.layout), pending)
        link = Link(poll_id, layout_id, list(offsets.latest), at_ms)
        blob, base = encode(link, self._key)
        earliest = codec.pack_ints(offsets.earliest) if offsets.earliest is not None else None
        self._conn.execute(
            "INSERT INTO offsets (poll_id, layout_id, base_poll, latest, earliest) "
            "VALUES (?, ?, ?, ?, ?)",
            (poll_id, layout_id, base, blob, earliest),
        )
        pending.key = link

    def _write_metrics(self, poll_id: int, metrics: Sequence[MetricRow], pending: _Pending) -> None:
        shape = [[m.subject, [n for n, _ in m.values]] for m in metrics]
        layout_id = self._layout_id("metrics", _dump(shape), pending)
        values = [v for m in metrics for _, v in m.values]
        self._conn.execute(
            "INSERT INTO metrics (poll_id, layout_id, vals) VALUES (?, ?, ?)",
            (poll_id, layout_id, codec.pack_floats(values)),
        )

    # ------------------------------------------------------------------ epochs

    @property
    def epoch(self) -> EpochRow | None:
        """The epoch the next poll belongs to unless it says otherwise (None: no epoch yet)."""
        return self._epoch

    def _write_epoch(self, mark: EpochMark, at_ms: int, poll_id: int, pending: _Pending) -> None:
        current = self._epoch
        if mark.start or current is None:
            cur = self._conn.execute(
                "INSERT INTO epochs (from_ms, first_poll, identity, reason) VALUES (?, ?, ?, ?)",
                (at_ms, poll_id, mark.identity, mark.reason),
            )
            pending.epoch = EpochRow(
                int(cur.lastrowid or 0), at_ms, poll_id, mark.identity, mark.reason
            )
            # This epoch's offsets start from a key: nothing in it leans on another's rows.
            self._key = None
        elif mark.identity != current.identity:
            self._conn.execute(
                "UPDATE epochs SET identity = ? WHERE id = ?", (mark.identity, current.id)
            )
            pending.epoch = EpochRow(
                current.id, current.from_ms, current.first_poll, mark.identity, current.reason
            )

    # ------------------------------------------------------------------ notes

    def add_note(self, note: NoteRow, *, written_ms: int) -> int:
        return _insert_note(self._conn, self.path, note, written_ms)

    def add_log_excerpt(self, row: LogExcerptRow) -> int:
        """A server's log lines around an event (committed on its own, between polls)."""
        return insert_excerpt(self._conn, self.path, row)


def last_epoch(conn: sqlite3.Connection) -> EpochRow | None:
    """The file's latest epoch (None in a file without any)."""
    row = conn.execute(
        "SELECT id, from_ms, first_poll, identity, reason FROM epochs ORDER BY id DESC LIMIT 1"
    ).fetchone()
    return None if row is None else EpochRow(*row)


def _insert_note(conn: sqlite3.Connection, path: Path, note: NoteRow, written_ms: int) -> int:
    try:
        cur = conn.execute(
            "INSERT INTO notes (at_ms, subject, text, written_ms) VALUES (?, ?, ?, ?)",
            (note.at_ms, note.subject, note.text, written_ms),
        )
    except sqlite3.Error as exc:
        raise translate(exc, path) from None
    return int(cur.lastrowid or 0)


def _make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HistoryUnwritable(
            f"{path}: cannot create its directory: {exc.strerror or exc}"
        ) from None


def prepare(path: Path, *, upgrade: bool = True) -> sqlite3.Connection:
    """Checked, WAL, migrated to the current schema (a new file is created at it): a
    read-write connection to a konsole history file. ``upgrade=False`` leaves an existing
    file at its version (only the writer, holding the lock, migrates)."""
    found = inspect(path)
    _make_parent(path)
    conn = connect(path, readonly=False)
    try:
        if upgrade or found == 0:
            migrate(conn)
    except sqlite3.Error as exc:
        conn.close()
        raise translate(exc, path) from None
    return conn


def open_writer(path: Path) -> HistoryWriter:
    """Take the writer lock, check and migrate the file, load the open intervals.

    Raises :class:`~store.errors.HistoryLocked` naming the holder's pid, or another
    :class:`~store.errors.HistoryError`; the file is not modified when refused.
    """
    path = Path(path)
    inspect(path)  # refuse foreign, corrupt and newer files before creating the lock
    _make_parent(path)
    lock = WriterLock(path)
    lock.acquire()
    try:
        conn = prepare(path)
        try:
            return HistoryWriter(path, conn, lock, _watch(path, conn))
        except sqlite3.Error as exc:
            conn.close()
            raise translate(exc, path) from None
    except BaseException:
        lock.release()
        raise


def _watch(path: Path, conn: sqlite3.Connection) -> FileWatch:
    """The watch of the file ``conn`` has just opened (closing ``conn`` if it fails)."""
    try:
        return FileWatch(path)
    except HistoryUnwritable:
        conn.close()
        raise


def add_note(path: Path, note: NoteRow, *, written_ms: int) -> int:
    """Add an operator note from any process (no writer lock needed: one small insert).

    An older file is not migrated here (the writer migrates, under its lock): the
    ``notes`` table is the same in every version so far; a version that changes it must
    migrate here too.
    """
    path = Path(path)
    conn = prepare(path, upgrade=False)
    try:
        return _insert_note(conn, path, note, written_ms)
    finally:
        conn.close()


def add_event(path: Path, event: EventRow) -> int:
    """Add one event from any process, outside a poll (``konsole admin``'s ``operator``
    events): no writer lock needed, one small insert with no poll. Like :func:`add_note`,
    an older file is not migrated here (the ``events`` table is the same in every version
    so far)."""
    path = Path(path)
    conn = prepare(path, upgrade=False)
    try:
        cur = conn.execute(
            "INSERT INTO events (at_ms, kind, severity, subject, message, details) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (event.at_ms, event.kind, event.severity, event.subject, event.message, event.details),
        )
        return int(cur.lastrowid or 0)
    except sqlite3.Error as exc:
        raise translate(exc, path) from None
    finally:
        conn.close()

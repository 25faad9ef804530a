"""The history file's schema: versioned by ``PRAGMA user_version``, migrated forward only.

``MIGRATIONS[n]`` takes a file from version ``n`` to ``n + 1`` (version 0 is an empty file);
:func:`migrate` runs every step a file lacks in **one** transaction, so a crash (even
SIGKILL) during a migration leaves the file at the version it had, and the next writer
starts again (no backup copy needed: SQLite's journal is the backup). A file with a higher
version than :data:`VERSION` was written by a newer konsole: it is refused and never
rewritten. ``PRAGMA application_id`` marks konsole's files, so another program's SQLite
database is not taken for an empty history.

Version 1's DDL is kept verbatim (files of it exist); later steps go through sqlite-utils
(``Table.transform``, ``add_column``, ``create_index``) on the same connection, inside the
same transaction.

Layout (see docs/history.md for the meaning of every table):

- ``polls``: one row per poll kept (time, latency, outcome, the first errors, resolution);
- change intervals ``[from_ms, to_ms)`` (``to_ms`` NULL while current): ``servers``,
  ``coordinators``, ``databases``, ``tables``, ``partitions``, ``placement``;
  ``schemas`` once per (table, schema id);
- per-poll series: ``offsets`` (one packed row per poll, see :mod:`store.codec`) and
  ``metrics`` (one packed row per poll), both shaped by ``layouts`` (zlib-compressed JSON
  since version 2; JSON text in version 1);
- timeline: ``events`` and ``notes``;
- ``epochs`` (since version 3): one row per cluster the file has recorded, from its first
  poll on (readers never join two epochs' data across time);
- ``log_excerpts`` (since version 4): servers' log lines around warning and critical
  events, zlib-compressed, under the events' retention;
- ``storage`` (since version 5): one row per storage poll (the slower storage cadence),
  an opaque compressed body konsole writes and reads back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from store import codec

if TYPE_CHECKING:  # imported when a step runs: sqlite-utils takes ~350 ms to import
    from sqlite_utils import Database

__all__ = [
    "APPLICATION_ID",
    "MIGRATIONS",
    "PAGE_SIZE",
    "VERSION",
    "database",
    "migrate",
    "new_file_pragmas",
]

#: "KnSl": tells konsole's history files from other SQLite databases.
APPLICATION_ID: Final = 0x4B6E536C
#: Page size of new files (see docs/history.md, "Implementation", for the measurement).
PAGE_SIZE: Final = 4096

Step = Callable[["Database"], None]

#: Version 1, verbatim: what files written by it hold.
_V1_DDL: Final = (
    """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE polls (
        id INTEGER PRIMARY KEY,
        at_ms INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        latency_ms INTEGER NOT NULL,
        ok INTEGER NOT NULL,
        error TEXT,
        n_errors INTEGER NOT NULL DEFAULT 0,
        errors TEXT,
        level INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX polls_at ON polls (at_ms)",
    """CREATE TABLE servers (
        id INTEGER PRIMARY KEY, node_id INTEGER NOT NULL, role TEXT NOT NULL,
        host TEXT NOT NULL, port INTEGER NOT NULL, rack TEXT,
        from_ms INTEGER NOT NULL, to_ms INTEGER
    )""",
    """CREATE TABLE coordinators (
        id INTEGER PRIMARY KEY, address TEXT NOT NULL, role TEXT NOT NULL,
        from_ms INTEGER NOT NULL, to_ms INTEGER
    )""",
    """CREATE TABLE databases (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL, from_ms INTEGER NOT NULL, to_ms INTEGER
    )""",
    """CREATE TABLE tables (
        id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL, database TEXT NOT NULL,
        name TEXT NOT NULL, schema_id INTEGER NOT NULL, descriptor TEXT NOT NULL,
        created_ms INTEGER NOT NULL, modified_ms INTEGER NOT NULL, remote_data_dir TEXT,
        from_ms INTEGER NOT NULL, to_ms INTEGER
    )""",
    """CREATE TABLE schemas (
        table_id INTEGER NOT NULL, schema_id INTEGER NOT NULL, schema TEXT NOT NULL,
        first_ms INTEGER NOT NULL, PRIMARY KEY (table_id, schema_id)
    ) WITHOUT ROWID""",
    """CREATE TABLE partitions (
        id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL, partition_id INTEGER NOT NULL,
        name TEXT NOT NULL, spec TEXT NOT NULL, remote_data_dir TEXT,
        from_ms INTEGER NOT NULL, to_ms INTEGER
    )""",
    # One row per table (or partition): JSON arrays indexed by bucket id.
    """CREATE TABLE placement (
        id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL, partition_id INTEGER,
        leaders TEXT NOT NULL, replicas TEXT NOT NULL, epochs TEXT NOT NULL,
        from_ms INTEGER NOT NULL, to_ms INTEGER
    )""",
    # Interval lookups: "open at T" reads rows ending after T (or still open).
    "CREATE INDEX servers_to ON servers (to_ms)",
    "CREATE INDEX coordinators_to ON coordinators (to_ms)",
    "CREATE INDEX databases_to ON databases (to_ms)",
    "CREATE INDEX tables_to ON tables (to_ms)",
    "CREATE INDEX tables_id ON tables (table_id, schema_id)",
    "CREATE INDEX partitions_to ON partitions (to_ms)",
    "CREATE INDEX placement_to ON placement (to_ms)",
    "CREATE INDEX placement_table ON placement (table_id, from_ms)",
    # Unique by a digest of kind and body: an index on the body would store each body twice.
    """CREATE TABLE layouts (
        id INTEGER PRIMARY KEY, kind TEXT NOT NULL, digest TEXT NOT NULL UNIQUE,
        body TEXT NOT NULL
    )""",
    # base_poll NULL: ``latest`` holds absolute offsets (a key); else the difference to the
    # offsets row right before it (see store/chain.py).
    """CREATE TABLE offsets (
        poll_id INTEGER PRIMARY KEY, layout_id INTEGER NOT NULL, base_poll INTEGER,
        latest BLOB NOT NULL, earliest BLOB
    )""",
    "CREATE INDEX offsets_base ON offsets (base_poll) WHERE base_poll IS NOT NULL",
    # Retention asks whether a layout is still used (without these: a scan per layout).
    "CREATE INDEX offsets_layout ON offsets (layout_id)",
    # Every server's metrics of one poll in one row; the layout names subjects and metrics.
    """CREATE TABLE metrics (
        poll_id INTEGER PRIMARY KEY, layout_id INTEGER NOT NULL, vals BLOB NOT NULL
    )""",
    "CREATE INDEX metrics_layout ON metrics (layout_id)",
    """CREATE TABLE events (
        id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, kind TEXT NOT NULL,
        severity TEXT NOT NULL, subject TEXT NOT NULL, message TEXT NOT NULL,
        details TEXT NOT NULL DEFAULT '{}', poll_id INTEGER
    )""",
    "CREATE INDEX events_at ON events (at_ms)",
    "CREATE INDEX events_subject ON events (subject, at_ms)",
    """CREATE TABLE notes (
        id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, subject TEXT NOT NULL,
        text TEXT NOT NULL, written_ms INTEGER NOT NULL
    )""",
    "CREATE INDEX notes_at ON notes (at_ms)",
)


def _v1(db: Database) -> None:
    for statement in _V1_DDL:
        db.conn.execute(statement)


def _compress(body: str | bytes) -> bytes:
    return codec.pack_text(body) if isinstance(body, str) else body


def _v2(db: Database) -> None:
    """Layout bodies as zlib-compressed JSON: a 200-table offsets layout is ~3 KB of JSON
    and a month keeps hundreds of them (one per table or partition created or dropped)."""
    db.register_function(_compress, name="konsole_compress", deterministic=True, replace=True)
    db.table("layouts").transform(types={"body": bytes})
    db.execute("UPDATE layouts SET body = konsole_compress(body)")


#: What an epoch made by the migration holds: polls recorded without the cluster's identity.
LEGACY_IDENTITY: Final = "{}"
LEGACY_REASON: Final = "recorded before konsole kept the cluster's identity"


def _v3(db: Database) -> None:
    """Epochs: which cluster each stretch of polls is of. A file with polls gets one epoch
    of unknown identity from its first poll (the next recorder starts a new one: nothing
    tells whether the cluster it polls is the one recorded before)."""
    db.execute(
        """CREATE TABLE epochs (
        id INTEGER PRIMARY KEY, from_ms INTEGER NOT NULL, first_poll INTEGER NOT NULL,
        identity TEXT NOT NULL, reason TEXT NOT NULL
    )"""
    )
    db.execute("CREATE INDEX epochs_from ON epochs (from_ms)")
    db.execute(
        "INSERT INTO epochs (from_ms, first_poll, identity, reason) "
        "SELECT min(at_ms), min(id), ?, ? FROM polls HAVING count(*) > 0",
        (LEGACY_IDENTITY, LEGACY_REASON),
    )


def _v4(db: Database) -> None:
    """Log excerpts: the evidence of an incident outlives the servers' log rotation."""
    db.execute(
        """CREATE TABLE log_excerpts (
        id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, subject TEXT NOT NULL,
        kind TEXT NOT NULL, from_ms INTEGER NOT NULL, to_ms INTEGER NOT NULL,
        source TEXT NOT NULL, n_lines INTEGER NOT NULL, body BLOB NOT NULL, error TEXT
    )"""
    )
    db.execute("CREATE INDEX log_excerpts_at ON log_excerpts (at_ms)")


def _v5(db: Database) -> None:
    """Storage parts: what the storage polls saw (remote log, KV snapshots, lake), one row
    per storage poll, on the poll that first carried it. Nothing to fill for older polls."""
    db.execute(
        """CREATE TABLE storage (
        poll_id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, body BLOB NOT NULL
    )"""
    )


#: MIGRATIONS[n]: the step taking version n to n + 1.
MIGRATIONS: tuple[Step, ...] = (_v1, _v2, _v3, _v4, _v5)
VERSION: Final = len(MIGRATIONS)


def database(conn: sqlite3.Connection) -> Database:
    """sqlite-utils on our own connection (no plugins, no PRAGMA changes): it joins the
    caller's transaction (a savepoint) instead of committing it."""
    from sqlite_utils import Database

    return Database(conn, recursive_triggers=False, execute_plugins=False)


def new_file_pragmas(conn: sqlite3.Connection) -> None:
    """For a file with no page written yet: these cannot change once the first page is
    (switching to WAL writes it), short of a VACUUM."""
    # page_size first: after auto_vacuum is set SQLite keeps its default page size.
    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
    # Lets retention hand freed pages back to the file system.
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")


def migrate(conn: sqlite3.Connection, *, to: int = VERSION) -> tuple[int, int]:
    """Bring the file to version ``to`` in one transaction; (version found, version now).

    The version is read under the write lock, so two processes opening a new file at
    once do not both create it.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if found == 0:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        if found < to:  # the usual open finds the current version: no sqlite-utils import
            db = database(conn)
            for version in range(found, to):
                MIGRATIONS[version](db)
        if to > found:
            conn.execute(f"PRAGMA user_version = {to}")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return found, max(found, to)

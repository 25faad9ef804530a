"""The history file's schema: versioned by ``PRAGMA user_version``, migrated forward only.

``MIGRATIONS[n]`` takes a file from version ``n`` to ``n + 1`` (version 0 is an empty file).
A file with a higher version than :data:`VERSION` was written by a newer konsole: it is
refused and never rewritten. ``PRAGMA application_id`` marks konsole's files, so another
program's SQLite database is not taken for an empty history.

Layout (see docs/history.md for the meaning of every table):

- ``polls``: one row per poll kept (time, latency, outcome, the first errors, resolution);
- change intervals ``[from_ms, to_ms)`` (``to_ms`` NULL while current): ``servers``,
  ``coordinators``, ``databases``, ``tables``, ``partitions``, ``placement``;
  ``schemas`` once per (table, schema id);
- per-poll series: ``offsets`` (one packed row per poll, see :mod:`store.codec`) and
  ``metrics`` (one packed row per poll), both shaped by ``layouts``;
- timeline: ``events`` and ``notes``.
"""

from __future__ import annotations

import sqlite3
from typing import Final

__all__ = ["APPLICATION_ID", "MIGRATIONS", "VERSION", "migrate"]

#: "KnSl": tells konsole's history files from other SQLite databases.
APPLICATION_ID: Final = 0x4B6E536C

_V1: Final = (
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

#: MIGRATIONS[n]: the statements taking version n to n + 1.
MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (_V1,)
VERSION: Final = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection, found: int, *, to: int = VERSION) -> None:
    """Apply the migrations after ``found`` up to ``to``, each in its own transaction.

    A crash between two steps leaves a file at an intermediate version, which the next
    open carries on from.
    """
    if found == 0:
        # Set before the first table exists (afterwards it needs a VACUUM): lets retention
        # hand freed pages back to the file system.
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    for version in range(found, to):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version + 1}")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

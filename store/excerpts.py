"""Log excerpts (schema version 4): a server's log lines around an event, compressed.

The lines are joined by newlines and zlib-compressed (:func:`store.codec.pack_text`); the
row keeps their count so a listing needs no decompression. Bounds are the caller's (the
recorder keeps a few hundred lines per excerpt); the store keeps what it is given.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from store import codec
from store.files import translate
from store.rows import LogExcerptRow

__all__ = ["ExcerptReads", "insert_excerpt", "read_excerpts"]

#: The first version holding the table.
SINCE_VERSION = 4


def insert_excerpt(conn: sqlite3.Connection, path: Path, row: LogExcerptRow) -> int:
    """One row, committed on its own (the writer's connection autocommits between polls)."""
    try:
        cur = conn.execute(
            "INSERT INTO log_excerpts (at_ms, subject, kind, from_ms, to_ms, source, n_lines, "
            "body, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.at_ms,
                row.subject,
                row.kind,
                row.from_ms,
                row.to_ms,
                row.source,
                len(row.lines),
                codec.pack_text("\n".join(row.lines)),
                row.error,
            ),
        )
    except sqlite3.Error as exc:
        raise translate(exc, path) from None
    return int(cur.lastrowid or 0)


class ExcerptReads:
    """A reader's excerpts: called as ``reader.log_excerpts(since, until, subject=...)``."""

    def __init__(self, query: Callable[[str, Sequence[Any]], list[Any]], version: int) -> None:
        self._query, self._version = query, version

    def __call__(
        self, since: int | None = None, until: int | None = None, *, subject: str | None = None
    ) -> list[LogExcerptRow]:
        return read_excerpts(self._query, self._version, since, until, subject)


def read_excerpts(
    query: Callable[[str, Sequence[Any]], list[Any]],
    version: int,
    since: int | None,
    until: int | None,
    subject: str | None,
) -> list[LogExcerptRow]:
    """Excerpts taken for events in ``[since, until]`` (oldest first); [] in a file older
    than version 4 (it has none)."""
    if version < SINCE_VERSION:
        return []
    clauses: list[str] = []
    params: list[Any] = []
    if since is not None:
        clauses.append("at_ms >= ?")
        params.append(since)
    if until is not None:
        clauses.append("at_ms <= ?")
        params.append(until)
    if subject is not None:
        clauses.append("subject = ?")
        params.append(subject)
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    rows = query(
        "SELECT at_ms, subject, kind, from_ms, to_ms, source, n_lines, body, error, id "
        f"FROM log_excerpts{where} ORDER BY at_ms, id",
        params,
    )
    return [
        LogExcerptRow(
            at_ms=r[0],
            subject=r[1],
            kind=r[2],
            from_ms=r[3],
            to_ms=r[4],
            source=r[5],
            lines=tuple(codec.unpack_text(r[7]).split("\n")) if r[6] else (),
            error=r[8],
            id=r[9],
        )
        for r in rows
    ]

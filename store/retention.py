"""Retention with downsampling: the file stays bounded however long the recorder runs.

By default every poll is kept for 24 hours, then one poll per minute until 7 days, then one
per hour until 90 days; events and notes are kept 90 days. Downsampling keeps the first
successful poll of each minute (hour), or the first poll when none succeeded, with all of
its series (offsets, metrics): offsets are running totals, so rates over the kept samples
stay exact, only coarser. Change intervals that ended before the oldest poll kept go too.

An offsets row whose base row goes is re-encoded against the kept row before it (or as a
key) first, so every kept row decodes; the rows moved to a coarser resolution are
re-chained with its longer key period (see :mod:`store.chain`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Final

from store import codec
from store.chain import Link, encode
from store.files import translate
from store.history import ENTITIES, HistoryWriter

__all__ = ["RetentionPolicy", "RetentionResult", "apply_retention"]

HOUR_MS: Final = 3_600_000
DAY_MS: Final = 24 * HOUR_MS


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    #: Every poll kept this long.
    full_ms: int = DAY_MS
    #: Then one per minute until this age.
    minute_ms: int = 7 * DAY_MS
    #: Then one per hour until this age; older polls are deleted.
    hour_ms: int = 90 * DAY_MS
    events_ms: int = 90 * DAY_MS
    notes_ms: int = 90 * DAY_MS

    def __post_init__(self) -> None:
        if not 0 < self.full_ms <= self.minute_ms <= self.hour_ms:
            raise ValueError("retention must grow: full <= minute <= hour, all positive")


@dataclass(frozen=True, slots=True)
class RetentionResult:
    polls_deleted: int
    keys_rewritten: int
    events_deleted: int
    intervals_deleted: int


def apply_retention(writer: HistoryWriter, policy: RetentionPolicy, now_ms: int) -> RetentionResult:
    """One transaction; then hands free pages back to the file system (incremental)."""
    conn = writer.connection
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = _apply(conn, policy, now_ms)
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        conn.execute("PRAGMA incremental_vacuum")
    except sqlite3.Error as exc:
        raise translate(exc, writer.path) from None
    finally:
        writer.forget_cached()
    return result


def _apply(conn: sqlite3.Connection, policy: RetentionPolicy, now_ms: int) -> RetentionResult:
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS doomed (id INTEGER PRIMARY KEY)")
    conn.execute("DELETE FROM temp.doomed")
    horizon = now_ms - policy.hour_ms
    conn.execute("INSERT INTO temp.doomed SELECT id FROM polls WHERE at_ms < ?", (horizon,))
    moved: list[tuple[int, int]] = []  # per level: the first and last poll moved to it
    for level, start, end, bucket in (
        (2, horizon, now_ms - policy.minute_ms, HOUR_MS),
        (1, now_ms - policy.minute_ms, now_ms - policy.full_ms, 60_000),
    ):
        conn.execute(
            "INSERT OR IGNORE INTO temp.doomed SELECT id FROM (SELECT id, row_number() OVER "
            "(PARTITION BY at_ms / ? ORDER BY ok DESC, at_ms, id) AS n FROM polls "
            "WHERE at_ms >= ? AND at_ms < ?) WHERE n > 1",
            (bucket, start, end),
        )
        lo, hi = conn.execute(
            "SELECT min(id), max(id) FROM polls WHERE at_ms >= ? AND at_ms < ? AND level < ? "
            "AND id NOT IN temp.doomed",
            (start, end, level),
        ).fetchone()
        if lo is not None:
            moved.append((lo, hi))
            conn.execute(
                "UPDATE polls SET level = ? WHERE at_ms >= ? AND at_ms < ? AND level < ? "
                "AND id NOT IN temp.doomed",
                (level, start, end, level),
            )
    rekeyed = _rechain(conn, moved)
    layouts = [
        r[0]
        for r in conn.execute(
            "SELECT layout_id FROM offsets WHERE poll_id IN temp.doomed UNION "
            "SELECT layout_id FROM metrics WHERE poll_id IN temp.doomed"
        )
    ]
    deleted = conn.execute("DELETE FROM polls WHERE id IN temp.doomed").rowcount
    conn.execute("DELETE FROM offsets WHERE poll_id IN temp.doomed")
    conn.execute("DELETE FROM metrics WHERE poll_id IN temp.doomed")
    # A thinned poll's storage part goes with it (readers fall back to the one before).
    conn.execute("DELETE FROM storage WHERE poll_id IN temp.doomed")
    events = conn.execute(
        "DELETE FROM events WHERE at_ms < ?", (now_ms - policy.events_ms,)
    ).rowcount
    conn.execute("DELETE FROM notes WHERE at_ms < ?", (now_ms - policy.notes_ms,))
    # Excerpts are the events' evidence: they go with them.
    conn.execute("DELETE FROM log_excerpts WHERE at_ms < ?", (now_ms - policy.events_ms,))
    # Intervals that ended before the oldest poll kept describe nothing a query can reach.
    oldest = conn.execute("SELECT min(at_ms) FROM polls").fetchone()[0]
    intervals = 0
    if oldest is not None:
        for _, entity in ENTITIES:
            intervals += conn.execute(
                f"DELETE FROM {entity.table} WHERE to_ms IS NOT NULL AND to_ms <= ?", (oldest,)
            ).rowcount
        conn.execute(
            "DELETE FROM schemas WHERE NOT EXISTS (SELECT 1 FROM tables t WHERE "
            "t.table_id = schemas.table_id AND t.schema_id = schemas.schema_id)"
        )
    conn.executemany(
        "DELETE FROM layouts WHERE id = ? AND NOT EXISTS (SELECT 1 FROM offsets WHERE "
        "layout_id = layouts.id) AND NOT EXISTS (SELECT 1 FROM metrics WHERE "
        "layout_id = layouts.id)",
        [(layout_id,) for layout_id in layouts],
    )
    conn.execute("DELETE FROM temp.doomed")
    return RetentionResult(deleted, rekeyed, events, intervals)


def _rechain(conn: sqlite3.Connection, moved: list[tuple[int, int]]) -> int:
    """Re-encode the kept offsets rows whose base row goes (against the kept row before
    them, or as keys) and those among the polls ``moved`` to a coarser level (with its key
    period), so the chain invariant of :mod:`store.chain` holds afterwards.

    Each span is decoded from the key before it, in the file's state before any rewrite
    (doomed rows are still there, so every old chain decodes); spans far apart (the minute
    band's edge is days from the hour band's) are decoded apart. Rows after a span keep
    their encoding: the values of the row before them do not change.
    """
    spans = sorted(
        [
            *moved,
            *(
                (r[0], r[0])
                for r in conn.execute(
                    "SELECT poll_id FROM offsets WHERE base_poll IN temp.doomed "
                    "AND poll_id NOT IN temp.doomed"
                )
            ),
        ]
    )
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    updates: list[tuple[bytes, int | None, int]] = []
    for first, last in merged:
        updates += _rechain_span(conn, first, last)
    conn.executemany("UPDATE offsets SET latest = ?, base_poll = ? WHERE poll_id = ?", updates)
    return len(updates)


def _rechain_span(
    conn: sqlite3.Connection, first: int, last: int
) -> list[tuple[bytes, int | None, int]]:
    rows = conn.execute(
        "SELECT o.poll_id, o.base_poll, o.latest, o.layout_id, p.at_ms, p.level, "
        "o.poll_id IN temp.doomed FROM offsets o JOIN polls p ON p.id = o.poll_id "
        # From the key before ``first``: a moved key may become a delta to the row before.
        "WHERE o.poll_id <= ? AND o.poll_id >= coalesce((SELECT max(poll_id) FROM offsets "
        "WHERE poll_id < ? AND base_poll IS NULL), 0) ORDER BY o.poll_id",
        (last, first),
    )
    updates: list[tuple[bytes, int | None, int]] = []
    prev: tuple[int, list[int | None]] | None = None
    kept: Link | None = None
    for poll_id, base, blob, layout_id, at_ms, level, doomed in rows:
        values = codec.unpack_ints(blob)
        if base is not None:
            if prev is None or prev[0] != base:
                raise sqlite3.DatabaseError(f"malformed offsets chain at poll {poll_id}")
            values = codec.apply_delta(values, prev[1])
        prev = (poll_id, values)
        if doomed:
            continue
        link = Link(poll_id, layout_id, values, at_ms)
        if poll_id >= first:
            new_blob, new_base = encode(link, kept, level=level)
            # Same base: same values on both sides, so the same blob; nothing to write.
            if new_base != base:
                updates.append((new_blob, new_base, poll_id))
        kept = link
    return updates

"""The raw reads of one history connection: SQL with typed errors, cached layouts, and
offset chains decoded (the part of reading that knows how rows are packed)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from store import codec
from store.chain import decode_rows
from store.errors import NotAHistoryFile
from store.files import translate
from store.rows import Slot


class PackedReads:
    """Reads on ``conn`` (the file at ``path``), with the layouts it has met cached."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._layouts: dict[int, tuple[str, Any]] = {}

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from None

    def layout(self, layout_id: int) -> Any:
        known = self._layouts.get(layout_id)
        if known is None:
            rows = self.query("SELECT kind, body FROM layouts WHERE id = ?", (layout_id,))
            if not rows:
                raise NotAHistoryFile(f"{self.path}: offsets layout {layout_id} is missing")
            kind, body = rows[0]
            parsed = json.loads(codec.unpack_text(body))
            value: Any = (
                tuple(Slot(t, p, n) for t, p, n in parsed) if kind == "offsets" else tuple(parsed)
            )
            known = (kind, value)
            self._layouts[layout_id] = known
        return known[1]

    def chain(self, last: int, first: int | None = None) -> list[tuple[Any, ...]]:
        """Offsets rows (poll_id, base, blob, at_ms, layout_id) from the key at or before
        ``first`` (default: ``last``) up to ``last``, in poll order."""
        start = last if first is None else first
        return self.query(
            "SELECT o.poll_id, o.base_poll, o.latest, p.at_ms, o.layout_id FROM offsets o "
            "JOIN polls p ON p.id = o.poll_id WHERE o.poll_id <= ? AND o.poll_id >= coalesce("
            "(SELECT max(poll_id) FROM offsets WHERE poll_id <= ? AND base_poll IS NULL), 0) "
            "ORDER BY o.poll_id",
            (last, start),
        )

    def decoded(self, rows: list[tuple[Any, ...]]) -> Iterator[tuple[int, list[int | None]]]:
        try:
            yield from decode_rows((r[0], r[1], r[2]) for r in rows)
        except ValueError as exc:
            raise NotAHistoryFile(f"{self.path}: {exc}") from None

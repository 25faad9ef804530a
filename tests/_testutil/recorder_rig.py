"""A recorder under test with what it said, the events it gave and the polls it committed,
and the made-up polls it records (tests of the history under the recorder's feet)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from konsole.model.events import Event
from konsole.model.snapshot import ClusterSnapshot
from store import HistoryWriter
from tests._testutil.builders import T0, snap, table, view
from tests._testutil.judging import JudgingRecorder

__all__ = ["Rig", "kinds", "poll"]


def poll(n: int, *, t: float | None = None, tables: int = 1) -> ClusterSnapshot:
    shown = [table(f"db.t{i}", i + 1, [n, n + i]) for i in range(tables)]
    return snap(view((1, 2, 3), shown), seq=n, t=T0 + 10 * n if t is None else t)


class Rig:
    """A recorder with what it said, the events it gave and the polls it committed."""

    def __init__(self, path: Path, **kwargs: object) -> None:
        self.path = path
        self.said: list[str] = []
        self.events: list[Event] = []
        self.committed: list[int] = []
        self.r = JudgingRecorder(
            path,
            say=self.said.append,
            on_event=self.events.append,
            on_commit=lambda s, _id: self.committed.append(s.seq),
            clock=lambda: T0 + 10_000,
            **kwargs,  # type: ignore[arg-type]
        )
        self.r.open()
        self.seq = 0

    def polls(self, n: int, **kwargs: object) -> list[int | None]:
        out = []
        for _ in range(n):
            self.seq += 1
            out.append(self.r.record(poll(self.seq, **kwargs)))  # type: ignore[arg-type]
        return out

    @property
    def troubles(self) -> list[str]:
        return [s for s in self.said if s.startswith("NOT RECORDING")]

    @property
    def writer(self) -> HistoryWriter:
        assert self.r._writer is not None
        return self.r._writer


def kinds(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [k for (k,) in conn.execute("SELECT kind FROM events ORDER BY id")]
    finally:
        conn.close()

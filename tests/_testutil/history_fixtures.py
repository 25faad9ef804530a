"""Frozen history files of every earlier schema version, and the answers they gave.

Each ``tests/fixtures/history/v<N>.sql`` is a dump of a file written by the store code of
schema version N (the writer, retention and notes of that version, not hand-built SQL);
``v<N>.answers.json`` holds what the reader of that version answered on it. The migration
tests load every dump, migrate it to the current version and compare the answers.

Before bumping ``store.schema.VERSION``, freeze the version being left (run with the code
of that version)::

    .venv/bin/python -m tests._testutil.history_fixtures
"""

from __future__ import annotations

import dataclasses
import json
import random
import sqlite3
import tempfile
from pathlib import Path
from typing import Any, Final

from konsole.collect.cluster.metrics import ServerMetrics
from konsole.collect.history.rows import poll_record
from store import RetentionPolicy, add_note, apply_retention, open_reader, open_writer
from store.queries import HistoryReader
from store.rows import EventRow, NoteRow
from store.schema import APPLICATION_ID, VERSION
from tests._testutil.builders import T0, snap, table, view

FIXTURES_DIR: Final = Path(__file__).resolve().parents[1] / "fixtures" / "history"
#: Polls of the representative file: every 30 s for 3 h 20 min.
STEP_S: Final = 30.0
POLLS: Final = 400
END_S: Final = T0 + STEP_S * (POLLS - 1)
#: Small retention, so the file holds polls of every level after it.
POLICY: Final = RetentionPolicy(
    full_ms=3_600_000, minute_ms=2 * 3_600_000, hour_ms=86_400_000, events_ms=86_400_000
)
#: As-of times asked of the file (seconds): before the first poll, in every level, the end.
AS_OF_S: Final = (T0 - 60, T0 + 95, T0 + 3_000, T0 + 5_432, T0 + 8_000, T0 + 10_500, END_S + 5)


def sql_path(version: int) -> Path:
    return FIXTURES_DIR / f"v{version}.sql"


def answers_path(version: int) -> Path:
    return FIXTURES_DIR / f"v{version}.answers.json"


def frozen_versions() -> list[int]:
    """The schema versions with a frozen file in the fixtures directory."""
    return sorted(int(p.name[1:].split(".")[0]) for p in FIXTURES_DIR.glob("v*.sql"))


def _metrics(rng: random.Random, at: float, tablets: list[int]) -> tuple[ServerMetrics, ...]:
    return tuple(
        ServerMetrics(
            url=f"http://127.0.0.1:{9300 + i}/metrics",
            role="tablet",
            server_id=str(i),
            host="127.0.0.1",
            scraped_at=at,
            duration_s=0.01,
            disk_usage_ratio=round(rng.random(), 3),
            under_replicated=rng.randrange(3),
            bytes_in_rate=rng.random() * 1e5,
            leader_count=10 + i,
        )
        for i in tablets
    )


def build(path: Path) -> None:
    """A history file through the current store code: servers leaving and coming back, a
    table created and dropped, a partitioned table gaining partitions, leaders moving,
    offsets with keys and deltas, earliest offsets now and then, metrics, a failed poll,
    events, notes, and retention at every level."""
    rng = random.Random(11)
    offsets = {"db.hot": [1_000, 2_000, 3_000, 4_000], "db.idle": [7, 7]}
    parts: dict[str, list[int | None]] = {"p1": [0, 0]}
    tmp: list[int | None] | None = None
    with open_writer(path) as writer:
        for i in range(POLLS):
            at = T0 + STEP_S * i
            events: list[EventRow] = []
            tablets = [1, 2, 3] if not 100 <= i < 130 else [1, 3]
            if i == 100:
                events.append(
                    EventRow(round(at * 1000), "server_down", "critical", "tablet-server 2", "gone")
                )
            if i == 130:
                events.append(
                    EventRow(round(at * 1000), "server_up", "info", "tablet-server 2", "back")
                )
            if i == 150:
                tmp = [0, 0, 0]
                events.append(
                    EventRow(round(at * 1000), "table_created", "info", "table db.tmp", "created")
                )
            if i == 260:
                tmp = None
                events.append(
                    EventRow(round(at * 1000), "table_dropped", "info", "table db.tmp", "dropped")
                )
            if i == 200:
                parts["p2"] = [0, 0]
                events.append(
                    EventRow(round(at * 1000), "partition_created", "info", "table db.part", "p2")
                )
            if i % 37 == 5:
                events.append(
                    EventRow(
                        round(at * 1000),
                        "request_errors",
                        "warning",
                        "tablet-server 1",
                        f"errors {i}",
                    )
                )
            hot = offsets["db.hot"]
            for b in range(len(hot)):
                hot[b] = (hot[b] or 0) + rng.randrange(50, 150)
            for name in parts:
                parts[name] = [(v or 0) + rng.randrange(0, 20) for v in parts[name]]
            if tmp is not None:
                tmp = [(v or 0) + rng.randrange(0, 5) for v in tmp]
            leaders = [1, 2, 3, 1] if 2 in tablets else [1, 3, 3, 1]
            unknown_bucket = i % 50 == 7  # a bucket whose offset could not be read
            tables = [
                table(
                    "db.hot",
                    1,
                    [*hot[:3], None if unknown_bucket else hot[3]],
                    leaders=leaders,
                    earliest=[10, 20, 30, 40] if i % 20 == 0 else None,
                ),
                table("db.idle", 2, offsets["db.idle"]),
                table("db.part", 3, [], partitions=dict(parts)),
            ]
            if tmp is not None:
                tables.append(table("db.tmp", 4, tmp))
            ok = i != 77
            shot = snap(
                view(tablets, tables, earliest=i % 20 == 0) if ok else None,
                seq=i + 1,
                t=at,
                metrics=_metrics(rng, at, tablets),
            )
            writer.record(poll_record(shot, events))
            if i % 120 == 119:
                apply_retention(writer, POLICY, round(at * 1000))
        apply_retention(writer, POLICY, round(END_S * 1000))
    add_note(
        path, NoteRow(round((T0 + 3_000) * 1000), "tablet-server 2", "disk swapped"), written_ms=1
    )
    add_note(path, NoteRow(round((T0 + 9_000) * 1000), "table db.tmp", "load test"), written_ms=2)


def _plain(value: Any) -> Any:
    """JSON-able: dataclasses as dicts, tuples as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def answers(reader: HistoryReader) -> dict[str, Any]:
    """Every query's answer on the representative file, JSON-able (the version-independent
    part of ``info``: not the size or the schema version)."""
    ms = lambda s: round(s * 1000)  # noqa: E731
    out: dict[str, Any] = {
        "polls": _plain(reader.polls()),
        "events": _plain(reader.events()),
        "events_critical": _plain(reader.events(severities=["critical"])),
        "events_table_kind": _plain(reader.events(kinds=["table_created", "table_dropped"])),
        "events_subject": _plain(reader.events(subject="tablet-server 2")),
        "events_range": _plain(reader.events(ms(T0 + 3_000), ms(T0 + 9_000))),
        "notes": _plain(reader.notes()),
        "notes_subject": _plain(reader.notes(subject="table db.tmp")),
        "tables_named_tmp": _plain(reader.tables_named("db", "tmp")),
        "metric_names": reader.metric_names(),
        "metric_series": _plain(reader.metric_series("tablet-server 1", "bytes_in_rate")),
    }
    for name, args, kwargs in (
        ("totals_hot", (1,), {}),
        ("totals_hot_bucket3", (1, None, 3), {}),
        ("totals_part_all", (3,), {"all_partitions": True}),
        ("totals_tmp_per_10min", (4,), {"step_ms": 600_000}),
        ("totals_hot_range", (1,), {"since": ms(T0 + 4_000), "until": ms(T0 + 11_000)}),
    ):
        out[name] = _plain(reader.offset_totals(*args, **kwargs))
    out["throughput_hot"] = _plain(reader.throughput(1))
    out["as_of"] = {str(t): _plain(reader.state_at(ms(t))) for t in AS_OF_S}
    for state in out["as_of"].values():
        # Added in version 4 (storage parts): a file without any reads as before.
        if isinstance(state, dict) and state.get("storage") is None:
            state.pop("storage", None)
    info = reader.info(ms(END_S), full_ms=POLICY.full_ms, minute_ms=POLICY.minute_ms)
    out["info"] = {
        "first_ms": info.first_ms,
        "last_ms": info.last_ms,
        "polls": info.polls,
        "events": info.events,
        "notes": info.notes,
    }
    return out


def load(version: int, path: Path) -> None:
    """The frozen file of ``version`` at ``path`` (as that version's store wrote it)."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.executescript(sql_path(version).read_text())
    finally:
        conn.close()


def freeze(version: int = VERSION) -> None:
    """Write the current version's representative file as a dump, and its answers."""
    FIXTURES_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "h.sqlite"
        build(path)
        conn = sqlite3.connect(path)
        try:
            pragmas = {
                p: conn.execute(f"PRAGMA {p}").fetchone()[0]
                for p in ("auto_vacuum", "application_id", "user_version")
            }
            assert pragmas["application_id"] == APPLICATION_ID
            dump = "\n".join(conn.iterdump())
        finally:
            conn.close()
        # The pragmas are not part of a dump; auto_vacuum must come before the first table.
        head = "".join(f"PRAGMA {p} = {v};\n" for p, v in pragmas.items())
        sql_path(version).write_text(head + dump + "\n")
        with open_reader(path) as reader:
            result = answers(reader)
    answers_path(version).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    freeze()

"""Queries: events by range, kind, severity and subject; offsets, throughput, notes, info."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import RetentionPolicy, add_note, open_reader, open_writer
from store.rows import EventRow, NoteRow, OffsetsRow, PollRecord, Slot

LAYOUT = (Slot(1, None, 2), Slot(2, 10, 1), Slot(2, 11, 1))


def poll(
    at_ms: int, latest: tuple[int | None, ...], events: tuple[EventRow, ...] = ()
) -> PollRecord:
    return PollRecord(
        at_ms=at_ms,
        seq=at_ms // 1000,
        latency_ms=3,
        ok=True,
        offsets=OffsetsRow(LAYOUT, latest),
        events=events,
    )


def ev(at_ms: int, kind: str, severity: str, subject: str) -> EventRow:
    return EventRow(at_ms, kind, severity, subject, f"{kind} on {subject}")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    path = tmp_path / "h.sqlite"
    with open_writer(path) as w:
        w.record(poll(0, (0, 0, 0, 0), (ev(0, "server_up", "info", "tablet-server 1"),)))
        w.record(
            poll(
                10_000,
                (100, 0, 5, None),
                (ev(10_000, "leader_changed", "warning", "table db.t#0"),),
            )
        )
        w.record(
            poll(
                20_000,
                (300, 50, 10, 7),
                (
                    ev(20_000, "server_down", "critical", "tablet-server 1"),
                    ev(20_000, "table_dropped", "info", "table db.t"),
                ),
            )
        )
        w.record(poll(30_000, (300, 60, 2, 9)))  # partition 10 went back: a truncation
    return path


def test_events_filter_by_range_kind_severity_and_subject(path: Path) -> None:
    with open_reader(path) as r:
        assert [e.kind for e in r.events()] == [
            "server_up",
            "leader_changed",
            "server_down",
            "table_dropped",
        ]
        assert [e.at_ms for e in r.events(since=10_000, until=19_999)] == [10_000]
        assert [e.kind for e in r.events(kinds=["server_down", "server_up"])] == [
            "server_up",
            "server_down",
        ]
        assert [e.kind for e in r.events(severities=["critical"])] == ["server_down"]
        assert [e.kind for e in r.events(subject="table db.t")] == [
            "leader_changed",
            "table_dropped",
        ]
        assert [e.kind for e in r.events(subject="tablet-server *")] == ["server_up", "server_down"]
        assert r.events(subject="table db.tx") == []
        assert [e.id for e in r.events(limit=2)] == [1, 2]


def test_offset_totals_and_throughput_per_table_partition_and_bucket(path: Path) -> None:
    with open_reader(path) as r:
        table = r.offset_totals(1)
        bucket = r.throughput(1, None, 1)
        part = r.throughput(2, 10)
        whole = r.offset_totals(2, all_partitions=True)
        stepped = r.offset_totals(1, step_ms=20_000)
    assert [(p.at_ms, p.value) for p in table] == [
        (0, 0),
        (10_000, 100),
        (20_000, 350),
        (30_000, 360),
    ]
    assert [(p.at_ms, p.value) for p in bucket] == [(10_000, 0.0), (20_000, 5.0), (30_000, 1.0)]
    assert [(p.at_ms, p.value) for p in part] == [(10_000, 0.5), (20_000, 0.5), (30_000, None)]
    assert [p.value for p in whole] == [0, None, 17, 11]
    assert [p.at_ms for p in stepped] == [0, 20_000]


def test_notes_can_be_added_while_a_recorder_writes(path: Path) -> None:
    with open_writer(path.with_name("other.sqlite")):
        pass
    w = open_writer(path)
    try:
        add_note(path, NoteRow(15_000, "tablet-server 1", "disk replaced"), written_ms=99)
        w.record(poll(40_000, (300, 60, 2, 9)))
    finally:
        w.close()
    with open_reader(path) as r:
        assert [(n.at_ms, n.subject, n.text) for n in r.notes()] == [
            (15_000, "tablet-server 1", "disk replaced")
        ]
        assert r.notes(subject="nobody") == []


def test_info_counts_polls_and_events_by_resolution(path: Path) -> None:
    policy = RetentionPolicy()
    with open_reader(path) as r:
        info = r.info(30_000, full_ms=policy.full_ms, minute_ms=policy.minute_ms)
    assert (info.first_ms, info.last_ms, info.notes, info.writer_pid) == (0, 30_000, 0, None)
    assert info.polls == {"full": 4, "minute": 0, "hour": 0}
    assert info.events == {"full": 4, "minute": 0, "hour": 0}
    assert info.size_bytes > 0

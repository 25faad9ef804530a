"""Epochs: one per cluster a history has recorded; no reader joins two across time."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from store import HistoryError, open_reader, open_writer
from store.rows import (
    EpochMark,
    EventRow,
    MetricRow,
    OffsetsRow,
    PollRecord,
    PollRow,
    ServerRow,
    Slot,
)
from store.schema import LEGACY_IDENTITY, VERSION
from tests._testutil.history_fixtures import load

LAYOUT = (Slot(1, None, 2),)
A, B = '{"run_id":"a"}', '{"run_id":"b"}'


def poll(
    at_s: int,
    latest: tuple[int, int],
    *,
    epoch: EpochMark | None = None,
    earliest: tuple[int, int] | None = None,
    heap: float = 1.0,
) -> PollRecord:
    at_ms = at_s * 1000
    return PollRecord(
        at_ms=at_ms,
        seq=at_s,
        latency_ms=3,
        ok=True,
        servers=(ServerRow(1, "tablet", "127.0.0.1", 9201),),
        offsets=OffsetsRow(LAYOUT, latest, earliest),
        metrics=(MetricRow("tablet-server 1", (("heap_used", heap),)),),
        events=(EventRow(at_ms, "server_up", "info", "tablet-server 1", f"poll {at_s}"),),
        epoch=epoch,
    )


def two_clusters(path: Path) -> None:
    """Cluster A polled at 0..30 s, cluster B (same table id, lower offsets) at 40..60 s."""
    with open_writer(path) as w:
        w.record(poll(0, (0, 0), epoch=EpochMark(A, start=True, reason="first"), earliest=(0, 0)))
        w.record(poll(10, (100, 100), heap=2.0))
        w.record(poll(20, (200, 200), epoch=EpochMark('{"run_id":"a","x":1}', start=False)))
        w.record(poll(30, (300, 300), heap=3.0))
        w.record(poll(40, (5, 5), epoch=EpochMark(B, start=True, reason="another run")))
        w.record(poll(50, (15, 15), heap=9.0))
        w.record(poll(60, (25, 25), heap=9.0))


def test_a_new_epoch_starts_with_the_poll_that_says_so(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    two_clusters(path)
    with open_reader(path) as r:
        epochs = r.epochs.all()
        assert [(e.id, e.from_ms, e.first_poll, e.reason) for e in epochs] == [
            (1, 0, 1, "first"),
            (2, 40_000, 5, "another run"),
        ]
        # The same cluster's newer identity replaced the old one; a start was kept as given.
        assert [e.identity for e in epochs] == ['{"run_id":"a","x":1}', B]
        assert r.epochs.span(None) == (40_000, None)
        assert r.epochs.span(25_000) == (0, 40_000)
        assert r.info(60_000, full_ms=10**9, minute_ms=10**9).epochs == tuple(epochs)
    # A writer opened later continues the latest epoch.
    with open_writer(path) as w:
        assert w.epoch is not None and w.epoch.id == 2


def test_series_stay_in_one_epoch(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    two_clusters(path)
    with open_reader(path) as r:
        # The latest epoch by default: no rate from A's 300 to B's 5 (or from 0 to B's rows).
        assert [(p.at_ms, p.value) for p in r.offset_totals(1)] == [
            (40_000, 10.0),
            (50_000, 30.0),
            (60_000, 50.0),
        ]
        assert [p.value for p in r.throughput(1)] == [2.0, 2.0]
        # Asked for a moment of A: A's polls only, even with a range reaching into B.
        assert [p.at_ms for p in r.offset_totals(1, since=0, until=35_000)] == [
            0,
            10_000,
            20_000,
            30_000,
        ]
        assert [p.value for p in r.metric_series("tablet-server 1", "heap_used")] == [1.0, 9, 9]
        assert [p.value for p in r.metric_series("tablet-server 1", "heap_used", until=30_000)] == [
            1.0,
            2.0,
            1.0,
            3.0,
        ]


def test_time_travel_and_events_stay_in_the_moments_epoch(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    two_clusters(path)
    with open_reader(path) as r:
        state = r.state_at(45_000)
        assert state is not None and state.offsets is not None
        assert state.offsets.latest == (5, 5)
        # A's earliest offsets (poll 1, same layout) are not B's.
        assert state.offsets.earliest is None
        early = r.state_at(25_000)
        assert early is not None and early.offsets is not None
        assert early.offsets.earliest == (0, 0)
        assert [e.message for e in r.events(within_epoch=True)] == ["poll 40", "poll 50", "poll 60"]
        assert [e.message for e in r.events(until=15_000, within_epoch=True)] == [
            "poll 0",
            "poll 10",
        ]
        assert len(r.events()) == 7  # unbounded when not asked


def test_a_failed_write_leaves_the_epoch_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    with open_writer(path) as w:
        w.record(poll(0, (0, 0), epoch=EpochMark(A, start=True, reason="first")))
        w.connection.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON epochs BEGIN SELECT RAISE(ABORT, 'no'); END"
        )
        with pytest.raises(HistoryError):
            w.record(poll(10, (1, 1), epoch=EpochMark(B, start=True, reason="b")))
        assert w.epoch is not None and w.epoch.identity == A
        w.connection.execute("DROP TRIGGER refuse")
        w.record(poll(20, (2, 2), epoch=EpochMark(B, start=True, reason="b")))
        assert w.epoch is not None and w.epoch.identity == B
    with open_reader(path) as r:
        assert [p.seq for p in r.polls()] == [0, 20]
        assert [e.from_ms for e in r.epochs.all()] == [0, 20_000]


def test_a_frozen_v2_file_migrates_to_one_epoch_of_unknown_identity(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    load(2, path)
    with open_reader(path) as r:
        assert r.epochs.all() == []  # read as it is: no epochs before version 3
        first: PollRow = r.polls()[0]
        count = len(r.polls())
    open_writer(path).close()
    conn = sqlite3.connect(path)
    try:
        # to the current version (3 brought epochs; later steps keep them)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == VERSION >= 3
    finally:
        conn.close()
    with open_reader(path) as r:
        (epoch,) = r.epochs.all()
        assert (epoch.from_ms, epoch.first_poll, epoch.identity) == (
            first.at_ms,
            first.id,
            LEGACY_IDENTITY,
        )
        assert len(r.offset_totals(1)) > 0 and len(r.polls()) == count
    # The next recorder starts a new epoch; the old polls stay readable in theirs.
    last = max(p.at_ms for p in open_reader(path).polls())
    with open_writer(path) as w:
        w.record(replace(poll(0, (1, 1)), at_ms=last + 30_000, epoch=EpochMark(A, True, "id")))
    with open_reader(path) as r:
        assert [e.id for e in r.epochs.all()] == [1, 2]
        assert r.state_at(last) is not None
        assert r.epochs.span(last) == (first.at_ms, last + 30_000)


def test_an_empty_file_gets_no_epoch_from_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    open_writer(path).close()
    with open_reader(path) as r:
        assert r.epochs.all() == [] and r.epochs.span(None) == (None, None)
        assert r.epochs.narrow(5, 10) == (5, 10)

"""Retention: downsampled polls still decode, the file stays bounded, events expire."""

from __future__ import annotations

from pathlib import Path

from store import RetentionPolicy, apply_retention, open_reader, open_writer
from store.rows import EventRow, OffsetsRow, PollRecord, Slot

MIN, HOUR = 60_000, 3_600_000
BIG = (Slot(1, None, 3),)
TWO = (*BIG, Slot(2, None, 1))


def _ok(at_ms: int) -> bool:
    return (at_ms // 10_000) % 97 != 5  # now and then a failed poll


def offsets_at(at_ms: int, layout: tuple[Slot, ...]) -> OffsetsRow:
    # running totals that grow with time: any sample decodes to a known value
    values = [at_ms // 1000 * (i + 1) for i in range(sum(s.buckets for s in layout))]
    return OffsetsRow(layout, tuple(values))


def test_downsampling_keeps_a_poll_per_minute_then_per_hour_and_all_of_them_decode(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite"
    policy = RetentionPolicy(
        full_ms=10 * MIN, minute_ms=2 * HOUR, hour_ms=5 * HOUR, events_ms=3 * HOUR
    )
    start = 1_000 * HOUR
    end = start + 6 * HOUR
    new_table_at = start + 4 * HOUR + 17 * MIN + 35_000  # mid-minute: its key is not kept
    with open_writer(path) as w:
        at = start
        while at < end:
            layout = TWO if at >= new_table_at else BIG
            ok = _ok(at)
            w.record(
                PollRecord(
                    at_ms=at,
                    seq=at,
                    latency_ms=1,
                    ok=ok,
                    offsets=offsets_at(at, layout) if ok else None,
                    events=(EventRow(at, "tick", "info", "cluster", "t"),)
                    if at % HOUR == 0
                    else (),
                )
            )
            at += 10_000
        now = end
        result = apply_retention(w, policy, now)
        again = apply_retention(w, policy, now)
    assert result.polls_deleted > 0 and result.keys_rewritten > 0
    assert again.polls_deleted == 0
    with open_reader(path) as r:
        polls = r.polls()
        for p in polls:
            if p.ok:
                got = r.offsets_at_poll(p.id)
                assert got is not None
                assert got.latest == offsets_at(p.at_ms, got.layout).latest, p
        events = r.events()
    ages = [(now - p.at_ms, p.level) for p in polls]
    assert min(p.at_ms for p in polls) >= now - 5 * HOUR
    full = [a for a, lvl in ages if lvl == 0]
    minute = [a for a, lvl in ages if lvl == 1]
    hour = [a for a, lvl in ages if lvl == 2]
    assert len(full) == 60 and max(full) <= 10 * MIN
    assert 2 * 60 - 10 - 1 <= len(minute) <= 2 * 60 - 10 + 1
    assert len(hour) == 3
    # each kept minute is the minute's first successful poll
    for p in polls:
        if p.level == 1:
            assert p.ok and not any(_ok(t) for t in range(p.at_ms - p.at_ms % MIN, p.at_ms, 10_000))
    assert [e.at_ms for e in events] == [start + h * HOUR for h in range(3, 6)]


def test_a_writer_keeps_writing_decodable_rows_after_retention(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    policy = RetentionPolicy(full_ms=MIN, minute_ms=2 * MIN, hour_ms=HOUR)
    with open_writer(path) as w:
        for i in range(30):
            w.record(
                PollRecord(
                    at_ms=i * 10_000,
                    seq=i,
                    latency_ms=1,
                    ok=True,
                    offsets=offsets_at(i * 10_000, BIG),
                )
            )
        apply_retention(w, policy, 300_000)
        for i in range(30, 40):
            w.record(
                PollRecord(
                    at_ms=i * 10_000,
                    seq=i,
                    latency_ms=1,
                    ok=True,
                    offsets=offsets_at(i * 10_000, BIG),
                )
            )
    with open_reader(path) as r:
        for p in r.polls():
            got = r.offsets_at_poll(p.id)
            assert got is not None and got.latest == offsets_at(p.at_ms, BIG).latest


def test_a_layout_deleted_by_retention_can_come_back(tmp_path: Path) -> None:
    from store.rows import MetricRow

    path = tmp_path / "h.sqlite"
    policy = RetentionPolicy(full_ms=MIN, minute_ms=MIN, hour_ms=2 * MIN)
    one = (MetricRow("tablet-server 1", (("a", 1.0),)),)
    two = (MetricRow("tablet-server 1", (("a", 1.0), ("b", 2.0))),)

    def poll(at: int, layout: tuple[Slot, ...], metrics: tuple[MetricRow, ...]) -> PollRecord:
        return PollRecord(
            at_ms=at, seq=at, latency_ms=1, ok=True, offsets=offsets_at(at, layout), metrics=metrics
        )

    with open_writer(path) as w:
        w.record(poll(0, TWO, two))
        w.record(poll(HOUR, BIG, one))
        apply_retention(w, policy, HOUR + 1)  # the first poll and its layouts go
        w.record(poll(HOUR + 10_000, TWO, two))
    with open_reader(path) as r:
        (last, *_) = reversed(r.polls())
        assert r.metrics_at_poll(last.id) == two
        got = r.offsets_at_poll(last.id)
        assert got is not None and got.latest == offsets_at(HOUR + 10_000, TWO).latest


def test_polls_moved_to_a_coarser_level_are_rechained_with_its_longer_key_period(
    tmp_path: Path,
) -> None:
    from store.chain import KEY_PERIODS_MS

    path = tmp_path / "h.sqlite"
    policy = RetentionPolicy(full_ms=30 * MIN, minute_ms=3 * HOUR, hour_ms=5 * HOUR)
    start = 1_000 * HOUR
    end = start + 4 * HOUR
    with open_writer(path) as w:
        for at in range(start, end, 10_000):  # 1,440 polls, bounded
            w.record(PollRecord(at, at, 1, True, offsets=offsets_at(at, BIG)))
            if at % (10 * MIN) == 0:  # as the recorder does, every 10 minutes
                apply_retention(w, policy, at)
        apply_retention(w, policy, end)
        rows = w.connection.execute(
            "SELECT p.level, p.at_ms, o.base_poll IS NULL FROM offsets o "
            "JOIN polls p ON p.id = o.poll_id ORDER BY o.poll_id"
        ).fetchall()
    with open_reader(path) as r:
        for p in r.polls():  # every kept row still decodes to what was written
            got = r.offsets_at_poll(p.id)
            assert got is not None and got.latest == offsets_at(p.at_ms, BIG).latest
    minute_rows = [(at, key) for lvl, at, key in rows if lvl == 1]
    assert len(minute_rows) == 150  # 2.5 hours, one per minute
    # One key per hour of one-per-minute polls (not one per 10 minutes, as written).
    hours = {at // KEY_PERIODS_MS[1] for at, _ in minute_rows}
    assert [at for at, key in minute_rows if key] == sorted(
        min(at for at, _ in minute_rows if at // KEY_PERIODS_MS[1] == h) for h in hours
    )
    full_keys = [at for lvl, at, key in rows if lvl == 0 and key]
    assert all(at % (10 * MIN) == 0 for at in full_keys) and full_keys

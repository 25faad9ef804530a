"""Snapshots through the store and back: cluster-as-of(T) is the snapshot that was recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluss_proto.client import TablePath
from konsole.collect.history.rows import REDACTED, poll_record, snapshot_at
from store import open_reader, open_writer
from store.rows import EventRow
from tests._testutil.builders import T0, snap, table, tm, view


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "h.sqlite"


def record(path: Path, *snaps: object, events: dict[int, list[EventRow]] | None = None) -> None:
    with open_writer(path) as w:
        for s in snaps:
            w.record(poll_record(s, (events or {}).get(s.seq, ())))  # type: ignore[attr-defined]


def test_as_of_returns_the_recorded_view_with_offsets_and_placement(path: Path) -> None:
    v1 = view((1, 2, 3), [table("db.a", 1, [10, 20, 30]), table("db.b", 2, [0])])
    v2 = view((1, 2, 3), [table("db.a", 1, [15, 20, 31], leaders=[2, 2, 3]), table("db.b", 2, [4])])
    record(path, snap(v1, seq=1, t=T0), snap(v2, seq=2, t=T0 + 10))
    with open_reader(path) as r:
        first = snapshot_at(r, T0 + 5)
        second = snapshot_at(r, T0 + 60)
        assert snapshot_at(r, T0 - 1) is None
    assert first is not None and second is not None and first.historic
    a1 = first.snapshot.view.table("db.a")  # type: ignore[union-attr]
    a2 = second.snapshot.view.table("db.a")  # type: ignore[union-attr]
    assert [b.latest_offset for b in a1.buckets] == [10, 20, 30]
    assert [b.latest_offset for b in a2.buckets] == [15, 20, 31]
    assert [b.leader_id for b in a1.buckets] == [1, 2, 3]
    assert [b.leader_id for b in a2.buckets] == [2, 2, 3]
    assert a2.buckets == v2.table("db.a").buckets
    assert a2.info == v2.table("db.a").info
    assert second.snapshot.view.tablet_servers == v2.tablet_servers  # type: ignore[union-attr]
    assert second.snapshot.view.coordinator == v2.coordinator  # type: ignore[union-attr]
    assert (second.snapshot.seq, second.snapshot.taken_at) == (2, T0 + 10)
    assert second.snapshot.active_coordinator == "127.0.0.1:9123"


def test_a_table_exists_only_between_creation_and_drop(path: Path) -> None:
    base = table("db.keep", 1, [1])
    snaps = [
        snap(view((1, 2, 3), [base]), seq=1, t=T0),
        snap(view((1, 2, 3), [base, table("db.tmp", 7, [0, 0])]), seq=2, t=T0 + 10),
        snap(view((1, 2, 3), [base, table("db.tmp", 7, [5, 6])]), seq=3, t=T0 + 20),
        snap(view((1, 2, 3), [base]), seq=4, t=T0 + 30),
    ]
    record(path, *snaps)
    with open_reader(path) as r:
        names = {
            t: [str(x.path) for x in snapshot_at(r, T0 + t).snapshot.view.tables]  # type: ignore[union-attr]
            for t in (5, 15, 25, 35)
        }
        tmp = snapshot_at(r, T0 + 25).snapshot.view.table("db.tmp")  # type: ignore[union-attr]
    assert names == {
        5: ["db.keep"],
        15: ["db.keep", "db.tmp"],
        25: ["db.keep", "db.tmp"],
        35: ["db.keep"],
    }
    assert [b.latest_offset for b in tmp.buckets] == [5, 6]


def test_partitions_and_earliest_offsets_come_back(path: Path) -> None:
    t = table("db.p", 3, [], partitions={"2026": [1, 2], "2027": [3, None]}, earliest=[0, 1])
    v = view((1, 2, 3), [t], earliest=True)
    record(path, snap(v, seq=1, t=T0), snap(view((1, 2, 3), [t]), seq=2, t=T0 + 10))
    with open_reader(path) as r:
        past = snapshot_at(r, T0 + 10)
    assert past is not None and past.snapshot.view is not None
    got = past.snapshot.view.table("db.p")
    assert [p.name for p in got.partitions] == ["2026", "2027"]
    assert [(b.partition_name, b.latest_offset, b.earliest_offset) for b in got.buckets] == [
        ("2026", 1, 0),
        ("2026", 2, 1),
        ("2027", 3, 0),
        ("2027", None, 1),
    ]


def test_a_failed_poll_comes_back_failed_and_keeps_the_state(path: Path) -> None:
    v = view((1, 2, 3), [table("db.a", 1, [1])])
    record(
        path,
        snap(v, seq=1, t=T0),
        snap(None, seq=2, t=T0 + 10, failed="no server answered"),
        snap(v, seq=3, t=T0 + 20),
    )
    with open_reader(path) as r:
        failed = snapshot_at(r, T0 + 15)
        later = snapshot_at(r, T0 + 25)
        spans = r.tables_named("db", "a")
    assert failed is not None and not failed.snapshot.ok
    assert failed.snapshot.error == "no server answered"
    assert [e.scope for e in failed.snapshot.errors] == ["cluster"]
    assert later is not None and later.snapshot.ok
    assert [(s.table_id, s.from_ms, s.to_ms) for s in spans] == [(1, round(T0 * 1000), None)]


def test_metrics_come_back_as_server_metrics(path: Path) -> None:
    m = tm(1, disk_usage_ratio=0.5, under_replicated=2, disk_write_locked=False)
    record(path, snap(view((1, 2, 3), []), t=T0, metrics=[m]))
    with open_reader(path) as r:
        past = snapshot_at(r, T0)
        series = r.metric_series("tablet-server 1", "disk_usage_ratio")
    assert past is not None
    (got,) = past.snapshot.metrics
    assert (got.role, got.server_id, got.disk_usage_ratio) == ("tablet", "1", 0.5)
    assert (got.under_replicated, got.disk_write_locked, got.leader_count) == (2, False, None)
    assert [(p.at_ms, p.value) for p in series] == [(round(T0 * 1000), 0.5)]


def test_secret_table_properties_never_reach_the_file(path: Path) -> None:
    props = {
        "table.datalake.s3.secret-key": "SUPERSECRET1",
        "client.security.sasl.password": "SUPERSECRET2",
        "table.replication.factor": "3",
    }
    record(path, snap(view((1, 2, 3), [table("db.s", 1, [1], properties=props)]), t=T0))
    with open_reader(path) as r:
        past = snapshot_at(r, T0)
    raw = b"".join(p.read_bytes() for p in path.parent.iterdir() if p.is_file())
    assert b"SUPERSECRET" not in raw
    info = past.snapshot.view.table(TablePath("db", "s")).info  # type: ignore[union-attr]
    assert info is not None
    assert info.properties["table.datalake.s3.secret-key"] == REDACTED
    assert info.properties["table.replication.factor"] == "3"


def test_unchanged_polls_add_no_interval_rows(path: Path) -> None:
    v = view((1, 2, 3), [table("db.a", 1, [1, 2, 3])])
    record(path, *(snap(v, seq=i, t=T0 + 10 * i) for i in range(1, 30)))
    with open_reader(path) as r:
        conn = r._conn
        counts = {
            name: conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
            for name in ("polls", "servers", "tables", "placement", "offsets", "schemas")
        }
    assert counts == {
        "polls": 29,
        "servers": 4,
        "tables": 1,
        "placement": 1,
        "offsets": 29,
        "schemas": 1,
    }


def test_two_tables_alike_in_ids_but_not_in_buckets_keep_their_own_info(tmp_path: Path) -> None:
    """Two clusters (two files) may each hold a db.a with id 1 and the same times: the rows
    recorded for one must not be the other's (a process-wide conversion cache once mixed them)."""
    three = view((1, 2, 3), [table("db.a", 1, [10, 20, 30])])
    one = view((1, 2, 3), [table("db.a", 1, [10])])
    assert three.table("db.a").info != one.table("db.a").info
    for name, v, buckets in (("three", three, 3), ("one", one, 1)):
        path = tmp_path / f"{name}.sqlite"
        record(path, snap(v, seq=1, t=T0))
        with open_reader(path) as r:
            back = snapshot_at(r, T0 + 1)
        assert back is not None and back.snapshot.view is not None
        info = back.snapshot.view.table("db.a").info
        assert info is not None and info.bucket_count == buckets

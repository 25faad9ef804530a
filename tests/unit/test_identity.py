"""A cluster's identity and the rule for "the same cluster" (pure, table-driven)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from konsole.model.identity import MAX_TABLES, ClusterIdentity, identity_of, judge
from tests._testutil.builders import T0, snap, table, tm, view

COORD = "coordinator 0 127.0.0.1:9123"
TS = tuple(f"tablet {i} 127.0.0.1:{9200 + i}" for i in range(3))
HELD = ClusterIdentity(
    cluster_id="fluss", run_id="run-a", servers=(COORD, *TS), tables=((1, 100), (2, 200))
)


def test_a_successful_poll_shows_servers_tables_cluster_id_and_run_id() -> None:
    s = snap(
        view((0, 1, 2), [table("db.a", 7, [1]), table("db.b", 3, [1])]),
        t=T0,
        metrics=[tm(0, cluster_id="fluss"), tm(1, cluster_id="fluss"), tm(2)],
    )
    found = identity_of(s, run_id="run-a")
    assert found is not None
    assert found.cluster_id == "fluss" and found.run_id == "run-a"
    assert found.servers == tuple(sorted((COORD, *TS)))
    # Table ids with their creation times (the builder creates table N at 1.7e12 + N).
    assert found.tables == ((3, 1_700_000_000_003), (7, 1_700_000_000_007))


def test_a_failed_poll_shows_no_identity() -> None:
    assert identity_of(snap(None, failed="refused")) is None


def test_two_cluster_ids_in_one_poll_leave_it_unknown() -> None:
    s = snap(view(), metrics=[tm(0, cluster_id="a"), tm(1, cluster_id="b")])
    found = identity_of(s)
    assert found is not None and found.cluster_id is None


def test_an_identity_keeps_its_lowest_table_ids() -> None:
    tables = [table(f"db.t{i}", i, [1]) for i in range(MAX_TABLES + 5, 0, -1)]
    found = identity_of(snap(view((0,), tables)))
    assert found is not None and [t for t, _ in found.tables] == list(range(1, MAX_TABLES + 1))


@pytest.mark.parametrize(
    ("seen", "same", "reason"),
    [
        (HELD, True, ""),
        # A rolling restart: one server gone for a while, the others still there.
        (replace(HELD, servers=(COORD, TS[0], TS[2])), True, ""),
        # A server added; a table created.
        (replace(HELD, servers=(COORD, *TS, "tablet 3 127.0.0.1:9203")), True, ""),
        (replace(HELD, tables=((1, 100), (2, 200), (3, 300))), True, ""),
        # Unknown parts prove nothing (no metrics, not a local cluster, no tables).
        (replace(HELD, cluster_id=None, run_id=None, tables=()), True, ""),
        (ClusterIdentity(servers=(COORD,)), True, ""),
        (replace(HELD, run_id="run-b"), False, "another local cluster run"),
        (replace(HELD, cluster_id="other"), False, "another cluster id"),
        (replace(HELD, tables=((1, 999),)), False, "table id 1"),
        (
            replace(
                HELD,
                servers=("coordinator 0 127.0.0.1:7000", "tablet 0 127.0.0.1:7001"),
                tables=((3, 300),),
            ),
            False,
            "no server in common",
        ),
    ],
)
def test_what_counts_as_the_same_cluster(seen: ClusterIdentity, same: bool, reason: str) -> None:
    verdict = judge(HELD, seen)
    assert verdict.same is same
    assert verdict.reason.startswith(reason)
    assert (verdict.reason == "") is same  # a reason exactly when it is another cluster


def test_the_same_cluster_keeps_every_part_known_before() -> None:
    seen = ClusterIdentity(servers=(COORD, TS[0]), tables=((3, 300),))
    verdict = judge(HELD, seen)
    assert verdict.same
    assert verdict.identity.run_id == "run-a" and verdict.identity.cluster_id == "fluss"
    assert verdict.identity.servers == (COORD, TS[0])  # the newest server list
    assert verdict.identity.tables == ((1, 100), (2, 200), (3, 300))


def test_no_identity_held_is_never_the_same_cluster() -> None:
    assert not judge(None, HELD).same
    legacy = judge(ClusterIdentity(), HELD)
    assert not legacy.same and "without the cluster's identity" in legacy.reason


def test_json_round_trip_and_garbage_reads_as_unknown() -> None:
    assert ClusterIdentity.from_json(HELD.to_json()) == HELD
    for text in ("", "[]", "{", '{"tables": [[1]]}', '{"tables": 3}'):
        assert not ClusterIdentity.from_json(text).known
    assert "local run run-a" in HELD.summary() and "3 tablet server(s)" in HELD.summary()
    assert "unknown" in ClusterIdentity().summary()


def test_servers_all_replaced_with_a_table_in_common_is_the_same_cluster_changed() -> None:
    # An upgrade onto new ports: no server in common, but table 1 created at 100 is there.
    moved = ("coordinator 0 127.0.0.1:7000", "tablet 0 127.0.0.1:7001")
    verdict = judge(HELD, replace(HELD, servers=moved, tables=((1, 100),)))
    assert verdict.same and verdict.reason == ""
    assert verdict.note.startswith("the same cluster") and "servers changed" in verdict.note
    assert verdict.identity.servers == moved
    assert judge(HELD, HELD).note == ""

"""Snapshots: failed polls are snapshots, every per-item error is in one place."""

from __future__ import annotations

import dataclasses

import pytest

from fluss_proto.errors import FlussError
from fluss_proto.model import GatherError
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole, bucket_name
from tests._testutil.builders import metrics_error, probe, snap, table, tm, view


def test_failed_poll_is_a_snapshot_that_says_so() -> None:
    s = snap(
        None,
        failed="none of the bootstrap servers answered",
        failures=3,
        coords=probe("unreachable"),
    )
    assert (s.ok, s.view, s.consecutive_failures) == (False, None, 3)
    assert s.error == "none of the bootstrap servers answered"
    assert [(e.scope, e.source) for e in s.errors] == [
        ("cluster", "poll"),
        ("coordinator", "probe"),
    ]
    assert s.active_coordinator is None


def test_assemble_collects_every_per_item_error() -> None:
    v = view(errors=[GatherError("bucket", "db.t#0", "FETCH_LOG", FlussError("timed out"))])
    s = ClusterSnapshot.assemble(
        seq=2,
        taken_at=5.0,
        latency_s=0.2,
        view=v,
        coordinators=probe("active", "unreachable"),
        health_error="GET_CLUSTER_HEALTH timed out",
        metrics=(tm(0),),
        metrics_errors=(metrics_error(1),),
    )
    assert s.ok and s.error is None
    assert [(e.scope, e.subject, e.source) for e in s.errors] == [
        ("bucket", "db.t#0", "FETCH_LOG"),
        ("coordinator", "127.0.0.1:9124", "probe"),
        ("metrics", "tablet-server 1", "metrics"),
        ("health", "cluster", "GET_CLUSTER_HEALTH"),
    ]
    assert s.tablet_metrics.keys() == {"0"}


@pytest.mark.parametrize(
    ("coords", "coordinator", "active", "standbys"),
    [
        (probe("active", "standby"), True, "127.0.0.1:9123", ("127.0.0.1:9124",)),
        (probe("standby", "active"), True, "127.0.0.1:9124", ("127.0.0.1:9123",)),
        (probe("unreachable", "standby"), True, None, ("127.0.0.1:9124",)),
        ((), True, "127.0.0.1:9123", ()),  # nothing probed: metadata's coordinator
        ((), False, None, ()),
    ],
)
def test_active_coordinator(
    coords: tuple, coordinator: bool, active: str | None, standbys: tuple[str, ...]
) -> None:
    s = snap(view(coordinator=coordinator), coords=coords)
    assert s.active_coordinator == active
    assert s.standby_coordinators == standbys


def test_snapshot_is_immutable() -> None:
    s = snap(view())
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.ok = False  # type: ignore[misc]
    assert CoordinatorRole("standby") is CoordinatorRole.STANDBY


def test_bucket_names() -> None:
    t = table("db.t", 7, [(0, (0,), 1)])
    p = table("db.p", 8, partitions={"2024-06-01": [(0, (0,), 1)]})
    v = view(tables=[t, p])
    assert bucket_name(v, t.buckets[0]) == "db.t#0"
    assert bucket_name(v, p.buckets[0]) == "db.p[2024-06-01]#0"
    assert bucket_name(None, t.buckets[0]) == "table-7#0"

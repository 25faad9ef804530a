"""The rolling-upgrade gate over snapshots: every condition both ways, and one judge (the
gate's health verdict is the check's on the same poll)."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest

from fluss_proto.model import HealthStatus, RebalanceProgress, RebalanceStatus
from konsole.errors import ExitCode
from konsole.model.capacity import CapacityPart, ConfigSource, ServerCapacity, WriteLimits
from konsole.model.check import Thresholds, assess
from konsole.model.health import HealthRules
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.upgrade_gate import CONDITIONS, GateVerdict, judge_gate
from tests._testutil.builders import (
    all_metrics,
    health,
    metrics_error,
    probe,
    snap,
    table,
    tm,
    view,
)
from tests._testutil.judging import judged

RF3 = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
#: A single-replica table led by server 1: at min ISR for good.
RF1 = table("db.one", 2, [(1, (1,), 5)], properties={"table.replication.factor": "1"})
OK_FIELDS: dict[str, Any] = {
    "disk_usage_ratio": 0.2,
    "disk_write_locked": False,
    "under_replicated": 0,
    "under_min_isr": 0,
    "at_min_isr": 0,
}


def healthy(**changes: Any) -> ClusterSnapshot:
    tables = changes.pop("tables", [RF3])
    return snap(view(tables=tables), metrics=all_metrics(**OK_FIELDS), **changes)


def with_metrics(*metrics: Any, tables: Any = (RF3,)) -> ClusterSnapshot:
    return snap(view(tables=list(tables)), metrics=list(metrics))


def ok(server_id: int, **fields: Any) -> Any:
    return tm(server_id, **{**OK_FIELDS, **fields})


def gate(s: ClusterSnapshot, **kw: Any) -> GateVerdict:
    poll = judged(s, HealthRules())
    return judge_gate(poll, assess(poll, thresholds=Thresholds()), **kw)


def conditions(v: GateVerdict) -> set[str]:
    return {w.condition for w in v.waits}


def test_a_healthy_cluster_opens_the_gate_with_exit_0() -> None:
    v = gate(healthy())
    assert v.safe, v.summary()
    assert v.status is ExitCode.OK
    assert v.summary().startswith("SAFE: the next server")
    assert gate(healthy(), server=2).summary().startswith("SAFE: tablet-server 2")


WAITING: list[tuple[str, ClusterSnapshot, dict[str, Any], str]] = [
    # (condition that holds the gate, snapshot, judge_gate keywords, text in its reason)
    ("health", snap(None, failed="connection refused"), {}, "CRITICAL"),
    ("servers", snap(None, failed="connection refused"), {}, "the poll failed"),
    (
        "servers",
        snap(
            view(tables=[RF3]),
            metrics=all_metrics(**OK_FIELDS),
            coords=probe("active", "unreachable"),
        ),
        {},
        "not answering",
    ),
    (
        "servers",
        snap(
            view(tables=[RF3]),
            metrics=all_metrics((0, 1), **OK_FIELDS),
            metrics_errors=[metrics_error(2)],
        ),
        {},
        "metrics timeout",
    ),
    ("servers", healthy(), {"server": 7}, "not alive"),
    (
        "offline",
        with_metrics(ok(0), ok(1), tables=[table("db.x", 3, [(5, (5,), 1)])]),
        {},
        "without a leader",
    ),
    (
        "under-replicated",
        snap(view((0, 1), tables=[RF3]), metrics=all_metrics((0, 1), **OK_FIELDS)),
        {},
        "not alive, 3 replica(s)",
    ),
    (
        "under-replicated",
        with_metrics(ok(0), ok(1, under_replicated=2), ok(2)),
        {},
        "leads 2 under-replicated",
    ),
    (
        "under-replicated",
        healthy(cluster_health=health(HealthStatus.GREEN, replicas=9, in_sync=8)),
        {},
        "1 replica(s) not in sync",
    ),
    ("min-isr", with_metrics(ok(0, under_min_isr=1), ok(1), ok(2)), {}, "under min ISR"),
    ("min-isr", with_metrics(ok(0, at_min_isr=1), ok(1), ok(2)), {}, "at min ISR"),
    ("min-isr", with_metrics(ok(0), ok(1), ok(2, at_min_isr=3)), {"server": 1}, "at min ISR"),
    (
        "rebalance",
        healthy(),
        {"rebalance": RebalanceProgress("r-1", RebalanceStatus.REBALANCING)},
        "rebalance r-1 rebalancing",
    ),
    (
        "rebalance",
        healthy(),
        {"rebalance": RebalanceProgress("r-2", RebalanceStatus.NOT_STARTED)},
        "not_started",
    ),
    (
        "rebalance",
        healthy(),
        {"rebalance_unknown": "no answer within 5 s"},
        "not known whether one runs: no answer within 5 s",
    ),
]


@pytest.mark.parametrize(
    ("condition", "s", "kw", "reason"),
    WAITING,
    ids=[f"{c}-{i}" for i, (c, *_rest) in enumerate(WAITING)],
)
def test_each_condition_holds_the_gate(
    condition: str, s: ClusterSnapshot, kw: dict[str, Any], reason: str
) -> None:
    v = gate(s, **kw)
    assert not v.safe
    assert condition in conditions(v), v.summary()
    assert any(reason in w.reason for w in v.waits if w.condition == condition), v.summary()
    assert v.status is not ExitCode.OK
    assert v.summary().startswith("WAIT: ")


def test_every_condition_is_proven_to_hold_the_gate() -> None:
    assert {c for c, *_rest in WAITING} == set(CONDITIONS)


PASSING: list[tuple[str, ClusterSnapshot, dict[str, Any]]] = [
    # (condition that must NOT hold the gate, snapshot, keywords): the other way
    ("rebalance", healthy(), {"rebalance": RebalanceProgress(None, None)}),
    ("rebalance", healthy(), {"rebalance": RebalanceProgress("r-3", RebalanceStatus.COMPLETED)}),
    ("rebalance", healthy(), {"rebalance": RebalanceProgress("r-4", RebalanceStatus.CANCELED)}),
    # a single-replica bucket sits at min ISR for good: its leader's count does not hold it
    ("min-isr", snap(view(tables=[RF3, RF1]), metrics=[ok(0), ok(1, at_min_isr=1), ok(2)]), {}),
    # --server 1: server 2 leads no bucket with a replica on 1 here
    (
        "min-isr",
        with_metrics(
            ok(0), ok(1), ok(2, at_min_isr=1), tables=[table("db.y", 4, [(2, (2, 0), 1)])]
        ),
        {"server": 1},
    ),
    ("under-replicated", healthy(cluster_health=health(HealthStatus.GREEN)), {}),
    (
        "servers",
        snap(
            view(tables=[RF3]), metrics=all_metrics(**OK_FIELDS), coords=probe("active", "standby")
        ),
        {},
    ),
]


@pytest.mark.parametrize(
    ("condition", "s", "kw"), PASSING, ids=[f"{c}-{i}" for i, (c, *_r) in enumerate(PASSING)]
)
def test_conditions_that_do_not_hold_let_the_gate_open(
    condition: str, s: ClusterSnapshot, kw: dict[str, Any]
) -> None:
    v = gate(s, **kw)
    assert condition not in conditions(v), v.summary()
    assert v.safe, v.summary()


@pytest.mark.parametrize("s", [s for _c, s, _kw, _r in WAITING] + [healthy()])
def test_the_gates_health_verdict_is_the_checks_on_the_same_poll(s: ClusterSnapshot) -> None:
    """One judge: the gate opens only on the check's OK, and a check that is not OK is the
    gate's exit code."""
    poll = judged(s, HealthRules())
    result = assess(poll, thresholds=Thresholds())
    v = judge_gate(poll, result)
    assert v.check is result
    assert ("health" in conditions(v)) == (result.status is not ExitCode.OK)
    if result.status is not ExitCode.OK:
        assert v.status is result.status
    elif not v.safe:
        assert v.status is ExitCode.WARNING


def test_the_verdict_as_json_names_each_wait() -> None:
    v = gate(with_metrics(ok(0, under_min_isr=2), ok(1), ok(2)), server=1)
    doc = v.as_dict()
    assert doc["safe"] is False and doc["server"] == 1
    assert doc["status"] in ("WARNING", "CRITICAL")
    waits = doc["waits"]
    assert isinstance(waits, list)
    assert {w["condition"] for w in waits} >= {"min-isr"}


def _low_room(alive: tuple[int, ...] = (0, 1, 2)) -> ClusterSnapshot:
    """Tablet server 0's disk 78% used against its 85% write limit: the check warns
    (disk_headroom, YELLOW), as it does for a data dir on a 75%-full machine disk."""
    limits = WriteLimits(0.85, 0.80, ConfigSource.DEFAULT, ConfigSource.DEFAULT)
    s = snap(
        view(alive, tables=[RF3]),
        metrics=[ok(i, disk_usage_ratio=0.78 if i == 0 else 0.2) for i in alive],
    )
    facts = ServerCapacity("0", limits, None, (), None, s.taken_at)
    return replace(s, capacity=CapacityPart(s.taken_at, MappingProxyType({"0": facts})))


def test_room_on_a_disk_is_said_not_waited_on() -> None:
    """A rolling upgrade on a machine whose disk was 75% used waited for ever: the check's
    disk-headroom warning held the gate, though a restart neither takes nor frees space."""
    v = gate(_low_room())
    assert v.check.status is ExitCode.WARNING
    assert [f.rule for f in v.check.findings] == ["disk_headroom"]
    assert v.safe and v.status is ExitCode.OK, v.summary()
    assert "check says WARNING, room on a disk only" in v.summary()
    # ... but it never hides a reason to wait that comes with it
    assert {"health", "under-replicated"} <= conditions(gate(_low_room((0, 1))))

"""konsole.model.actions: plans, safety rails, input checks and the audit event (no I/O)."""

from __future__ import annotations

import pytest

from fluss_proto.model import (
    BucketRebalance,
    ConfigEntry,
    HealthStatus,
    RebalanceProgress,
    RebalanceStatus,
    TableRebalance,
)
from konsole.errors import ActionInputError, ExitCode
from konsole.model.actions import (
    Outcome,
    audit_event,
    parse_assignments,
    parse_principal,
    parse_resource,
    plan_config,
    plan_drain,
    plan_partition,
    plan_rebalance,
    plan_table_set,
    plan_tag,
    progress_counts,
)
from konsole.model.events import EventKind, Severity
from konsole.model.placement import placement
from tests._testutil.builders import table, view

GOALS = ["REPLICA_DISTRIBUTION", "LEADER_DISTRIBUTION"]


def four(rf: int = 3):
    """Four tablet servers (0..3); one table of replication factor ``rf``, four buckets."""
    buckets = [(b % 4, tuple((b + i) % 4 for i in range(rf)), 10) for b in range(4)]
    return view((0, 1, 2, 3), [table("db.t", 1, buckets)])


def drain(v=None, *, health=HealthStatus.GREEN, running=None, server=3):
    view_ = v or four()
    return plan_drain(view_, placement(view_), server, health=health, running=running, goals=GOALS)


def test_drain_plan_says_what_moves_and_sends_tag_then_rebalance() -> None:
    plan = drain()
    assert plan.sends == ("ADD_SERVER_TAG", "REBALANCE", "LIST_REBALANCE_PROGRESS")
    changes = {c.what: (c.before, c.after) for c in plan.changes}
    assert changes["replicas on server 3"] == ("3", "0")
    assert changes["leaders on server 3"] == ("1", "0")
    assert changes["tag of server 3"] == (None, "PERMANENT_OFFLINE")
    assert plan.refusals == () and plan.blocking(force=False) == ()
    text = "\n".join(plan.lines())
    assert "plan: server drain 3" in text and "replicas on server 3: '3' -> '0'" in text


@pytest.mark.parametrize(
    ("health", "running", "reason"),
    [
        (HealthStatus.RED, None, "health is RED"),
        (HealthStatus.GREEN, "r-1", "rebalance r-1 is running"),
    ],
)
def test_drain_refused_while_red_or_rebalancing_unless_forced(health, running, reason) -> None:
    plan = drain(health=health, running=running)
    [refusal] = plan.refusals
    assert reason in refusal.reason and refusal.overridable
    assert plan.blocking(force=False) == (refusal,)
    assert plan.blocking(force=True) == ()


def test_yellow_health_does_not_refuse() -> None:
    assert drain(health=HealthStatus.YELLOW).refusals == ()


def test_drain_leaving_fewer_servers_than_replication_factor_is_refused_even_forced() -> None:
    v = view((1, 2, 3), [table("db.t", 1, [(1, (1, 2, 3), 0)])])
    plan = drain(v)
    [refusal] = plan.refusals
    assert "leaves 2 alive tablet server(s), fewer than the highest replication factor (3)" in (
        refusal.reason
    )
    assert not refusal.overridable and plan.blocking(force=True) == (refusal,)


def test_unknown_server_is_bad_input() -> None:
    with pytest.raises(ActionInputError, match="unknown tablet server 9") as info:
        drain(server=9)
    assert info.value.exit_code == ExitCode.DATA_ERROR == 65
    with pytest.raises(ActionInputError):
        plan_tag(four(), 9, "TEMPORARY_OFFLINE", remove=False)


def test_tag_and_untag_plans() -> None:
    tag = plan_tag(four(), 2, "TEMPORARY_OFFLINE", remove=False)
    untag = plan_tag(four(), 2, "TEMPORARY_OFFLINE", remove=True)
    assert tag.sends == ("ADD_SERVER_TAG",) and untag.sends == ("REMOVE_SERVER_TAG",)
    assert (tag.changes[0].before, tag.changes[0].after) == (None, "TEMPORARY_OFFLINE")
    assert (untag.changes[0].before, untag.changes[0].after) == ("TEMPORARY_OFFLINE", None)


def test_rebalance_plan_has_the_busy_rails_and_says_the_server_plans() -> None:
    plan = plan_rebalance(placement(four()), health=HealthStatus.RED, running="x", goals=GOALS)
    assert len(plan.refusals) == 2
    assert any("no dry run" in n for n in plan.notes)
    assert "replicas per server now: 0=3, 1=3, 2=3, 3=3" in plan.notes


CONFIGS = [
    ConfigEntry("kv.rate", "100mb", "DYNAMIC_SERVER_CONFIG"),
    ConfigEntry("bind.listeners", "FLUSS://x", "INITIAL_SERVER_CONFIG"),
]


def test_config_set_keeps_old_value_and_says_how_to_undo() -> None:
    plan = plan_config(CONFIGS, "kv.rate", "200mb")
    assert plan.changes[0].before == "100mb" and plan.changes[0].after == "200mb"
    assert "undo: konsole admin config set kv.rate 100mb" in plan.notes
    new = plan_config(CONFIGS, "other.key", "1")
    assert new.changes[0].before is None
    assert "undo: konsole admin config delete other.key" in new.notes


def test_config_delete_needs_a_dynamic_value() -> None:
    plan = plan_config(CONFIGS, "kv.rate", None, delete=True)
    assert plan.params["op"] == "DELETE" and plan.changes[0].after is None
    with pytest.raises(ActionInputError, match="no dynamic value"):
        plan_config(CONFIGS, "bind.listeners", None, delete=True)
    with pytest.raises(ActionInputError, match="not a config key"):
        plan_config(CONFIGS, "a key", "1")


def test_partition_plans_check_the_table_and_its_keys() -> None:
    v = view((0, 1, 2), [table("db.p", 2, partitions={"eu": [5]}), table("db.t", 1, [5])])
    create = plan_partition(v, "db.p", "p=us", drop=False)
    assert create.sends == ("CREATE_PARTITION",) and create.params["spec"] == {"p": "us"}
    assert plan_partition(v, "db.p", "p=eu", drop=True).sends == ("DROP_PARTITION",)
    for table_name, spec, drop, message in [
        ("db.t", "p=x", False, "not partitioned"),
        ("db.none", "p=x", False, "unknown table"),
        ("db.p", "q=x", False, "must name p"),
        ("db.p", "p=eu", False, "already has partition eu"),
        ("db.p", "p=zz", True, "has no partition zz"),
        ("db.p", "p", False, "KEY=VALUE"),
    ]:
        with pytest.raises(ActionInputError, match=message):
            plan_partition(v, table_name, spec, drop=drop)


def test_table_set_shows_the_current_value() -> None:
    v = view((0, 1, 2), [table("db.t", 1, [5], properties={"table.log.ttl": "7d"})])
    plan = plan_table_set(v, "db.t", "table.log.ttl=1d")
    assert (plan.changes[0].before, plan.changes[0].after) == ("7d", "1d")
    assert "undo: konsole admin table set db.t table.log.ttl=7d" in plan.notes
    assert plan_table_set(v, "db.t", "table.statistics.columns=a,b").params["value"] == "a,b"
    for bad in ("a", "=b", "a="):
        with pytest.raises(ActionInputError, match="KEY=VALUE"):
            plan_table_set(v, "db.t", bad)


def test_acl_parsers() -> None:
    assert parse_principal("User:alice") == ("User", "alice")
    assert parse_resource("cluster") == (2, "fluss-cluster")
    assert parse_resource("database:db") == (3, "db")
    assert parse_resource("table:db.t") == (4, "db.t")
    for bad in ("Robot:r2", "alice", "User:"):
        with pytest.raises(ActionInputError):
            parse_principal(bad)
    for bad in ("topic:x", "table:"):
        with pytest.raises(ActionInputError):
            parse_resource(bad)
    assert parse_assignments("a=1, b = 2", "x") == {"a": "1", "b": "2"}


def test_audit_event_carries_who_what_result_and_error() -> None:
    plan = plan_config(CONFIGS, "kv.rate", "200mb")
    event = audit_event(plan, Outcome.FAILED, who="ops@host", at=12.5, error="CONFIG (64): no")
    assert event.kind is EventKind.OPERATOR and event.severity is Severity.CRITICAL
    assert event.subject.name == "config kv.rate" and event.time == 12.5
    assert event.message == "config set kv.rate: failed by ops@host: CONFIG (64): no"
    details = dict(event.details)
    assert details["who"] == "ops@host" and details["outcome"] == "failed"
    assert details["changes"] == [{"what": "kv.rate", "before": "100mb", "after": "200mb"}]
    assert details["params"] == {"key": "kv.rate", "op": "SET", "value": "200mb"}
    refused = audit_event(drain(health=HealthStatus.RED), Outcome.REFUSED, who="o", at=0)
    assert refused.severity is Severity.WARNING and refused.subject.name == "tablet-server 3"
    assert refused.details["refusals"] == ["cluster health is RED"]


def test_progress_counts() -> None:
    def bucket(b: int, status: RebalanceStatus) -> BucketRebalance:
        return BucketRebalance(None, b, 3, 0, (3, 1), (0, 1), status)

    done = RebalanceStatus.COMPLETED
    progress = RebalanceProgress(
        "r",
        RebalanceStatus.REBALANCING,
        (TableRebalance(1, (bucket(0, done), bucket(1, RebalanceStatus.REBALANCING))),),
    )
    assert progress_counts(progress) == (1, 2, "REBALANCING")
    assert progress_counts(RebalanceProgress(None, None)) == (0, 0, "NONE")

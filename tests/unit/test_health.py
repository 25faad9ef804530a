"""Health: one case per rule, the worst finding wins, unknown data is never GREEN."""

from __future__ import annotations

import pytest

from fluss_proto.errors import FlussError
from fluss_proto.model import GatherError, HealthStatus
from konsole.model.health import Finding, Health, HealthRules, evaluate, worst
from konsole.model.snapshot import ClusterSnapshot
from tests._testutil.builders import (
    all_metrics,
    health,
    kv,
    metrics_error,
    probe,
    snap,
    table,
    tm,
    view,
)
from tests._testutil.judging import health_of

G, Y, R, U = HealthStatus.GREEN, HealthStatus.YELLOW, HealthStatus.RED, HealthStatus.UNKNOWN

T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
HEALTHY = snap(view(tables=[T]), metrics=all_metrics())


def findings(
    s: ClusterSnapshot | None, rules: HealthRules | None = None
) -> set[tuple[str, str, str]]:
    return {(f.status.name, f.rule, f.subject) for f in judged_or_none(s, rules).findings}


def judged_or_none(s: ClusterSnapshot | None, rules: HealthRules | None = None) -> Health:
    """The judge's health of ``s``; before any poll, the rules' own answer (no data)."""
    return evaluate(None, rules, facts=None) if s is None else health_of(s, rules)


CASES: list[tuple[str, ClusterSnapshot | None, HealthStatus, set[tuple[str, str, str]]]] = [
    ("healthy", HEALTHY, G, set()),
    ("no poll yet", None, U, {("UNKNOWN", "no_data", "cluster")}),
    (
        "unreachable",
        snap(None, failed="could not connect"),
        R,
        {("RED", "unreachable", "cluster")},
    ),
    (
        "no active coordinator",
        snap(view(tables=[T]), coords=probe("unreachable", "standby"), metrics=all_metrics()),
        R,
        {("RED", "coordinator", "cluster")},
    ),
    (
        "standby unreachable",
        snap(view(tables=[T]), coords=probe("active", "unreachable"), metrics=all_metrics()),
        Y,
        {("YELLOW", "standby", "coordinator 127.0.0.1:9124")},
    ),
    (
        "server listed but silent",
        snap(view(tables=[T], server_errors={1: "refused"}), metrics=all_metrics()),
        Y,
        {("YELLOW", "server_unreachable", "tablet-server 1")},
    ),
    (
        "leaderless bucket (derived, 0.9.1)",
        snap(
            view(tables=[table("db.t", 1, [(None, (0, 1), 1), (0, (0, 1), 1)])]),
            metrics=all_metrics(),
        ),
        R,
        {("RED", "leaders", "table db.t")},
    ),
    (
        "server gone: replicas offline, leaders on it count as inactive",
        snap(view((0, 1), tables=[T]), metrics=all_metrics((0, 1))),
        R,
        {("RED", "leaders", "table db.t"), ("YELLOW", "replicas_offline", "tablet-server 2")},
    ),
    (
        "server health YELLOW (1.0)",
        snap(view(tables=[T]), cluster_health=health(Y, in_sync=7), metrics=all_metrics()),
        Y,
        {("YELLOW", "cluster_health", "cluster")},
    ),
    (
        "server health RED (1.0)",
        snap(view(tables=[T]), cluster_health=health(R), metrics=all_metrics()),
        R,
        {("RED", "cluster_health", "cluster")},
    ),
    (
        "server health UNKNOWN (1.0)",
        snap(view(tables=[T]), cluster_health=health(U), metrics=all_metrics()),
        U,
        {("UNKNOWN", "cluster_health", "cluster")},
    ),
    (
        "under-replicated per metrics (derived)",
        snap(view(tables=[T]), metrics=[tm(0, under_replicated=2), tm(1), tm(2)]),
        Y,
        {("YELLOW", "under_replicated", "tablet-server 0")},
    ),
    (
        "under min ISR",
        snap(view(tables=[T]), metrics=[tm(0, under_min_isr=1), tm(1), tm(2)]),
        Y,
        {("YELLOW", "under_min_isr", "tablet-server 0")},
    ),
    (
        "disk write locked",
        snap(
            view(tables=[T]),
            metrics=[tm(0, disk_write_locked=True, disk_usage_ratio=0.93), tm(1), tm(2)],
        ),
        R,
        {("RED", "disk_write_locked", "tablet-server 0")},
    ),
    (
        "disk usage over warn",
        snap(view(tables=[T]), metrics=[tm(0, disk_usage_ratio=0.82), tm(1), tm(2)]),
        Y,
        {("YELLOW", "disk_usage", "tablet-server 0")},
    ),
    (
        "disk usage over critical",
        snap(view(tables=[T]), metrics=[tm(0, disk_usage_ratio=0.95), tm(1), tm(2)]),
        R,
        {("RED", "disk_usage", "tablet-server 0")},
    ),
    (
        "kv backpressure",
        snap(
            view(tables=[T]),
            metrics=[tm(0, tables=[kv("db.t", pressure=0.9)]), tm(1), tm(2)],
        ),
        Y,
        {("YELLOW", "kv_backpressure", "table db.t")},
    ),
    (
        "heap",
        snap(view(tables=[T]), metrics=[tm(0, heap_used=95.0, heap_max=100.0), tm(1), tm(2)]),
        Y,
        {("YELLOW", "heap", "tablet-server 0")},
    ),
    (
        "metrics unknown is not GREEN",
        snap(view(tables=[T]), metrics=all_metrics((0, 1)), metrics_errors=[metrics_error(2)]),
        U,
        {("UNKNOWN", "metrics_unknown", "tablet-server 2")},
    ),
    (
        "an endpoint that names no server",
        snap(view(tables=[T]), metrics=all_metrics(), metrics_errors=[metrics_error(None)]),
        U,
        {("UNKNOWN", "metrics_unknown", "metrics http://127.0.0.1:9300/metrics")},
    ),
    (
        "items that could not be read",
        snap(
            view(
                tables=[T],
                errors=[GatherError("bucket", "db.t#1", "FETCH_LOG", FlussError("timed out"))],
            ),
            metrics=all_metrics(),
        ),
        U,
        {("UNKNOWN", "read_errors", "cluster")},
    ),
]


@pytest.mark.parametrize(
    ("snapshot", "status", "expected"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_rules(
    snapshot: ClusterSnapshot | None, status: HealthStatus, expected: set[tuple[str, str, str]]
) -> None:
    result = judged_or_none(snapshot)
    assert result.status is status
    assert findings(snapshot) == expected
    for finding in result.findings:
        assert finding.subject and finding.reason
        assert str(finding).startswith(finding.subject)


@pytest.mark.parametrize(
    ("rules", "ratio", "status"),
    [
        (HealthRules(), 0.79, G),
        (HealthRules(disk_usage_warn=0.5), 0.6, Y),
        (HealthRules(disk_usage_warn=0.5, disk_usage_critical=0.55), 0.6, R),
    ],
)
def test_thresholds_come_from_the_rules(
    rules: HealthRules, ratio: float, status: HealthStatus
) -> None:
    s = snap(view(tables=[T]), metrics=[tm(0, disk_usage_ratio=ratio), tm(1), tm(2)])
    assert health_of(s, rules).status is status


def test_metrics_can_be_optional() -> None:
    s = snap(view(tables=[T]))
    assert health_of(s).status is U
    assert health_of(s, HealthRules(require_metrics=False)).status is G


def test_source_says_where_the_replication_view_came_from() -> None:
    assert health_of(HEALTHY).source == "derived"
    with_server = snap(view(tables=[T]), cluster_health=health(G), metrics=all_metrics())
    assert health_of(with_server).source == "server"
    assert health_of(with_server).status is G


def test_many_leaderless_tables_are_capped() -> None:
    tables = [table(f"db.t{i:02}", i, [(None, (0,), 0)]) for i in range(25)]
    result = health_of(snap(view(tables=tables), metrics=all_metrics()))
    leaders = [f for f in result.findings if f.rule == "leaders"]
    assert len(leaders) == 11
    assert (
        leaders[-1].subject == "cluster"
        and "15 more buckets in 15 more tables" in leaders[-1].reason
    )


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [((), G), ((G, U), U), ((U, Y), Y), ((Y, R, U), R)],
)
def test_worst(statuses: tuple[HealthStatus, ...], expected: HealthStatus) -> None:
    assert worst(statuses) is expected


def test_as_dict_is_json_ready() -> None:
    result = Health(
        Y, (Finding(Y, "heap", "tablet-server 0", "JVM heap 95% used"),), "derived", 5.0
    )
    assert result.as_dict() == {
        "status": "YELLOW",
        "source": "derived",
        "time": 5.0,
        "findings": [
            {
                "status": "YELLOW",
                "rule": "heap",
                "subject": "tablet-server 0",
                "reason": "JVM heap 95% used",
            }
        ],
    }
    assert result.reasons == ("tablet-server 0: JVM heap 95% used",)

"""The 1.0 readiness report over snapshots: the line each server speaks (told by its API
keys), skew, every upgrade-notes item both ways, and the steps with their costs."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from fluss_proto.model import (
    AclBinding,
    AclListing,
    ApiVersionRange,
    ClusterView,
    ConfigEntry,
    OperationType,
    PermissionType,
    ResourceType,
    ServerInfo,
)
from konsole.errors import ExitCode
from konsole.model.server_lines import line_of
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.upgrade_check import ITEMS, UpgradeReport, report
from tests._testutil.builders import probe, snap, table, view
from tests._testutil.judging import judged

RF3 = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
RF1 = table("db.one", 2, [(1, (1,), 5)], properties={"table.replication.factor": "1"})
KEYS_09 = range(1000, 1052)  # what a 0.9.1 server advertises: no key only 1.0 serves (1060-1064)
KEYS_10 = range(1000, 1065)


def speaking(info: ServerInfo, keys: range | None) -> ServerInfo:
    apis = () if keys is None else tuple(ApiVersionRange(k, 0, 1) for k in keys)
    return dataclasses.replace(info, api_versions=apis)


def cluster(
    lines: dict[int, range | None], coordinator: range = KEYS_09, tables: Any = (RF3,)
) -> ClusterSnapshot:
    v: ClusterView = view(tuple(lines), tables=list(tables))
    v = dataclasses.replace(
        v,
        coordinator=speaking(v.coordinator, coordinator) if v.coordinator else None,
        tablet_servers=tuple(speaking(s, lines[s.node_id]) for s in v.tablet_servers),
    )
    return snap(v)


NO_ACLS = AclListing(enabled=False, reason="security disabled")
CLEAN: dict[str, list[ConfigEntry]] = {
    "tablet-server 0": [ConfigEntry("bind.listeners", "FLUSS://x:1", "INITIAL_SERVER_CONFIG")]
}


def rep(s: ClusterSnapshot, **kw: Any) -> UpgradeReport:
    kw.setdefault("acls", NO_ACLS)
    kw.setdefault("configs", CLEAN)
    return report(judged(s), **kw)


def items(r: UpgradeReport, name: str) -> list[Any]:
    return [i for i in r.items if i.item == name]


def test_a_server_line_is_told_by_the_api_keys_it_advertises() -> None:
    base = view().tablet_servers[0]
    assert line_of(speaking(base, KEYS_09)) == ("0.9", 1051)
    assert line_of(speaking(base, KEYS_10)) == ("1.0", 1064)
    assert line_of(speaking(base, range(1000, 1063))) == ("1.0", 1062)
    assert line_of(speaking(base, None)) == (None, None)


def test_skew_is_more_than_one_line_spoken() -> None:
    before = rep(cluster({0: KEYS_09, 1: KEYS_09, 2: KEYS_09}))
    assert before.lines == ("0.9",) and not before.skew
    mid = rep(cluster({0: KEYS_10, 1: KEYS_09, 2: KEYS_09}))
    assert mid.lines == ("0.9", "1.0") and mid.skew
    assert "(skew)" in mid.summary()
    after = rep(cluster({0: KEYS_10, 1: KEYS_10, 2: KEYS_10}, coordinator=KEYS_10))
    assert after.lines == ("1.0",) and not after.skew
    assert all(s.done for s in after.steps)
    assert {s.told_by for s in after.servers} == {"advertises API keys up to 1064"}


def test_a_clean_cluster_is_ok_on_every_item() -> None:
    r = rep(cluster({0: KEYS_09, 1: KEYS_09, 2: KEYS_09}))
    assert r.status is ExitCode.OK, [i.line() for i in r.items]
    assert {i.item for i in r.items} == set(ITEMS)


def acl(op: OperationType, name: str = "orders", who: str = "alice") -> AclBinding:
    return AclBinding(ResourceType.TABLE, f"db.{name}", who, "User", "*", op, PermissionType.ALLOW)


ACL_CASES: list[tuple[list[AclBinding], ExitCode, str]] = [
    (
        [acl(OperationType.ALTER)],
        ExitCode.WARNING,
        "allowed ALTER but not ALL on table 'db.orders'",
    ),
    ([acl(OperationType.ALTER), acl(OperationType.ALL)], ExitCode.OK, "no principal holds ALTER"),
    (
        [acl(OperationType.ALTER), acl(OperationType.ALL, name="other")],
        ExitCode.WARNING,
        "db.orders",
    ),
    ([acl(OperationType.READ)], ExitCode.OK, "no principal holds ALTER"),
]


@pytest.mark.parametrize(("bindings", "status", "text"), ACL_CASES)
def test_acl_all_item_both_ways(bindings: list[AclBinding], status: ExitCode, text: str) -> None:
    r = rep(cluster({0: KEYS_09}), acls=AclListing(enabled=True, bindings=tuple(bindings)))
    found = items(r, "acl-all")
    assert {i.status for i in found} == {status}
    assert any(text in i.text for i in found)
    assert r.status is status


def test_acl_item_without_an_authorizer_is_ok_and_unlisted_acls_warn() -> None:
    assert items(rep(cluster({0: KEYS_09})), "acl-all")[0].status is ExitCode.OK
    assert items(rep(cluster({0: KEYS_09}), acls=None), "acl-all")[0].status is ExitCode.WARNING


def entry(key: str, value: str) -> ConfigEntry:
    return ConfigEntry(key, value, "INITIAL_SERVER_CONFIG")


DATALAKE_CASES: list[tuple[list[ConfigEntry], ExitCode]] = [
    ([entry("datalake.format", "paimon")], ExitCode.WARNING),
    ([entry("datalake.format", "paimon"), entry("datalake.enabled", "true")], ExitCode.OK),
    ([entry("datalake.format", "paimon"), entry("datalake.enabled", "false")], ExitCode.OK),
    ([entry("datalake.enabled", "false")], ExitCode.OK),
    ([], ExitCode.OK),
]


@pytest.mark.parametrize(("entries", "status"), DATALAKE_CASES)
def test_datalake_enabled_item_both_ways(entries: list[ConfigEntry], status: ExitCode) -> None:
    r = rep(cluster({0: KEYS_09}), configs={"coordinator": entries})
    (found,) = items(r, "datalake-enabled")
    assert found.status is status
    if status is ExitCode.WARNING:
        assert found.subject == "coordinator" and "datalake.format=paimon" in found.text


@pytest.mark.parametrize(
    ("key", "status", "text"),
    [
        ("log.fetch.max-bytes", ExitCode.WARNING, "renamed log.replica.fetch.max-bytes"),
        ("coordinator.io-pool.size", ExitCode.WARNING, "renamed server.io-pool.size"),
        ("log.replica.fetch.max-bytes", ExitCode.OK, "no removed or renamed key"),
    ],
)
def test_config_keys_item_both_ways(key: str, status: ExitCode, text: str) -> None:
    r = rep(cluster({0: KEYS_09}), configs={"tablet-server 0": [entry(key, "1")]})
    (found,) = items(r, "config-keys")
    assert found.status is status and text in found.text


def test_unread_configs_warn_rather_than_pass() -> None:
    r = rep(cluster({0: KEYS_09}), configs=None)
    assert {i.status for i in items(r, "config-keys") + items(r, "datalake-enabled")} == {
        ExitCode.WARNING
    }


def test_steps_go_tablet_servers_then_standbys_then_the_active_coordinator_with_costs() -> None:
    s = cluster({0: KEYS_10, 1: KEYS_09, 2: KEYS_09}, tables=(RF3, RF1))
    s = dataclasses.replace(s, coordinators=probe("active", "standby"))
    r = rep(s)
    subjects = [st.subject for st in r.steps]
    assert subjects[:3] == ["tablet-server 0", "tablet-server 1", "tablet-server 2"]
    assert subjects[3] == "coordinator 127.0.0.1:9124"
    assert subjects[4].endswith("(active, last)")
    ts0, ts1 = r.steps[0], r.steps[1]
    assert ts0.done and not ts1.done
    assert (ts1.leaders, ts1.under_replicated, ts1.offline_tables) == (2, 3, ("db.one",))
    (single,) = items(r, "single-replica")
    assert single.status is ExitCode.WARNING and single.subject == "tablet-server 1"
    assert r.status is ExitCode.WARNING
    assert items(rep(cluster({0: KEYS_09})), "single-replica")[0].status is ExitCode.OK


def test_an_unreadable_cluster_is_critical() -> None:
    r = report(judged(snap(None, failed="connection refused")))
    assert r.status is ExitCode.CRITICAL
    assert "connection refused" in r.summary()
    assert r.as_dict()["status"] == "CRITICAL"

"""A tablet server that was alive and is gone is a finding until it returns or is retired.

Issue 38: once the coordinator drops a dead tablet server (its ZooKeeper session ended,
about 10 s), metadata no longer lists it, and a server that held no replicas died without
any face saying so. Each way a server can be known (seen by this process, in the history,
expected by the profile) and each way the finding ends (the server returns, an operator
retires it, the profile's grace passes) is judged here over snapshots.
"""

from __future__ import annotations

import pytest

from fluss_proto.model import HealthStatus
from konsole.model.check import assess
from konsole.model.health import RULES, Finding, HealthRules
from konsole.model.known_servers import KnownBy, KnownServer, KnownServers
from konsole.model.roles import AddressRoles, Probed, Role, sort_probes
from konsole.model.snapshot import ClusterSnapshot
from tests._testutil.builders import T0, addr, snap, table, view
from tests._testutil.judging import health_of, judged_as

ALL = view((0, 1, 2))
#: Tablet server 1 dropped from metadata; it held no replica (an empty cluster).
WITHOUT_1 = view((0, 2))
#: Tablet server 1 dropped from metadata with a replica still placed on it.
WITHOUT_1_HOLDING = view((0, 2), [table("db.t", 1, [(0, (0, 1), 5)])])
#: No metrics in these snapshots: those rules are not what is judged here.
NO_METRICS = HealthRules(require_metrics=False)


def judged(s: ClusterSnapshot, known: KnownServers) -> list[Finding]:
    return [
        f for f in health_of(s.with_known(known), NO_METRICS).findings if f.rule == "server_gone"
    ]


def gone_ids(s: ClusterSnapshot, known: KnownServers) -> list[str]:
    return [f.subject for f in judged(s, known)]


def seen_once(at: float = T0) -> KnownServers:
    """What a poller knows after one poll that listed 0, 1 and 2 alive."""
    return KnownServers().seen(ALL, at)


# =========================================================================== known by


def test_a_server_seen_alive_in_this_process_and_dropped_is_gone_yellow() -> None:
    later = snap(WITHOUT_1, t=T0 + 75)
    [finding] = judged(later, seen_once())
    assert (finding.status, finding.rule, finding.subject) == (
        HealthStatus.YELLOW,
        "server_gone",
        "tablet-server 1",
    )
    assert "seen alive at 20:26:40 UTC (1m15s ago) as 127.0.0.1:9201" in finding.reason
    assert health_of(later.with_known(seen_once()), NO_METRICS).status is HealthStatus.YELLOW


def test_without_memory_the_same_poll_says_nothing_which_was_the_bug() -> None:
    assert judged(snap(WITHOUT_1, t=T0 + 75), KnownServers()) == []
    assert health_of(snap(WITHOUT_1, t=T0 + 75), NO_METRICS).status is HealthStatus.GREEN


def test_a_gone_server_that_held_replicas_is_red() -> None:
    [finding] = judged(snap(WITHOUT_1_HOLDING, t=T0 + 20), seen_once())
    assert finding.status is HealthStatus.RED
    assert "1 replica placed on it" in finding.reason


def test_a_server_in_the_history_is_known_and_named_so() -> None:
    recalled = KnownServers().recall([KnownServer(1, KnownBy.HISTORY, T0, "127.0.0.1:9201")], {})
    [finding] = judged(snap(WITHOUT_1, t=T0 + 3600), recalled)
    assert "in the history: last alive at 20:26:40 UTC (1h00m ago)" in finding.reason


def test_a_history_of_another_cluster_is_dropped_at_the_first_poll() -> None:
    other = [KnownServer(i, KnownBy.HISTORY, T0, f"127.0.0.1:{7000 + i}") for i in (1, 2, 3)]
    known = KnownServers().recall(other, {}).seen(WITHOUT_1, T0 + 60)
    assert known.node_ids == {0, 2} and known.checked
    assert gone_ids(snap(WITHOUT_1, t=T0 + 60), known) == []
    # One server in common (id and address): the same cluster, its history kept.
    same = [KnownServer(i, KnownBy.HISTORY, T0, f"127.0.0.1:{9200 + i}") for i in (1, 2)]
    known = KnownServers().recall(same, {}).seen(WITHOUT_1, T0 + 60)
    assert gone_ids(snap(WITHOUT_1, t=T0 + 60), known) == ["tablet-server 1"]


def test_a_history_sighting_retired_after_it_is_not_recalled() -> None:
    sighting = KnownServer(1, KnownBy.HISTORY, T0, None)
    assert KnownServers().recall([sighting], {1: T0 + 5}).get(1) is None
    # Seen again after the retirement: known again.
    assert KnownServers().recall([sighting], {1: T0 - 5}).get(1) == sighting


def test_a_newer_sighting_wins_over_an_older_one() -> None:
    old = KnownServer(1, KnownBy.HISTORY, T0 - 100, "a:1")
    known = seen_once().recall([old], {})
    assert known.get(1) == KnownServer(1, KnownBy.SEEN, T0, "127.0.0.1:9201")


def test_a_server_the_profile_expects_is_gone_even_if_never_seen() -> None:
    known = KnownServers.of_profile("prod", expected=(0, 1, 2, 3))
    [finding] = judged(snap(ALL, t=T0), known)
    assert finding.subject == "tablet-server 3"
    assert finding.reason == "not in metadata; expected by profile prod"


# =========================================================================== ends


def test_a_server_that_returns_is_no_longer_gone() -> None:
    known = seen_once()
    assert gone_ids(snap(WITHOUT_1, t=T0 + 20), known) == ["tablet-server 1"]
    back = snap(ALL, t=T0 + 40)
    known = known.seen(ALL, T0 + 40)
    assert gone_ids(back, known) == []


def test_a_retired_server_is_forgotten_and_a_later_return_is_known_again() -> None:
    known = seen_once().retire(1, T0 + 30)
    assert gone_ids(snap(WITHOUT_1, t=T0 + 40), known) == []
    assert known.get(1) is None
    # A retirement older than the last sighting forgets nothing.
    assert seen_once(T0 + 50).retire(1, T0 + 30).get(1) is not None


def test_a_retired_id_the_profile_still_expects_stays_gone() -> None:
    known = KnownServers.of_profile("prod", expected=(1,)).seen(ALL, T0).retire(1, T0 + 1)
    assert gone_ids(snap(WITHOUT_1, t=T0 + 40), known) == ["tablet-server 1"]


@pytest.mark.parametrize(
    ("after", "gone"),
    [(599.0, ["tablet-server 1"]), (600.0, ["tablet-server 1"]), (601.0, [])],
)
def test_the_grace_forgets_a_gone_server_once_it_passed(after: float, gone: list[str]) -> None:
    known = KnownServers.of_profile("p", grace_s=600).seen(ALL, T0)
    assert gone_ids(snap(WITHOUT_1, t=T0 + after), known) == gone


def test_no_grace_keeps_a_gone_server_for_ever() -> None:
    assert gone_ids(snap(WITHOUT_1, t=T0 + 365 * 86400), seen_once()) == ["tablet-server 1"]


def test_the_grace_never_forgets_an_expected_server() -> None:
    known = KnownServers.of_profile("p", expected=(1,), grace_s=10).seen(ALL, T0)
    assert gone_ids(snap(WITHOUT_1, t=T0 + 3600), known) == ["tablet-server 1"]


def test_a_negative_grace_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="server_gone_grace_s"):
        KnownServers.of_profile("p", grace_s=-1)


# =========================================================================== bootstrap list


def _with_dead_address(s: ClusterSnapshot, role: Role | None) -> ClusterSnapshot:
    roles = AddressRoles()
    if role is not None:
        roles.learn("127.0.0.1:9201", role)
    coordinators, errors = sort_probes(
        [Probed(addr(0), "active"), Probed("127.0.0.1:9201", "unreachable", "refused")],
        roles,
        declared=(),
    )
    return ClusterSnapshot(
        **{
            **{f: getattr(s, f) for f in s.__dataclass_fields__},
            "coordinators": coordinators,
            "errors": (*errors, *s.errors),
        }
    )


def test_a_gone_server_names_its_silent_bootstrap_address_in_one_finding() -> None:
    s = _with_dead_address(snap(WITHOUT_1, t=T0 + 15), Role("tablet-server", 1))
    health = health_of(s.with_known(seen_once()), NO_METRICS)
    mine = [f for f in health.findings if f.subject == "tablet-server 1"]
    assert [f.rule for f in mine] == ["server_gone"]
    assert "its address 127.0.0.1:9201 (in the bootstrap list) does not answer" in mine[0].reason
    result = assess(judged_as(s.with_known(seen_once()), health))
    assert result.status.name == "WARNING"
    assert result.summary.startswith("tablet-server 1: not in metadata")


def test_a_silent_bootstrap_address_nobody_named_is_a_warning_naming_the_address() -> None:
    s = _with_dead_address(snap(WITHOUT_1, t=T0 + 15), None)
    health = health_of(s, NO_METRICS)
    assert health.status is HealthStatus.YELLOW
    [finding] = [f for f in health.findings if f.rule == "bootstrap"]
    assert finding.subject == "bootstrap 127.0.0.1:9201"
    assert assess(judged_as(s, health)).status.name == "WARNING"


def test_server_gone_is_one_of_the_rules() -> None:
    assert "server_gone" in RULES
    assert len(set(RULES)) == len(RULES)

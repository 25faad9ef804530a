"""The poller's memory of tablet servers, from its own polls, a history file and a profile,
and the retirement that ends it (issue 38). Fake seams, a real history file."""

from __future__ import annotations

from pathlib import Path

import pytest

from konsole.collect.actions.runner import Audit
from konsole.collect.history.recorded_look import recorded_look
from konsole.collect.history.rows import poll_record
from konsole.collect.history.server_memory import RetirementFeed, recall, remember
from konsole.collect.profiles import ProfileError, parse_profiles
from konsole.errors import ActionInputError
from konsole.model.actions import Outcome, plan_retire
from konsole.model.health import Finding, HealthRules
from konsole.model.known_servers import KnownBy, KnownServers
from konsole.model.placement import placement
from konsole.model.snapshot import ClusterSnapshot
from store import open_writer
from tests._testutil.builders import T0, snap, table, view
from tests._testutil.judging import health_of
from tests._testutil.poller import Fakes

ALL = view((0, 1, 2))
WITHOUT_1 = view((0, 2))
NO_METRICS = HealthRules(require_metrics=False)
CONFIG = Path("/nowhere/config.toml")


def gone(s: ClusterSnapshot) -> list[Finding]:
    return [f for f in health_of(s, NO_METRICS).findings if f.rule == "server_gone"]


def record(path: Path, *snapshots: ClusterSnapshot) -> None:
    with open_writer(path) as w:
        for s in snapshots:
            w.record(poll_record(s))


def retire(path: Path, node_id: int, at: float) -> None:
    plan = plan_retire(WITHOUT_1, placement(WITHOUT_1), node_id, KnownServers().seen(ALL, T0))
    Audit(path, who="op@host", clock=lambda: at).record(plan, Outcome.SUCCEEDED)


# =========================================================================== the poller


async def test_the_poller_remembers_a_server_it_saw_and_stamps_each_snapshot() -> None:
    poller = Fakes(views=[ALL, WITHOUT_1]).poller()
    first = await poller.poll()
    assert gone(first) == []
    second = await poller.poll()
    [finding] = gone(second)
    assert finding.subject == "tablet-server 1"
    assert "seen alive at" in finding.reason
    remembered = second.known.get(1)
    assert remembered is not None and remembered.by is KnownBy.SEEN


async def test_a_fresh_poller_without_memory_cannot_tell_which_was_the_bug() -> None:
    assert gone(await Fakes(views=[WITHOUT_1]).poller().poll()) == []


async def test_a_fresh_poller_remembers_what_the_history_saw(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    record(path, snap(ALL, seq=1, t=T0), snap(WITHOUT_1, seq=2, t=T0 + 15))
    poller, release = remember((Fakes(views=[WITHOUT_1]).poller(), _nothing), path)
    try:
        [finding] = gone(await poller.poll())
    finally:
        await release()
    assert finding.subject == "tablet-server 1"
    assert "in the history: last alive at 20:26:40 UTC" in finding.reason
    assert "as 127.0.0.1:9201" in finding.reason


async def test_a_retirement_written_while_the_poller_runs_ends_the_finding(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite"
    record(path, snap(ALL, seq=1, t=T0))
    poller, release = remember((Fakes(views=[ALL, WITHOUT_1]).poller(), _nothing), path)
    try:
        await poller.poll()
        assert [f.subject for f in gone(await poller.poll())] == ["tablet-server 1"]
        seen = poller.known.get(1)
        assert seen is not None and seen.alive_at is not None
        retire(path, 1, at=seen.alive_at + 1)
        assert gone(await poller.poll()) == []
    finally:
        await release()


def test_the_history_forgets_a_server_retired_after_its_last_sighting(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    record(path, snap(ALL, seq=1, t=T0), snap(WITHOUT_1, seq=2, t=T0 + 15))
    assert recall(path, KnownServers()).node_ids == {0, 1, 2}
    retire(path, 1, at=T0 + 20)
    assert recall(path, KnownServers()).node_ids == {0, 2}
    assert recorded_look(path).known(KnownServers()).node_ids == {0, 2}
    # Back after the retirement (same id, a new server): known again.
    record(path, snap(ALL, seq=3, t=T0 + 30))
    assert recall(path, KnownServers()).node_ids == {0, 1, 2}


def test_the_retirement_feed_sees_only_what_is_written_after_it_started(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    record(path, snap(ALL, seq=1, t=T0))
    retire(path, 2, at=T0 + 1)
    feed = RetirementFeed(path)
    try:
        assert feed.look() == {}
        retire(path, 1, at=T0 + 5)
        assert feed.look() == {1: T0 + 5}
        assert feed.look() == {}
    finally:
        feed.close()


def test_no_history_recalls_nothing(tmp_path: Path) -> None:
    base = KnownServers.of_profile("p", (1,))
    assert recall(None, base) is base
    assert recall(tmp_path / "missing.sqlite", base) is base
    (tmp_path / "junk.sqlite").write_text("not a database")
    assert recall(tmp_path / "junk.sqlite", base) is base


async def _nothing() -> None:
    return None


# =========================================================================== the profile


def test_the_profile_names_its_expected_servers_and_grace() -> None:
    text = (
        '[profiles.prod]\nbootstrap = ["127.0.0.1:9123"]\n'
        "expected_tablet_servers = [3, 1, 2, 1]\nserver_gone_grace_s = 3600\n"
    )
    profile = parse_profiles(text, CONFIG)["prod"]
    assert profile.expected_tablet_servers == (1, 2, 3)
    known = profile.known_servers
    assert (known.expected, known.profile, known.grace_s) == ({1, 2, 3}, "prod", 3600.0)
    assert profile.describe()["expected_tablet_servers"] == [1, 2, 3]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("expected_tablet_servers = [1, -2]", "tablet server ids"),
        ('expected_tablet_servers = "1,2"', "tablet server ids"),
        ("expected_tablet_servers = [true]", "tablet server ids"),
        ("server_gone_grace_s = -1", "seconds >= 0"),
        ('server_gone_grace_s = "1h"', "seconds >= 0"),
    ],
)
def test_bad_expected_servers_or_grace_are_refused_naming_the_key(line: str, message: str) -> None:
    text = f'[profiles.prod]\nbootstrap = ["127.0.0.1:9123"]\n{line}\n'
    with pytest.raises(ProfileError, match=message) as caught:
        parse_profiles(text, CONFIG)
    assert line.split(" ")[0] in str(caught.value)


# =========================================================================== retire's plan


def test_retire_is_refused_while_the_server_is_alive() -> None:
    plan = plan_retire(ALL, placement(ALL), 1, KnownServers())
    [refusal] = plan.blocking(force=True)
    assert "alive in metadata: stop it first" in refusal.reason


def test_retire_asks_for_a_drain_while_replicas_are_placed_on_it() -> None:
    holding = view((0, 2), [table("db.t", 1, [(0, (0, 1), 5)])])
    plan = plan_retire(holding, placement(holding), 1, KnownServers().seen(ALL, T0))
    [refusal] = plan.blocking(force=False)
    assert "drain it first (konsole admin server drain 1)" in refusal.reason
    assert plan.blocking(force=True) == ()


def test_retire_of_a_gone_server_sends_nothing_and_says_the_history_records_it() -> None:
    plan = plan_retire(
        WITHOUT_1, placement(WITHOUT_1), 1, KnownServers.of_profile("prod", (1,)).seen(ALL, T0)
    )
    assert plan.refusals == () and plan.sends == ()
    assert plan.lines()[1] == "  sends: nothing"
    assert any("profile prod still expects it" in n for n in plan.notes)


def test_retire_of_an_id_nobody_knows_is_an_input_error() -> None:
    with pytest.raises(ActionInputError, match="tablet server 7 is not known"):
        plan_retire(WITHOUT_1, placement(WITHOUT_1), 7, KnownServers().seen(ALL, T0))

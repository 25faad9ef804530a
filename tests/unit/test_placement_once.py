"""The poll carries its facts: ``konsole.model.placement.placement`` runs once per good poll,
in ``advance``, and every face (the console's state and its screens' rows, ``check``,
``watch``, serve's fleet and its Prometheus series) reads that one (issue 32).

The story has an outage (a tablet server gone for four polls, replicas offline on it) and a
failed poll: during an outage the leaders detector used to make the previous placement again
on every poll."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import konsole.model.placement as placement_module
from konsole.collect.profiles import Profile
from konsole.model.poll import JudgedPoll
from konsole.model.snapshot import ClusterSnapshot
from konsole.serve.fleet import Fleet, Member
from tests._testutil.builders import T0, snap, table, view
from tests._testutil.sources import ListPoller, fake_source, run_feed_until

PROFILE = Profile(name="once", source="profile", bootstrap=("127.0.0.1:9",))


def story() -> list[ClusterSnapshot]:
    """Good, good, server 3 gone x4 (its replicas offline), a failed poll, back x2."""
    tablets = [(1, 2, 3)] * 2 + [(1, 2)] * 4 + [None] + [(1, 2, 3)] * 2
    out = []
    for seq, servers in enumerate(tablets, start=1):
        t = T0 + seq
        if servers is None:
            out.append(snap(None, seq=seq, t=t, failed="refused"))
            continue
        v = view(servers, [table("db.t", 1, [seq * 10, seq * 20, seq * 30])], started_at=t)
        out.append(snap(v, seq=seq, t=t))
    return out


GOOD = sum(s.ok for s in story())


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts every call of ``placement``, whichever module bound the name."""
    import konsole.serve.exposition.families
    import konsole.ui.screens.cluster_facts
    import konsole.ui.screens.overview.screen  # noqa: F401

    original = placement_module.placement
    seen: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        seen.append(1)
        return original(*args, **kwargs)

    for name, module in list(sys.modules.items()):
        if name.startswith("konsole") and getattr(module, "placement", None) is original:
            monkeypatch.setattr(module, "placement", counting)
    yield seen


def test_advance_makes_one_placement_per_good_poll(calls: list[int]) -> None:
    from konsole.model.events import EventState, advance

    state = EventState()
    kinds: list[str] = []
    for s in story():
        events, state = advance(state, s)
        kinds += [e.kind.value for e in events]
    assert "replicas_offline" in kinds  # the outage was seen (the facts were used)
    assert len(calls) == GOOD


@pytest.mark.asyncio
async def test_the_console_state_and_its_rows_read_the_polls_facts(calls: list[int]) -> None:
    from konsole.ui.feed import LiveFeed
    from konsole.ui.screens.cluster_facts import bucket_counts, server_rows

    feed = LiveFeed(PROFILE, None, source=fake_source(story()), clock=lambda: T0 + 100)
    states: list[Any] = []
    done = asyncio.Event()

    def publish(state: Any) -> None:
        states.append(state)
        if state.snapshot is not None:
            # What the Overview and the Servers screen build on each refresh.
            assert state.last_ok is not None
            counts = bucket_counts(state.last_ok, state.replication)
            assert counts is not None and counts.buckets == 3
            assert server_rows(state)
        if state.snapshot is not None and state.snapshot.seq == len(story()):
            done.set()

    await run_feed_until(feed, publish, done)
    outage = next(s for s in states if s.snapshot is not None and s.snapshot.seq == 4)
    assert outage.placement is not None and 3 in outage.placement.replicas_offline
    assert len(calls) == GOOD


def test_check_judges_on_the_placement_health_made(calls: list[int]) -> None:
    from konsole.model.check import assess
    from tests._testutil.judging import judged

    outage = story()[3]
    result = assess(judged(outage))
    assert result.measures["tablet_servers"].value == 2.0
    assert len(calls) == 1


@pytest.mark.asyncio
async def test_watch_makes_one_placement_per_good_poll(calls: list[int]) -> None:
    from konsole.cli.watch import watch_loop

    lines: list[str] = []
    poller: Any = ListPoller(story())
    async with asyncio.timeout(10):
        await watch_loop(
            poller, PROFILE, "jsonl", stop=asyncio.Event(), out=lines.append, err=lines.append
        )
    assert any("replicas_offline" in line for line in lines)
    assert len(calls) == GOOD


@pytest.mark.asyncio
@pytest.mark.parametrize("verbose", [False, True])
async def test_watch_verbose_says_each_poll_on_stderr(calls: list[int], verbose: bool) -> None:
    """`watch --verbose`: a stderr line per poll (tests wait on it, never on the clock)."""
    from konsole.cli.watch import watch_loop

    out: list[str] = []
    err: list[str] = []
    poller: Any = ListPoller(story())
    async with asyncio.timeout(10):
        await watch_loop(
            poller,
            PROFILE,
            "jsonl",
            stop=asyncio.Event(),
            out=out.append,
            err=err.append,
            verbose=verbose,
        )
    taken = [line for line in err if " taken (" in line]
    seqs = [s.seq for s in story()]
    if verbose:
        assert [int(line.split()[3]) for line in taken] == seqs, taken
        assert not [line for line in out if " taken (" in line]
    else:
        assert taken == []


@pytest.mark.asyncio
async def test_serves_fleet_and_its_series_make_one_placement_per_good_poll(
    calls: list[int],
) -> None:
    from konsole.serve.exposition.sink import Exposition

    snapshots = story()
    stop = asyncio.Event()
    exposition = Exposition(["once"])
    polls: list[int] = []

    class Last:
        async def on_poll(self, cluster: str, judged: JudgedPoll) -> None:
            polls.append(judged.snapshot.seq)
            if len(polls) == len(snapshots):
                stop.set()

        async def aclose(self) -> None:
            return None

    fleet = Fleet(
        [Member("once", PROFILE, None)],
        [exposition, Last()],
        say=lambda _: None,
        source=lambda _member: fake_source(snapshots)(),
    )
    async with asyncio.timeout(10):
        await fleet.run(stop)
    assert polls == [s.seq for s in snapshots]
    text = b"".join(m.name.encode() for m in exposition.registry.collect())
    assert b"konsole_servers" in text
    assert len(calls) == GOOD

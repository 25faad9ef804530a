"""One judged poll, one verdict: every face says the same of the same polls (issue 39).

One story of polls (a server gone, a failed poll, the server back, then the wall clock
stepped back) goes through the console feed (recording its history), ``watch``, the
check's judgement, serve's fleet and its Prometheus families, and time travel over the
history the console recorded. Each says the same health, findings and events of each poll;
the poll the wall clock stepped back is stamped after the one before it in every face that
keeps a timeline. Then each face is counted: one judgement per poll (issue 39: a poll used
to be judged in four places).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import konsole.model.poll as poll_module
from konsole.collect.profiles import Profile
from konsole.model.events import Event
from konsole.model.health import Health
from konsole.model.metrics import MetricsOrigin
from konsole.model.poll import JudgedPoll
from konsole.model.snapshot import ClusterSnapshot
from konsole.serve.fleet import Fleet, Member
from tests._testutil.builders import T0, snap, table, view
from tests._testutil.sources import ListPoller, fake_source, run_feed_until

PROFILE = Profile(name="one", source="profile", bootstrap=("127.0.0.1:9",))

#: (tablet servers, or None for a failed poll; the wall-clock time of the poll).
STORY: tuple[tuple[tuple[int, ...] | None, float], ...] = (
    ((1, 2, 3), T0 + 1),
    ((1, 2), T0 + 2),  # server 3 gone: its replicas offline
    (None, T0 + 3),  # the poll fails
    ((1, 2, 3), T0 + 4),  # back
    ((1, 2, 3), T0 + 2.5),  # the wall clock stepped back 1.5 s
    ((1, 2, 3), T0 + 6),
)
POLLS = len(STORY)


def story() -> list[ClusterSnapshot]:
    out = []
    for seq, (servers, t) in enumerate(STORY, start=1):
        if servers is None:
            out.append(snap(None, seq=seq, t=t, failed="refused"))
            continue
        v = view(servers, [table("db.t", 1, [seq * 10, seq * 20, seq * 30])], started_at=t)
        # No metrics endpoint configured (as the history reads a poll that scraped none).
        out.append(replace(snap(v, seq=seq, t=t), metrics_origin=MetricsOrigin.NONE))
    return out


def verdict(health: Health) -> tuple[object, ...]:
    """What a face says of a poll's health: the status and every finding."""
    findings = tuple((f.status.name, f.rule, f.subject, f.reason) for f in health.findings)
    return (health.status.name, findings)


def said(event: Event) -> tuple[str, str, str, str]:
    return (event.kind.value, event.severity.value, event.subject.name, event.message)


# =========================================================================== the faces


async def console(history: Path | None) -> list[Any]:
    """The console's states, one per poll (the feed records into ``history``)."""
    from konsole.ui.feed import LiveFeed

    feed = LiveFeed(PROFILE, history, source=fake_source(story()), clock=lambda: T0 + 100)
    states: list[Any] = []
    done = asyncio.Event()

    def publish(state: Any) -> None:
        if state.snapshot is not None:
            states.append(state)
            if len(states) == POLLS:
                done.set()

    await run_feed_until(feed, publish, done)
    return states


async def watched() -> tuple[list[dict[str, Any]], list[str]]:
    """``watch --format jsonl``: its JSON lines, and its diagnostics."""
    from konsole.cli.watch import watch_loop

    out: list[str] = []
    err: list[str] = []
    poller: Any = ListPoller(story())
    async with asyncio.timeout(10):
        await watch_loop(
            poller, PROFILE, "jsonl", stop=asyncio.Event(), out=out.append, err=err.append
        )
    return [json.loads(line) for line in out], err


async def served() -> tuple[list[JudgedPoll], Any]:
    """What serve's sinks are handed, and its Prometheus exposition after the story."""
    from konsole.serve.exposition.sink import Exposition

    stop = asyncio.Event()
    exposition = Exposition(["one"])
    handed: list[JudgedPoll] = []

    class Spy:
        async def on_poll(self, cluster: str, judged: JudgedPoll) -> None:
            handed.append(judged)
            if len(handed) == POLLS:
                stop.set()

        async def aclose(self) -> None:
            return None

    fleet = Fleet(
        [Member("one", PROFILE, None)],
        [exposition, Spy()],
        say=lambda _: None,
        source=lambda _member: fake_source(story())(),
    )
    async with asyncio.timeout(10):
        await fleet.run(stop)
    return handed, exposition


def checked(monkeypatch: pytest.MonkeyPatch, s: ClusterSnapshot) -> Any:
    """``konsole check``'s look at one poll of the story (its poller answers ``s``)."""
    import konsole.cli.check as check_cmd
    from konsole.model.check import Thresholds

    class OneLook:
        known = s.known

        def seed_storage(self, _: Any) -> None: ...
        def seed_roles(self, _: Any) -> None: ...
        def seed_known(self, _: Any) -> None: ...

        async def poll(self) -> ClusterSnapshot:
            return s

        async def aclose(self) -> None: ...

    class NoScrape:
        timeout = 0.1

        async def aclose(self) -> None: ...

    def build(profile: Profile, poll_timeout: float) -> Any:
        return OneLook(), NoScrape(), lambda _view: (), []

    monkeypatch.setattr(check_cmd, "build_check_poller", build)
    import time

    return asyncio.run(
        check_cmd.look(
            PROFILE,
            deadline=time.monotonic() + 5,
            timeout=5,
            rules=PROFILE.health,
            thresholds=Thresholds(),
            cluster={},
        )
    )


def travelled(history: Path, at: float) -> Any:
    from konsole.ui.feed import state_at
    from store import open_reader

    reader = open_reader(history)
    try:
        return state_at(reader, at, name="one", rules=PROFILE.health)
    finally:
        reader.close()


# =========================================================================== one verdict


def test_every_face_says_the_same_health_findings_and_events_of_each_poll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = tmp_path / "one.sqlite"
    states = asyncio.run(console(history))
    lines, diagnostics = asyncio.run(watched())
    handed, exposition = asyncio.run(served())

    # The console: the story as judged, the stepped-back poll stamped after the one before.
    assert [s.snapshot.seq for s in states] == list(range(1, POLLS + 1))
    times = [s.snapshot.taken_at for s in states]
    assert times == sorted(times) and len(set(times)) == POLLS
    assert times[4] > T0 + 4 > STORY[4][1]
    healths = [verdict(s.health) for s in states]
    statuses = [h[0] for h in healths]
    assert statuses[1] != statuses[0] and statuses[2] == "RED" and statuses[-1] == statuses[0]
    events = [said(e) for e in states[-1].events]
    kinds = {e[0] for e in events}
    assert {"replicas_offline", "poll_failed", "health_changed"} <= kinds, kinds
    # Each poll's events are the ones its state added.
    per_poll = [len(s.events) for s in states]

    # serve: the same verdicts, the same events, the same stamps.
    assert [verdict(j.health) for j in handed] == healths
    assert [said(e) for j in handed for e in j.events] == events
    served_times = [j.snapshot.taken_at for j in handed]
    assert served_times == sorted(served_times) and served_times[4] > T0 + 4
    from prometheus_client import generate_latest

    from konsole.serve.exposition.families import STATUS_CODE

    text = generate_latest(exposition.registry).decode()
    last = handed[-1].health.status
    assert f'konsole_health_status{{cluster="one"}} {float(STATUS_CODE[last])}' in text

    # watch: the same events, and a health line at each change of the status or findings.
    watch_events = [
        (d["kind"], d["severity"], d["subject"]["name"], d["message"])
        for d in lines
        if d["type"] == "event"
    ]
    assert watch_events == events
    watch_healths = [
        (
            d["status"],
            tuple((f["status"], f["rule"], f["subject"], f["reason"]) for f in d["findings"]),
        )
        for d in lines
        if d["type"] == "health"
    ]
    changes = [h for i, h in enumerate(healths) if i == 0 or h != healths[i - 1]]
    assert watch_healths == changes
    assert any("wall clock moved back" in line for line in diagnostics)

    # check: one look at each poll finds what the stream judged of it.
    for s, expected in zip(story(), healths, strict=True):
        result = checked(monkeypatch, s)
        assert verdict(result.health) == expected, s.seq
        from_health = [(f.health.name, f.rule, f.subject, f.reason) for f in result.findings]
        assert sorted(from_health) == sorted(expected[1])  # type: ignore[arg-type]

    # time travel over the history the console recorded: the same, moment by moment.
    for i, state in enumerate(states):
        past = travelled(history, state.snapshot.taken_at)
        assert past is not None and past.snapshot.seq == state.snapshot.seq
        assert past.snapshot.taken_at == pytest.approx(state.snapshot.taken_at, abs=1e-3)
        assert verdict(past.health) == healths[i], (i, verdict(past.health), healths[i])
        assert [said(e) for e in past.events] == events[: per_poll[i]]
        assert (past.last_ok.seq if past.last_ok else None) == (
            state.last_ok.seq if state.last_ok else None
        )
        assert past.placement == state.placement


# =========================================================================== one judgement


@pytest.fixture
def judged_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every judgement: the Judge's, judge_recorded's and judge_look's, and every ``evaluate``,
    ``advance`` and ``facts_of`` (wherever they were imported by name): a face that judged a
    poll, or derived its facts, on its own would add one."""
    import sys

    import konsole.model.events.state as state_module
    import konsole.model.health as health_module
    import konsole.model.poll_facts as facts_module

    calls: list[str] = []

    def counting(name: str, real: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return real(*args, **kwargs)

        return wrapped

    for name, real in (
        ("facts_of", facts_module.facts_of),
        ("evaluate", health_module.evaluate),
        ("advance", state_module.advance),
        ("judge_recorded", poll_module.judge_recorded),
        ("judge_look", poll_module.judge_look),
    ):
        wrapped = counting(name, real)
        for module_name, module in list(sys.modules.items()):
            if module_name.startswith("konsole") and getattr(module, name, None) is real:
                monkeypatch.setattr(module, name, wrapped)
    for method in ("judge", "followed"):
        real = getattr(poll_module.Judge, method)
        monkeypatch.setattr(poll_module.Judge, method, counting(f"Judge.{method}", real))
    yield calls


#: One judgement per poll of a stream: the Judge's step, the detectors' (the facts derived
#: once, health last: one evaluate).
STREAM = {"Judge.judge": 1, "advance": 1, "evaluate": 1, "facts_of": 1}
#: One judgement of a recorded poll or a look: its facts and its health.
LOOK = {"evaluate": 1, "facts_of": 1, "judge_recorded": 1}


def per_poll(calls: list[str], polls: int) -> dict[str, float]:
    return {name: calls.count(name) / polls for name in sorted(set(calls))}


def test_the_console_judges_each_poll_once(tmp_path: Path, judged_calls: list[str]) -> None:
    asyncio.run(console(tmp_path / "one.sqlite"))  # recording
    # Judged once (advance runs the detectors, health last: one evaluate), written as judged.
    assert per_poll(judged_calls, POLLS) == {
        "Judge.judge": 1,
        "advance": 1,
        "evaluate": 1,
        "facts_of": 1,
    }
    judged_calls.clear()
    asyncio.run(console(None))  # no history: judged the same way
    assert per_poll(judged_calls, POLLS) == {
        "Judge.judge": 1,
        "advance": 1,
        "evaluate": 1,
        "facts_of": 1,
    }


def test_watch_judges_each_poll_once(judged_calls: list[str]) -> None:
    asyncio.run(watched())
    assert per_poll(judged_calls, POLLS) == {
        "Judge.judge": 1,
        "advance": 1,
        "evaluate": 1,
        "facts_of": 1,
    }


def test_serve_judges_each_poll_once_and_its_sinks_never(judged_calls: list[str]) -> None:
    asyncio.run(served())
    assert per_poll(judged_calls, POLLS) == {
        "Judge.judge": 1,
        "advance": 1,
        "evaluate": 1,
        "facts_of": 1,
    }


def test_check_judges_its_one_look_once(
    judged_calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for s in story():
        checked(monkeypatch, s)
    # A look alone: its health and placement, no event detectors (nothing came before it).
    assert per_poll(judged_calls, POLLS) == {
        "evaluate": 1,
        "facts_of": 1,
        "judge_look": 1,
        "judge_recorded": 1,
    }


def test_time_travel_judges_each_moment_once(tmp_path: Path, judged_calls: list[str]) -> None:
    history = tmp_path / "one.sqlite"
    states = asyncio.run(console(history))
    judged_calls.clear()
    for state in states:
        travelled(history, state.snapshot.taken_at)
    # A failed moment shows the last good poll's panels, whose facts a history does not
    # keep: they are derived for it too (once per moment, as its own are for a good one).
    failed = sum(not s.ok for s in story())
    facts = (POLLS + failed) / POLLS
    assert per_poll(judged_calls, POLLS) == {"evaluate": 1, "facts_of": facts, "judge_recorded": 1}


def test_a_follower_judges_each_followed_poll_once(tmp_path: Path, judged_calls: list[str]) -> None:
    """A console following a recorder's file: the writer's events, one health per poll."""
    from tests._testutil.judging import JudgingRecorder

    history = tmp_path / "one.sqlite"
    writer = JudgingRecorder(history, say=lambda _: None)
    writer.open()
    try:
        for s in story():
            writer.record(s)
        judged_calls.clear()

        async def follow() -> list[Any]:
            from konsole.collect.session import ClusterSession

            session = ClusterSession(PROFILE, history, interval=0.01, clock=lambda: T0 + 100)
            stop = asyncio.Event()
            steps = []
            async with asyncio.timeout(10):
                async for step in session.steps(stop):
                    if step.judged is not None:
                        steps.append(step)
                        stop.set()
            return steps

        steps = asyncio.run(follow())
    finally:
        writer.close()
    # The follower looks at the newest poll only (one look per interval).
    assert len(steps) == 1 and steps[0].judged.snapshot.seq == POLLS
    assert per_poll(judged_calls, 1) == {
        "Judge.followed": 1,
        "evaluate": 1,
        "facts_of": 1,
        "judge_recorded": 1,
    }


def test_record_judges_each_poll_once_and_writes_it_as_judged(
    tmp_path: Path, judged_calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import konsole.cli.record as record_cmd
    from konsole.collect.history.files import RetentionPolicy
    from store import open_reader

    async def release() -> None:
        return None

    monkeypatch.setattr(
        record_cmd, "remember", lambda _built, _path: (ListPoller(story()), release)
    )
    monkeypatch.setattr(record_cmd, "build_poller", lambda _profile, _interval: None)
    history = tmp_path / "one.sqlite"
    year_ms = 366 * 86_400_000  # the story is months old on the wall clock: all kept
    keep_all = RetentionPolicy(year_ms, year_ms, year_ms, year_ms, year_ms)
    args = (PROFILE, history, keep_all, None, POLLS, False)
    assert asyncio.run(record_cmd._record(*args))
    assert per_poll(judged_calls, POLLS) == {
        "Judge.judge": 1,
        "advance": 1,
        "evaluate": 1,
        "facts_of": 1,
    }
    reader = open_reader(history)
    try:
        times = [p.at_ms for p in reader.polls()]
        kinds = {e.kind for e in reader.events(limit=None)}
    finally:
        reader.close()
    assert len(times) == POLLS and times == sorted(times) and len(set(times)) == POLLS
    assert {"replicas_offline", "poll_failed"} <= kinds

"""`konsole serve`'s history families: operator actions another process writes into the
history counted from serve's start (:class:`OperatorFeed`), and the recorder's trouble,
recorded, waiting and lost polls per cluster (:class:`HistoryCollector`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from konsole.collect.history.operator_feed import OperatorFeed
from konsole.collect.profiles import Profile
from konsole.model.poll import JudgedPoll
from konsole.model.snapshot import ClusterSnapshot
from konsole.serve.exposition.history import HistoryCollector
from konsole.serve.fleet import Fleet, HistoryMode, Member, Source
from store import add_event, open_writer
from store.rows import EventRow
from tests._testutil.builders import operator_row, snap, table, view

operator = operator_row


def history(path: Path) -> Path:
    open_writer(path).close()
    return path


def test_only_operator_events_written_after_the_feed_began_are_counted(tmp_path: Path) -> None:
    path = history(tmp_path / "h.sqlite")
    add_event(path, operator("config set", "succeeded"))  # before serve: not counted
    feed = OperatorFeed(path)
    assert feed.look() == 0
    add_event(path, operator("config set", "planned"))
    add_event(path, operator("config set", "succeeded"))
    add_event(path, EventRow(1, "leader_change", "info", "bucket", "m"))
    add_event(path, operator("x", "y", details="not json"))
    add_event(path, operator("x", "y", details="[1]"))
    assert feed.look() == 4
    assert feed.look() == 0  # each counted once
    assert dict(feed.counts) == {
        ("config set", "planned"): 1,
        ("config set", "succeeded"): 1,
        ("unknown", "unknown"): 2,
    }


def test_a_look_is_bounded_and_the_rest_comes_at_the_next(tmp_path: Path) -> None:
    path = history(tmp_path / "h.sqlite")
    feed = OperatorFeed(path, limit=2)
    for _ in range(5):
        add_event(path, operator("acl create", "sent"))
    assert [feed.look() for _ in range(4)] == [2, 2, 1, 0]
    assert feed.counts[("acl create", "sent")] == 5


def test_a_file_made_again_is_read_from_its_start_and_a_missing_one_counts_nothing(
    tmp_path: Path,
) -> None:
    path = history(tmp_path / "h.sqlite")
    for _ in range(3):
        add_event(path, operator("config set", "planned"))
    feed = OperatorFeed(path)
    path.unlink()
    assert feed.look() == 0
    history(path)
    add_event(path, operator("config delete", "failed"))
    assert feed.look() == 1
    assert dict(feed.counts) == {("config delete", "failed"): 1}
    (tmp_path / "foreign").write_text("not a history")
    (tmp_path / "foreign").replace(path)
    assert feed.look() == 0


class Acting:
    """A sink that acts on cluster c's history at its given polls (as another process
    would)."""

    def __init__(self, stop: asyncio.Event, acts: dict[int, Any], last: int) -> None:
        self.stop, self.acts, self.last, self.polls = stop, acts, last, 0

    async def on_poll(self, cluster: str, judged: JudgedPoll) -> None:
        if cluster != "c":
            return
        self.polls += 1
        act = self.acts.get(self.polls)
        if act is not None:
            act()
        if self.polls >= self.last:
            self.stop.set()

    async def aclose(self) -> None:
        return None


def source(m: Member) -> Source:
    started = time.time()

    async def snapshots(stop: asyncio.Event) -> AsyncIterator[ClusterSnapshot]:
        for seq in range(1, 100):
            if stop.is_set():
                return
            yield snap(view((0, 1), [table("db.t", 1, [seq])]), seq=seq, t=started + seq)
            await asyncio.sleep(0)

    async def release() -> None:
        return None

    return snapshots, release


def scrape(fleet: Fleet, with_history: Sequence[str]) -> dict[str, list[Any]]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(HistoryCollector(fleet.status, with_history))
    text = generate_latest(registry).decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


@pytest.mark.asyncio
async def test_serve_exports_its_history_trouble_and_the_operator_actions(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    profile = Profile(name="c", source="profile", bootstrap=("127.0.0.1:9",))
    members = [Member("c", profile, path), Member("live", profile, None)]
    stop = asyncio.Event()
    acts = {
        2: lambda: add_event(path, operator("config set", "succeeded")),
        4: path.unlink,  # the next poll goes into a new file: one trouble, healed at once
        6: lambda: add_event(path, operator("config set", "refused")),
    }
    sink = Acting(stop, acts, last=8)
    said: list[str] = []
    fleet = Fleet(members, [sink], say=said.append, source=source)
    async with asyncio.timeout(10):
        await fleet.run(stop)
    found = scrape(fleet, ["c"])
    value = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in found.values() for s in f}
    assert value[("konsole_history_ok", (("cluster", "c"),))] == 1.0
    assert value[("konsole_history_troubles_total", (("cluster", "c"),))] == 1.0, said
    assert value[("konsole_history_polls_lost_total", (("cluster", "c"),))] == 0.0
    assert value[("konsole_history_polls_waiting", (("cluster", "c"),))] == 0.0
    recorded = value[("konsole_history_polls_recorded_total", (("cluster", "c"),))]
    assert recorded >= 4
    actions = {
        dict(s.labels)["result"]: s.value
        for s in found["konsole_operator_actions"]
        if s.name.endswith("_total")
    }
    assert actions == {"succeeded": 1.0, "refused": 1.0}
    # A cluster served without a history file has no history series at all.
    assert not any(s.labels.get("cluster") == "live" for f in found.values() for s in f)


@pytest.mark.asyncio
async def test_a_followed_history_counts_the_operator_actions_too(tmp_path: Path) -> None:
    """Another recorder holds the file (serve follows it): its polls and an operator event
    written beside them reach the counter; the history reads ok, with no recorder state."""
    from tests._testutil.judging import JudgingRecorder

    path = tmp_path / "held.sqlite"
    other = JudgingRecorder(path, say=lambda _: None)
    other.open()
    started = time.time()
    seq = iter(range(1, 100))

    def another_poll() -> None:
        n = next(seq)
        other.record(snap(view((0, 1), [table("db.t", 1, [n])]), seq=n, t=started + n))

    another_poll()
    profile = Profile(name="c", source="profile", bootstrap=("127.0.0.1:9",))
    stop = asyncio.Event()
    acts = {1: lambda: add_event(path, operator("server tag", "sent"))}
    sink = Acting(stop, acts, last=3)
    real_on_poll = sink.on_poll

    async def on_poll(*args: Any) -> None:
        await real_on_poll(*args)
        another_poll()  # the other writer goes on recording

    sink.on_poll = on_poll  # type: ignore[method-assign]
    fleet = Fleet([Member("c", profile, path, 0.01)], [sink], say=lambda _: None, source=source)
    try:
        async with asyncio.timeout(10):
            await fleet.run(stop)
    finally:
        other.close()
    assert fleet.status()[0].history is HistoryMode.FOLLOWING
    found = scrape(fleet, ["c"])
    assert [s.value for s in found["konsole_history_ok"]] == [1.0]
    assert not found["konsole_history_troubles"]
    assert [(s.labels["action"], s.value) for s in found["konsole_operator_actions"]] == [
        ("server tag", 1.0)
    ]

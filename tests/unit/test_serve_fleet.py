"""`konsole serve`'s fleet: one task per cluster, none waits for another; the history rule
(record, follow a held file, history off); sinks that fail do not stop polling."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from konsole.cli.main import main
from konsole.cli.serve import parse_listen
from konsole.collect.profiles import Profile
from konsole.model.events import Event
from konsole.model.health import Health
from konsole.model.poll import JudgedPoll
from konsole.model.snapshot import ClusterSnapshot
from konsole.serve.fleet import Fleet, HistoryMode, Member, Source
from tests._testutil.builders import snap, table, view
from tests._testutil.unstarved import Stopwatch


def member(name: str, history: Path | None = None) -> Member:
    return Member(name, Profile(name=name, source="profile", bootstrap=("127.0.0.1:9",)), history)


class Recorded:
    """A sink that keeps what it is given; can stop the fleet after N polls of a cluster."""

    def __init__(self, stop: asyncio.Event, cluster: str = "", after: int = 0) -> None:
        self.polls: list[tuple[str, ClusterSnapshot, Health | None, Sequence[Event]]] = []
        self.stop, self.cluster, self.after = stop, cluster, after
        self.closed = False

    async def on_poll(self, cluster: str, judged: JudgedPoll) -> None:
        self.polls.append((cluster, judged.snapshot, judged.health, judged.events))
        if cluster == self.cluster and sum(p[0] == cluster for p in self.polls) >= self.after:
            self.stop.set()

    async def aclose(self) -> None:
        self.closed = True


class Broken:
    async def on_poll(self, *args: Any) -> None:
        raise RuntimeError("a sink with a bug")

    async def aclose(self) -> None:
        raise RuntimeError("and on close too")


def sources(stuck: set[str]) -> Any:
    """Clusters in ``stuck`` never finish their first poll; the others answer at once."""
    never = asyncio.Event()
    started = time.time()

    def source(m: Member) -> Source:
        async def snapshots(stop: asyncio.Event) -> AsyncIterator[ClusterSnapshot]:
            seq = 0
            while not stop.is_set():
                if m.name in stuck:
                    await never.wait()
                seq += 1
                # Now-ish times: the recorder's retention judges ages against the clock.
                at = started + seq
                yield snap(view((0, 1, 2), [table("db.t", 1, [seq])]), seq=seq, t=at)
                await asyncio.sleep(0)  # a turn of the loop, no time

        async def release() -> None:
            return None

        return snapshots, release

    return source


@pytest.mark.asyncio
async def test_a_stuck_cluster_never_delays_another() -> None:
    stop = asyncio.Event()
    sink = Recorded(stop, cluster="fast", after=20)
    fleet = Fleet(
        [member("stuck"), member("fast")],
        [sink, Broken()],
        say=lambda _: None,
        source=sources({"stuck"}),
    )
    async with asyncio.timeout(10):
        await fleet.run(stop)
    seen = [p[0] for p in sink.polls]
    assert seen.count("fast") == 20 and "stuck" not in seen
    assert [p[1].seq for p in sink.polls] == list(range(1, 21))
    # Events and health were derived for every poll (no history: the fleet's own state).
    assert all(p[2] is not None for p in sink.polls)
    assert sink.closed
    status = {s.name: s for s in fleet.status()}
    assert status["fast"].polls == 20 and status["stuck"].polls == 0
    assert not status["fast"].running and status["fast"].crashed is None


@pytest.mark.asyncio
async def test_records_follows_a_held_file_and_serves_an_unwritable_one_live(
    tmp_path: Path,
) -> None:
    from store import open_writer

    held = tmp_path / "held.sqlite"
    writer = open_writer(held)  # another recorder holds this file
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    said: list[str] = []
    stop = asyncio.Event()
    sink = Recorded(stop, cluster="recorded", after=3)
    members = [
        member("recorded", tmp_path / "recorded.sqlite"),
        member("held", held),
        member("unwritable", blocked / "h.sqlite"),
    ]
    fleet = Fleet(members, [sink], say=said.append, source=sources(set()))
    try:
        async with asyncio.timeout(10):
            await fleet.run(stop)
    finally:
        writer.close()
    modes = {s.name: s.history for s in fleet.status()}
    assert modes == {
        "recorded": HistoryMode.RECORDING,
        "held": HistoryMode.FOLLOWING,
        "unwritable": HistoryMode.OFF,
    }
    assert any(s.startswith("unwritable: history off") for s in said), said
    assert any(s.startswith("held: following") for s in said), said
    # The unwritable cluster is still served live.
    assert any(p[0] == "unwritable" for p in sink.polls)
    from tests._testutil.history_files import poll_seqs

    assert poll_seqs(tmp_path / "recorded.sqlite")[:3] == [1, 2, 3]


@pytest.mark.asyncio
async def test_a_followed_file_is_taken_over_when_its_writer_lets_go(tmp_path: Path) -> None:
    import os

    from konsole.collect.history.rows import event_from_row
    from konsole.collect.history.takeover import TAKEN_OVER
    from store import open_reader, open_writer

    held = tmp_path / "held.sqlite"
    writer = open_writer(held)
    said: list[str] = []

    def say(text: str) -> None:
        said.append(text)
        if text.startswith("held: following"):
            writer.close()  # the `konsole record` holding it stops

    stop = asyncio.Event()
    sink = Recorded(stop, cluster="held", after=2)
    fleet = Fleet([member("held", held)], [sink], say=say, source=sources(set()))
    try:
        async with asyncio.timeout(10):
            await fleet.run(stop)
    finally:
        writer.close()
    assert [s.split(" ", 2)[1] for s in said[:2]] == ["following", "recording"], said
    assert said[1].endswith(f"({TAKEN_OVER})"), said
    assert fleet.status()[0].history is HistoryMode.RECORDING
    from tests._testutil.history_files import poll_seqs

    assert poll_seqs(held) == [1, 2]
    # The file itself says from when and by which process it was written, as a console's.
    with open_reader(held) as reader:
        (taken,) = [r for r in reader.events() if r.kind == "history_taken_over"]
    details = event_from_row(taken).details
    assert details["pid"] == os.getpid()
    # What serve said of the recorder it followed (here this process's own writer).
    followed = details["followed"]
    assert isinstance(followed, str) and f"pid {os.getpid()}" in followed and followed in said[0]


class Hanging(Recorded):
    async def aclose(self) -> None:
        await asyncio.Event().wait()  # never closes


@pytest.mark.asyncio
async def test_a_sink_that_never_closes_does_not_hold_the_stop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stop = asyncio.Event()
    hanging = Hanging(stop, cluster="a", after=2)
    fleet = Fleet([member("a")], [hanging], say=lambda _: None, source=sources(set()))
    fleet.stop_budget_s = 0.3
    watch = Stopwatch()  # less the CPU waits of a starved run (nice 19)
    async with asyncio.timeout(10):
        await fleet.run(stop)
    assert watch.elapsed() < 5
    assert "sink Hanging did not close in time" in caplog.text


def test_two_clusters_of_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="share a name"):
        Fleet([member("a"), member("a")], [])


@pytest.mark.parametrize(
    ("text", "expected"),
    [("127.0.0.1:9464", ("127.0.0.1", 9464)), ("[::1]:0", ("::1", 0))],
)
def test_listen(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text) == expected


def test_bad_input_exit_codes(tmp_path: Path) -> None:
    import socket

    config = tmp_path / "config.toml"
    config.write_text('[profiles.a]\nbootstrap = "127.0.0.1:9"\n')
    runner = CliRunner()
    unknown = runner.invoke(main, ["serve", "--config", str(config), "--profile", "nope"])
    assert unknown.exit_code == 3 and "no profile 'nope'" in unknown.output
    # --config given before the command name reaches it (not silently dropped).
    before = runner.invoke(main, ["--config", str(config), "serve", "--profile", "nope"])
    assert before.exit_code == 3 and f"{config}: no profile 'nope' (profiles: a)" in before.output
    refused = runner.invoke(main, ["--history", str(tmp_path / "h"), "serve"])
    assert refused.exit_code == 3 and "--history given before `serve`" in refused.output
    bad = runner.invoke(main, ["serve", "--config", str(config), "--listen", "9464"])
    assert bad.exit_code == 3 and "HOST:PORT" in bad.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = runner.invoke(
            main,
            ["serve", "--config", str(config), "--no-history", "--listen", f"127.0.0.1:{port}"],
        )
    assert busy.exit_code == 69 and "konsole: error: cannot listen on" in busy.stderr

"""``konsole demo --upgrade`` without a cluster: the order of the moves, the gate before
each, what stops the upgrade, and the demo's option checks (played on a fake cluster and
a fake gate, at once). The live proof is tests/live/test_rolling_upgrade_live.py, which
plays the same script on its cluster behind the real gate."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from konsole.localcluster.state import ClusterDescription, ProcessInfo, SaslInfo
from konsole.localcluster.upgrade_play import GateAnswer, Move, UpgradePlay, upgrade_order

HOME = Path("/opt/fluss-1.0")


def _proc(role: str, sid: int) -> ProcessInfo:
    return ProcessInfo(role, sid, 100 + sid, True, {}, "x.log", None, None)


def _desc(tablets: int, coordinators: int) -> ClusterDescription:
    procs = [_proc("zookeeper", 0)]
    procs += [_proc("coordinator", c) for c in range(coordinators)]
    procs += [_proc("tablet-server", t) for t in reversed(range(tablets))]
    return ClusterDescription(
        "0.9.1-incubating", None, "/r", True, "", "", SaslInfo(False), "", None, tuple(procs)
    )


class FakeCluster:
    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail = fail

    def stop_server(self, role: str, sid: int, timeout: float = 60.0) -> None:
        self.calls.append(("stop", role, sid))

    def start_server(
        self, role: str, sid: int, ready_timeout: float = 90.0, fluss_home: Any = None
    ) -> Any:
        if self.fail == role:
            raise RuntimeError("did not start")
        self.calls.append(("start", role, sid, fluss_home))
        return _Info("1.0-SNAPSHOT")


class _Info:
    def __init__(self, version: str) -> None:
        self.version = version


class FakeGate:
    """Safe, unless told which asks (by their order) say WAIT."""

    def __init__(self, closed: set[int] | None = None) -> None:
        self.asked: list[int | None] = []
        self.closed = closed or set()

    def __call__(self, server: int | None, say: Callable[[str], None]) -> GateAnswer:
        self.asked.append(server)
        if len(self.asked) - 1 in self.closed:
            say("waiting: x")
            return GateAnswer(False, "WAIT: under-replicated", 300.0, ("waiting: x",))
        return GateAnswer(True, "SAFE: the next server may be taken down now", 1.0)


def play(moves: list[Move], cluster: FakeCluster, gate: FakeGate) -> tuple[UpgradePlay, list[str]]:
    notes: list[str] = []
    p = UpgradePlay(
        cluster,  # type: ignore[arg-type]
        moves,
        fluss_home=HOME,
        version="1.0-SNAPSHOT",
        gate=gate,
        note=notes.append,
        after_s=0,
    )
    p.run()
    return p, notes


MOVES = [Move("tablet-server", 0), Move("tablet-server", 1), Move("coordinator", 0)]


def test_the_order_is_tablet_servers_by_id_then_standbys_then_the_active_coordinator() -> None:
    desc = _desc(3, 2)
    assert upgrade_order(desc, active=0) == [
        Move("tablet-server", 0),
        Move("tablet-server", 1),
        Move("tablet-server", 2),
        Move("coordinator", 1),  # the standby
        Move("coordinator", 0),  # the active one, last
    ]
    assert upgrade_order(desc, active=1)[-2:] == [Move("coordinator", 0), Move("coordinator", 1)]
    assert upgrade_order(_desc(1, 1), active=None) == [
        Move("tablet-server", 0),
        Move("coordinator", 0),
    ]


def test_each_server_moves_after_the_gate_opens_and_the_gate_is_asked_at_the_end() -> None:
    cluster, gate = FakeCluster(), FakeGate()
    p, notes = play(MOVES, cluster, gate)
    assert cluster.calls == [
        ("stop", "tablet-server", 0),
        ("start", "tablet-server", 0, HOME),
        ("stop", "tablet-server", 1),
        ("start", "tablet-server", 1, HOME),
        ("stop", "coordinator", 0),
        ("start", "coordinator", 0, HOME),
    ]
    # the tablet server about to go down is named to the gate; the coordinator's and the
    # last one are cluster-wide
    assert gate.asked == [0, 1, None, None]
    assert [r.move for r in p.done] == MOVES and p.failed == []
    assert p.final is not None and p.final.safe
    assert notes[0].startswith("demo upgrade: begins in 0 s: 3 servers onto 1.0-SNAPSHOT")
    assert notes[-1] == "demo upgrade: over"
    gate_lines = [n for n in notes if n.startswith("demo upgrade: gate before")]
    assert gate_lines[:2] == [
        "demo upgrade: gate before tablet-server 0",
        "demo upgrade: gate before tablet-server 1",
    ]
    assert p.summary() == "upgrade: 3 of 3 servers on 1.0-SNAPSHOT"


def test_a_gate_that_does_not_open_stops_the_upgrade_with_every_server_up() -> None:
    cluster, gate = FakeCluster(), FakeGate(closed={1})
    p, notes = play(MOVES, cluster, gate)
    assert cluster.calls == [
        ("stop", "tablet-server", 0),
        ("start", "tablet-server", 0, HOME),
    ]  # tablet server 1 was never stopped
    assert p.failed == ["the gate did not open before tablet-server 1"]
    assert "demo upgrade: gate waiting: x" in notes  # what the gate waited for, said
    assert (
        notes[-1] == "demo upgrade: the gate did not open: the upgrade stops before tablet-server 1"
    )
    assert p.final is None
    assert p.summary() == (
        "upgrade: 1 of 3 servers on 1.0-SNAPSHOT; stopped: the gate did not open before "
        "tablet-server 1"
    )


def test_a_server_that_does_not_start_stops_the_upgrade() -> None:
    cluster, gate = FakeCluster(fail="coordinator"), FakeGate()
    p, notes = play(MOVES, cluster, gate)
    assert p.failed == ["coordinator 0: did not start"]
    assert notes[-1] == "demo upgrade: coordinator 0 failed: did not start"
    assert len(p.done) == 2 and p.final is None


def test_each_move_is_handed_on_as_it_is_done() -> None:
    seen: list[str] = []
    p = UpgradePlay(
        FakeCluster(),  # type: ignore[arg-type]
        MOVES,
        fluss_home=HOME,
        version="1.0-SNAPSHOT",
        gate=FakeGate(),
        note=lambda _: None,
        after_s=0,
        on_move=lambda r: seen.append(r.move.subject),
    )
    p.run()
    assert seen == ["tablet-server 0", "tablet-server 1", "coordinator 0"]


def test_stop_ends_the_upgrade_before_its_first_step() -> None:
    cluster, gate = FakeCluster(), FakeGate()
    p = UpgradePlay(
        cluster,  # type: ignore[arg-type]
        MOVES,
        fluss_home=HOME,
        version="1.0-SNAPSHOT",
        gate=gate,
        note=lambda _: None,
        after_s=30,
    )
    p.start()
    p.stop(timeout=5)
    assert cluster.calls == [] and gate.asked == [] and p.done == []


def _distribution(tmp_path: Path, version: str) -> Path:
    home = tmp_path / f"fluss-{version}"
    (home / "lib").mkdir(parents=True)
    with zipfile.ZipFile(home / "lib" / f"fluss-server-{version}.jar", "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", f"Implementation-Version: {version}\n")
    (home / "lib" / f"fluss-metrics-prometheus-{version}.jar").write_bytes(b"")
    return home


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--upgrade"], "--upgrade needs the distribution to upgrade to"),
        (["--upgrade", "--incident", "--fluss-home", "{one_zero}"], "one at a time"),
        (["--upgrade", "--fluss-home", "{zero_nine}"], "nothing to upgrade"),
    ],
)
def test_the_demo_refuses_an_upgrade_it_cannot_play_before_anything_starts(
    args: list[str], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from konsole.cli import cluster as cli_cluster

    def started(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(cli_cluster.LocalCluster, "start", started)
    monkeypatch.delenv("KONSOLE_FLUSS_HOME", raising=False)
    homes = {
        "one_zero": str(_distribution(tmp_path, "1.0-SNAPSHOT")),
        "zero_nine": str(_distribution(tmp_path, "0.9.1-incubating")),
    }
    argv = [a.format(**homes) for a in args] + ["--no-console", "--run-dir", str(tmp_path / "r")]
    done = CliRunner().invoke(cli_cluster.demo, argv)
    assert done.exit_code == 2, done.output
    assert says in done.output


def test_the_upgrade_delay_option_is_hidden_and_the_flag_is_documented() -> None:
    from konsole.cli.cluster import demo

    shown = CliRunner().invoke(demo, ["--help"]).output
    assert "--upgrade-after" not in shown
    assert "--upgrade" in shown and "rolling upgrade" in shown

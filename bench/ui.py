"""The console's own cost: first paint, a 1,600-bucket refresh, CPU while idle.

No cluster is needed: the console is fed states from a recorded history (the screen tests'
scenario, ``tests/_testutil/console.py``) or built here for a 200-table x 8-bucket cluster,
so what is measured is the UI, not the network. Three figures:

1. **Time to first paint**, per process (spawn to the first frame painted, the interpreter
   and imports included) of ``konsole``'s app on the overview, against a bare Textual app
   (a Header, a Static, a Footer) measured in the same run. Goal <= 1.5x. The console's
   first frame is the overview before its first poll ends (what an operator sees first);
   the first frame with data (a recorded state read from a history file) is printed too.
2. **Refresh of the 1,600-bucket table view**: a new state published to the Tables screen
   of a 200-table x 8-bucket cluster, until the frame is painted. Median / p90 over
   ``--refreshes``. Goal < 50 ms.
3. **CPU while idle** at a 2 s refresh: a headless console process fed the large state
   every 2 s for ``--idle-seconds`` (60 by default), utime + stime from /proc against wall
   time, on the Tables screen (the heaviest refresh: every table's offsets change every
   time) and on the Overview. Goal < 3 % of one core.

    python bench/ui.py [--reps 7] [--refreshes 30] [--idle-seconds 60] [--json]
    python bench/ui.py --quick      # smoke run (1 rep, 3 refreshes, 2 s idle), seconds
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _quick import add_quick, parse_args  # noqa: E402  (bench/ is the script's dir)

MARK = "FIRST-PAINT"


# =========================================================================== states


def large_state(now: float, tables: int = 200, buckets: int = 8, seq: int = 2) -> Any:
    """A live state of a healthy ``tables`` x ``buckets`` cluster (3 tablet servers)."""
    from fluss_proto.client import TablePath
    from fluss_proto.model import BucketView, ClusterView, ServerInfo, TableView
    from fluss_proto.types import TableInfo, parse_table_descriptor
    from konsole.model.health import evaluate
    from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole, CoordinatorStatus
    from konsole.ui.state import ConsoleState

    def snapshot(step: int, t: float) -> ClusterSnapshot:
        views = []
        for i in range(tables):
            path = TablePath.of(f"bench_db{i % 4}.t{i:03d}")
            doc = {
                "version": 1,
                "schema": {
                    "version": 1,
                    "columns": [
                        {"name": "id", "data_type": {"type": "BIGINT"}, "id": 0},
                        {"name": "v", "data_type": {"type": "STRING"}, "id": 1},
                    ],
                },
                "partition_key": [],
                "bucket_count": buckets,
                "properties": {"table.replication.factor": "3"},
                "custom_properties": {},
            }
            info = TableInfo.from_descriptor(
                path.database,
                path.table,
                table_id=1000 + i,
                schema_id=1,
                descriptor=parse_table_descriptor(doc),
                created_ms=0,
                modified_ms=0,
            )
            bviews = tuple(
                BucketView(
                    table_id=1000 + i,
                    partition_id=None,
                    partition_name=None,
                    bucket_id=b,
                    leader_id=b % 3 + 1,
                    replica_ids=(b % 3 + 1, (b + 1) % 3 + 1, (b + 2) % 3 + 1),
                    leader_epoch=0,
                    latest_offset=1000 * b + 37 * i * step,
                    earliest_offset=0,
                )
                for b in range(buckets)
            )
            views.append(TableView(path, 1000 + i, info, (), bviews))
        view = ClusterView(
            coordinator=ServerInfo(0, "coordinator", "127.0.0.1", 9123),
            tablet_servers=tuple(ServerInfo(s, "tablet", "127.0.0.1", 9200 + s) for s in (1, 2, 3)),
            databases=tuple(f"bench_db{d}" for d in range(4)),
            tables=tuple(views),
            errors=(),
            round_trips=3,
            requests=12,
            started_at=t,
            duration_s=0.05,
        )
        coords = (CoordinatorStatus("127.0.0.1:9123", CoordinatorRole.ACTIVE),)
        return ClusterSnapshot.assemble(
            seq=step, taken_at=t, latency_s=0.05, view=view, coordinators=coords
        )

    previous, current = snapshot(seq - 1, now - 2.0), snapshot(seq, now)
    return ConsoleState(
        profile="bench",
        now=now,
        snapshot=current,
        last_ok=current,
        previous_ok=previous,
        health=evaluate(current, previous=previous),
    )


def _story_file() -> Path:
    """The scenario's history, written once by the parent (not part of a first paint)."""
    from tests._testutil.console import record_story

    path = Path(tempfile.mkdtemp(prefix="konsole-ui-bench-")) / "story.sqlite"
    return record_story(path, polls=6)


# =========================================================================== children


def _child_bare() -> None:
    from textual.app import App, ComposeResult
    from textual.widgets import Footer, Header, Static

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Header()
            yield Static("hello")
            yield Footer()

    async def first_paint(pilot: Any) -> None:
        await pilot.pause()
        print(MARK, flush=True)
        pilot.app.exit()

    Bare().run(headless=True, size=(100, 30), auto_pilot=first_paint)


def _child_konsole_connecting() -> None:
    """The console's first frame as an operator sees it at start: the overview, before
    its first poll has ended (a live feed publishes nothing until then)."""
    from konsole.ui.app import KonsoleApp
    from konsole.ui.feed import StaticFeed

    async def first_paint(pilot: Any) -> None:
        await pilot.pause()
        print(MARK, flush=True)
        pilot.app.exit()

    KonsoleApp(StaticFeed([], name="bench")).run(
        headless=True, size=(100, 30), auto_pilot=first_paint
    )


def _child_konsole(story: Path) -> None:
    """The console on the overview with data: a recorded state read from the history file
    (reading it is part of the time)."""
    from konsole.ui.app import KonsoleApp
    from konsole.ui.feed import StaticFeed
    from tests._testutil.console import T0, story_state

    state = story_state(story, T0 + 50)

    async def first_paint(pilot: Any) -> None:
        app = pilot.app
        for _ in range(500):
            if app.live_state is not None:
                break
            await pilot.pause(0.01)
        await pilot.pause()
        print(MARK, flush=True)
        app.exit()

    KonsoleApp(StaticFeed([state], name="bench")).run(
        headless=True, size=(100, 30), auto_pilot=first_paint
    )


def _child_idle(seconds: float, screen_key: str) -> None:
    """A console fed a new large state every 2 s (as a 2 s poll would), for ``seconds``."""
    from konsole.ui.app import KonsoleApp
    from konsole.ui.feed import StaticFeed

    t0 = time.time()
    states = [large_state(t0 + 2 * i, seq=i + 2) for i in range(int(seconds / 2) + 2)]
    # A real console holds two or three snapshots, not a minute of them: the pre-built
    # states are kept out of the garbage collector's scans, as they would not exist.
    gc.freeze()

    async def idle(pilot: Any) -> None:
        await pilot.press(screen_key)  # "t": the Tables screen, the heaviest refresh
        print("READY", flush=True)
        await asyncio.sleep(seconds + 5)
        pilot.app.exit()

    KonsoleApp(StaticFeed(states, name="bench", interval=2.0)).run(
        headless=True, size=(120, 40), auto_pilot=idle
    )


# =========================================================================== measurements


def first_paint(kind: str, story: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", kind, "--story", str(story)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    elapsed = None
    for line in proc.stdout:
        if line.strip() == MARK:
            elapsed = time.perf_counter() - started
            break
    proc.wait(timeout=60)
    if elapsed is None:
        raise RuntimeError(f"{kind}: no first paint (exit {proc.returncode})")
    return elapsed


async def refresh_times(refreshes: int) -> tuple[list[float], list[float]]:
    """CPU and wall time per refresh. The wall time includes the pilot's wait for the app
    to be idle (about 20 ms of waiting on this machine, measured with nothing to do), so
    the CPU time is the refresh's own cost."""
    from konsole.ui.app import KonsoleApp
    from konsole.ui.feed import StaticFeed

    t0 = time.time()
    states = [large_state(t0 + 2 * i, seq=i + 2) for i in range(refreshes + 1)]
    gc.freeze()  # as in _child_idle
    app = KonsoleApp(StaticFeed(states[:1], name="bench"))
    cpu: list[float] = []
    wall: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("t")
        await pilot.pause()
        for state in states[1:]:
            started, cpu0 = time.perf_counter(), time.process_time()
            app.publish(state)
            await pilot.pause()  # the screen's messages handled and the frame painted
            wall.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu0)
    gc.unfreeze()
    return cpu, wall


def idle_cpu(seconds: float, screen_key: str) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of an idle console over ``seconds`` after warm-up."""
    proc = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--child",
            "idle",
            "--idle-seconds",
            str(seconds),
            "--screen",
            screen_key,
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "READY":
            break
    time.sleep(2.0)  # past the first refresh of the Tables screen
    tick = os.sysconf("SC_CLK_TCK")

    def cpu() -> float:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime, stime

    c0, w0 = cpu(), time.monotonic()
    time.sleep(seconds)
    c1, w1 = cpu(), time.monotonic()
    proc.wait(timeout=seconds + 60)
    return c1 - c0, w1 - w0


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": statistics.median(ordered),
        "p90": ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))],
        "min": ordered[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", choices=("bare", "konsole", "konsole-connecting", "idle"))
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--refreshes", type=int, default=30)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--story", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--screen", default="t", help=argparse.SUPPRESS)
    add_quick(parser, {"reps": 1, "refreshes": 3, "idle_seconds": 2.0})
    args = parse_args(parser)
    if args.child == "bare":
        return _child_bare()
    if args.child == "konsole":
        return _child_konsole(args.story)
    if args.child == "konsole-connecting":
        return _child_konsole_connecting()
    if args.child == "idle":
        return _child_idle(args.idle_seconds, args.screen)

    story = _story_file()
    bare: list[float] = []
    ours: list[float] = []
    with_data: list[float] = []
    for _ in range(max(1, args.reps)):  # interleaved, so all see the same machine
        bare.append(first_paint("bare", story))
        ours.append(first_paint("konsole-connecting", story))
        with_data.append(first_paint("konsole", story))
    refresh, refresh_wall = asyncio.run(refresh_times(max(1, args.refreshes)))
    cpu_s, wall_s = idle_cpu(args.idle_seconds, "t")
    overview_cpu_s, overview_wall_s = idle_cpu(args.idle_seconds, "o")
    summary = {
        "first_paint_bare_s": _stats(bare),
        "first_paint_konsole_s": _stats(ours),
        "first_paint_ratio": statistics.median(ours) / statistics.median(bare),
        "first_paint_with_data_s": _stats(with_data),
        "first_paint_with_data_ratio": statistics.median(with_data) / statistics.median(bare),
        "refresh_1600_buckets_cpu_s": _stats(refresh),
        "refresh_1600_buckets_wall_s": _stats(refresh_wall),
        "idle_cpu_percent": 100.0 * cpu_s / wall_s,
        "idle_seconds": wall_s,
        "idle_overview_cpu_percent": 100.0 * overview_cpu_s / overview_wall_s,
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
    }
    if args.json:
        print(json.dumps(summary, indent=1))
        return None
    fb, fk = summary["first_paint_bare_s"], summary["first_paint_konsole_s"]
    print(
        f"first paint, bare Textual app: median {fb['median'] * 1000:.0f} ms, "
        f"p90 {fb['p90'] * 1000:.0f} ms ({args.reps} processes)"
    )
    print(
        f"first paint, konsole overview (connecting): median {fk['median'] * 1000:.0f} ms, "
        f"p90 {fk['p90'] * 1000:.0f} ms"
    )
    print(f"  ratio konsole / bare: {summary['first_paint_ratio']:.2f}x (goal <= 1.5x)")
    fd = summary["first_paint_with_data_s"]
    print(
        f"first paint, konsole overview with a recorded state: median "
        f"{fd['median'] * 1000:.0f} ms, p90 {fd['p90'] * 1000:.0f} ms, ratio "
        f"{summary['first_paint_with_data_ratio']:.2f}x"
    )
    r, rw = summary["refresh_1600_buckets_cpu_s"], summary["refresh_1600_buckets_wall_s"]
    print(
        f"refresh of the 200-table x 8-bucket Tables screen: CPU median "
        f"{r['median'] * 1000:.1f} ms, p90 {r['p90'] * 1000:.1f} ms over {len(refresh)} "
        f"(goal < 50 ms); wall incl. the pilot's idle wait: median {rw['median'] * 1000:.1f} ms"
    )
    print(
        f"CPU while idle at a 2 s refresh, Tables screen of 1,600 buckets: "
        f"{summary['idle_cpu_percent']:.2f} % of one core over {wall_s:.0f} s (goal < 3 %)"
    )
    print(
        f"CPU while idle at a 2 s refresh, Overview of the same cluster: "
        f"{summary['idle_overview_cpu_percent']:.2f} % of one core"
    )
    return None


if __name__ == "__main__":
    main()

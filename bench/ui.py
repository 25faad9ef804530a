"""The console's own cost: first paint, a 1,600-bucket refresh, CPU while idle, big tables.

No cluster is needed: the console is fed states from a recorded history (the screen tests'
scenario, ``tests/_testutil/console.py``) or built here for a 200-table x 8-bucket cluster,
so what is measured is the UI, not the network. Four figures:

1. **Time to first paint**, per process (spawn to the first frame painted, the interpreter
   and imports included) of ``konsole``'s app on the overview, against a bare Textual app
   (a Header, a Static, a Footer) measured in the same run. Goal <= 1.2x (issue 22). The
   console's first frame is the overview before its first poll ends (what an operator sees
   first); the first frame with data (a recorded state read from a history file) is printed
   too. Wall and CPU (user + system of the whole child, which exits once painted: what load
   does not inflate) are printed with the load average. The children read bytecode, as an
   installed konsole does (``installed_bytecode``, bench/_bytecode.py, compiles ours and
   the test helpers the children import first), after one unmeasured run of each kind
   (``--warm-runs``; none in a smoke run).
2. **Refresh of the 1,600-bucket table view**: a new state published to the Tables screen
   of a 200-table x 8-bucket cluster, until the frame is painted; the same for the Overview
   (its dashboard: throughput, servers, requests, hot tables). Median / p90 over
   ``--refreshes``. Goal < 50 ms.
3. **CPU while idle** at a 2 s refresh: a headless console process fed the large state
   every 2 s for ``--idle-seconds`` (60 by default), utime + stime from /proc against wall
   time, on the Tables screen (the heaviest refresh: every table's offsets change every
   time) and on the Overview. Goal < 3 % of one core.
4. **Big tables** (in process, fresh consoles): the Table detail of one table opened until
   its bucket rows are painted, 8 buckets against 1,600 (goal: within 1.5x), with the
   longest frame; the Tables screen of a 10,000-table cluster opened, refreshed by new polls
   and filtered, each with its longest frame; a 300-column x 2,000-row preview, the longest
   frame of each key (down, page down, right, next page, the column window; goal < 50 ms).
   A frame is a stretch the event loop was busy: :class:`LongestFrame` measures it.

    python bench/ui.py [--reps 7] [--refreshes 30] [--idle-seconds 60] [--json]
        [--parts paint,refresh,idle,big]
    python bench/ui.py --quick      # smoke run (1 rep, 3 refreshes, 1 s idle, no warm-up
                                    # run, the big tables and key presses / 10), seconds
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import json
import os
import resource
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

from _bytecode import installed_bytecode  # noqa: E402  (bench/ is the script's dir)
from _quick import add_quick, parse_args  # noqa: E402

MARK = "FIRST-PAINT"
#: The console's first paint against a bare Textual app's (issue 22).
PAINT_GOAL = 1.2


# =========================================================================== states


def large_state(now: float, tables: int = 200, buckets: int = 8, seq: int = 2) -> Any:
    """A live state of a healthy, busy ``tables`` x ``buckets`` cluster (3 tablet servers
    with their metrics)."""
    from types import MappingProxyType

    from fluss_proto.client import TablePath
    from fluss_proto.model import BucketView, ClusterView, ServerInfo, TableView
    from fluss_proto.types import TableInfo, parse_table_descriptor
    from konsole.model.metrics import ServerMetrics
    from konsole.model.poll import judge_recorded
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
            seq=step,
            taken_at=t,
            latency_s=0.05,
            view=view,
            coordinators=coords,
            metrics=tuple(server_metrics(s, step, t) for s in (1, 2, 3)),
        )

    def server_metrics(sid: int, step: int, t: float) -> ServerMetrics:
        """A busy tablet server whose every figure moves from poll to poll (so each of the
        dashboard's cells and sparklines changes on every refresh)."""
        wave = (step * 7 + sid * 3) % 11
        return ServerMetrics(
            url=f"http://127.0.0.1:{9250 + sid}/metrics",
            role="tablet",
            server_id=str(sid),
            host="127.0.0.1",
            scraped_at=t,
            duration_s=0.004,
            disk_usage_ratio=0.30 + 0.01 * sid + 0.001 * step,
            disk_write_locked=False,
            under_replicated=0,
            leader_count=tables * buckets // 3,
            replica_count=tables * buckets,
            bytes_in_rate=5e6 * sid + 1e4 * wave,
            bytes_out_rate=2e6 * sid + 1e4 * wave,
            messages_in_rate=4e4 * sid + 100 * wave,
            requests=MappingProxyType(
                {
                    "produceLog": (900.0 * sid + wave, 0.1 * wave),
                    "fetchLogClient": (400.0 * sid + wave, 0.0),
                    "putKv": (50.0 + wave, 0.02 * wave),
                }
            ),
            request_latency_ms=MappingProxyType(
                {"produceLog": 4.0 + wave, "fetchLogClient": 500.0 + wave, "putKv": 9.0}
            ),
            heap_used=256e6 + 1e6 * wave,
            heap_max=1024e6,
            cpu_load=0.2 + 0.01 * wave,
        )

    previous, current = snapshot(seq - 1, now - 2.0), snapshot(seq, now)
    # Judged once, as the session judges each poll: the state carries the judged poll.
    judged = judge_recorded(current, (), None, last_ok=previous, previous_ok=None, facts=None)
    return ConsoleState(profile="bench", now=now, judged=judged)


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
        # Until the parent has measured and says so (a line on stdin), bounded in time.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.to_thread(sys.stdin.readline), seconds + 10)
        pilot.app.exit()

    KonsoleApp(StaticFeed(states, name="bench", interval=2.0)).run(
        headless=True, size=(120, 40), auto_pilot=idle
    )


# =========================================================================== measurements


def first_paint(kind: str, story: Path) -> float:
    """Wall seconds of one child from spawn to its first paint (bench/startup.py's timer)."""
    return paint_times(kind, story)[0]


def paint_times(kind: str, story: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one child from spawn to its first paint (CPU: the whole child,
    its exit included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
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
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


async def refresh_times(refreshes: int, screen_key: str = "t") -> tuple[list[float], list[float]]:
    """CPU and wall time per refresh of the screen ``screen_key`` opens (``t`` Tables,
    ``o`` the Overview). The wall time includes the pilot's wait for the app to be idle
    (about 20 ms of waiting on this machine, measured with nothing to do), so the CPU time
    is the refresh's own cost."""
    from konsole.ui.app import KonsoleApp
    from konsole.ui.feed import StaticFeed

    t0 = time.time()
    states = [large_state(t0 + 2 * i, seq=i + 2) for i in range(refreshes + 1)]
    gc.freeze()  # as in _child_idle
    app = KonsoleApp(StaticFeed(states[:1], name="bench"))
    cpu: list[float] = []
    wall: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(screen_key)
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
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdin is not None and proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "READY":
            break
    else:
        raise RuntimeError(f"idle console never ready (exit {proc.wait(timeout=60)})")
    time.sleep(min(2.0, seconds))  # past the first refresh of the Tables screen
    tick = os.sysconf("SC_CLK_TCK")

    def cpu() -> float:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime, stime

    c0, w0 = cpu(), time.monotonic()
    time.sleep(seconds)
    c1, w1 = cpu(), time.monotonic()
    proc.stdin.write("done\n")
    proc.stdin.close()
    if proc.wait(timeout=60) != 0:
        raise RuntimeError(f"idle console exit {proc.returncode}")
    return c1 - c0, w1 - w0


# =========================================================================== big tables


class LongestFrame:
    """The longest stretch the event loop was busy while :meth:`watch` ran: a ticker on
    the app's own loop that wakes every ``TICK`` seconds; any lateness is a frame nobody
    could interrupt (a handler, a layout, a paint)."""

    TICK = 0.002

    def __init__(self) -> None:
        self.longest = 0.0
        #: CPU seconds of the process while the last watch ran (what load does not inflate).
        self.cpu = 0.0
        #: CPU seconds of the event loop's own thread meanwhile (a worker's are not in it).
        self.ui_cpu = 0.0

    async def _tick(self, limit_s: float) -> None:
        last = deadline = time.perf_counter()
        deadline += limit_s
        for _ in range(int(limit_s / self.TICK) + 1):  # bounded: limit_s at most
            await asyncio.sleep(self.TICK)
            now = time.perf_counter()
            self.longest = max(self.longest, now - last - self.TICK)
            last = now
            if now > deadline:
                return

    async def watch(self, what: Any, limit_s: float = 120.0) -> float:
        """Run ``await what()`` and answer the longest frame seen meanwhile."""
        self.longest = 0.0
        task = asyncio.create_task(self._tick(limit_s))
        await asyncio.sleep(0)  # the ticker's clock starts before the work does
        cpu, ui_cpu = time.process_time(), time.thread_time()
        try:
            await what()
        finally:
            self.cpu = time.process_time() - cpu
            self.ui_cpu = time.thread_time() - ui_cpu
            await asyncio.sleep(self.TICK * 2)  # the last frame's lateness is seen
            task.cancel()
        return self.longest


async def _painted(pilot: Any, grid: Any) -> None:
    """Until the app is idle and ``grid`` has drawn rows (bounded: 5 s)."""
    for _ in range(500):
        await pilot.pause()
        if grid.rows_painted:  # a data row's line was drawn (the header's alone is not)
            return
        await asyncio.sleep(0.01)
    raise RuntimeError("the table was never painted")


async def detail_open(buckets: int, reps: int) -> dict[str, list[float]]:
    """Open the Table detail of one table of ``buckets`` buckets until its bucket rows are
    painted: wall seconds, CPU seconds and the longest frame per repetition, a fresh
    console each time."""
    state = large_state(time.time(), tables=1, buckets=buckets)
    out: dict[str, list[float]] = {"wall": [], "cpu": [], "frame": []}
    for _ in range(reps):
        wall, cpu, frame = await _detail_open_once(state)
        out["wall"].append(wall)
        out["cpu"].append(cpu)
        out["frame"].append(frame)
    return out


async def _detail_open_once(state: Any) -> tuple[float, float, float]:
    from konsole.ui.app import KonsoleApp
    from konsole.ui.feed import StaticFeed

    app = KonsoleApp(StaticFeed([state], name="bench"))
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(500):
            if app.live_state is not None:
                break
            await pilot.pause(0.01)
        await pilot.pause()

        async def open_it() -> None:
            app.open_table("bench_db0.t000")
            await pilot.pause()
            await _painted(pilot, app.screen.query_one("#detail-buckets"))

        started, watch = time.perf_counter(), LongestFrame()
        frame = await watch.watch(open_it)
        return time.perf_counter() - started, watch.cpu, frame


async def _rows_shown(pilot: Any, screen: Any) -> None:
    """Until the Tables screen shows the last poll it was given (a big cluster's rows are
    made in a thread worker; bounded: 10 s), then one pause for its paint. Waited in 2 ms
    sleeps, not pilot pauses: a pause is work of its own, counted in the CPU figures."""
    for _ in range(5000):
        if not getattr(screen, "making_rows", False):  # an older screen: shown at once
            break
        await asyncio.sleep(0.002)
    else:
        raise RuntimeError("the Tables screen never showed its poll")
    await pilot.pause()


async def tables_10k(tables: int, refreshes: int) -> dict[str, Any]:
    """The Tables screen of a ``tables``-table cluster: opened, refreshed by new polls,
    filtered and cleared; wall time and the longest frame of each (a refresh lasts until
    the screen shows the poll)."""
    from konsole.ui.app import KonsoleApp
    from konsole.ui.feed import StaticFeed

    t0 = time.time()
    # The states of the first and the next polls, built ahead (not part of a refresh).
    states = [
        large_state(t0 + 2 * i, tables=tables, buckets=1, seq=i + 2) for i in range(refreshes + 1)
    ]
    gc.freeze()
    app = KonsoleApp(StaticFeed(states[:1], name="bench"))
    watch = LongestFrame()
    out: dict[str, Any] = {"refresh_wall_s": [], "refresh_frame_s": [], "refresh_cpu_s": []}
    out["tables"], out["refresh_ui_cpu_s"] = tables, []
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(500):
            if app.live_state is not None:
                break
            await pilot.pause(0.01)

        async def open_it() -> None:
            await pilot.press("t")
            await _rows_shown(pilot, app.screen)
            await _painted(pilot, app.screen.query_one("#tables-table"))

        started = time.perf_counter()
        out["open_frame_s"] = await watch.watch(open_it)
        out["open_wall_s"] = time.perf_counter() - started
        out["open_cpu_s"] = watch.cpu
        for state in states[1:]:

            async def refresh(state: Any = state) -> None:
                app.publish(state)
                await _rows_shown(pilot, app.screen)

            started = time.perf_counter()
            out["refresh_frame_s"].append(await watch.watch(refresh))
            out["refresh_wall_s"].append(time.perf_counter() - started)
            out["refresh_cpu_s"].append(watch.cpu)
            out["refresh_ui_cpu_s"].append(watch.ui_cpu)

        out.update(await _few_moved(app, pilot, watch, states))

        async def filter_and_clear() -> None:
            await pilot.press("slash", *"t9999", "enter", "escape")
            await _rows_shown(pilot, app.screen)

        started = time.perf_counter()
        out["filter_frame_s"] = await watch.watch(filter_and_clear)
        out["filter_wall_s"] = time.perf_counter() - started
        out["filter_cpu_s"] = watch.cpu
    gc.unfreeze()
    return out


async def _few_moved(
    app: Any, pilot: Any, watch: LongestFrame, states: list[Any]
) -> dict[str, list[float]]:
    """New polls in which 1 % of the tables moved (the rest as in the poll before): what
    a refresh costs when little changed."""
    from dataclasses import replace

    from konsole.model.poll import judge_recorded

    fixed = states[0].last_ok
    moved = max(1, len(fixed.view.tables) // 100)
    polls = []
    for state in states[1:]:
        snap = state.last_ok
        view = replace(snap.view, tables=snap.view.tables[:moved] + fixed.view.tables[moved:])
        polls.append(replace(snap, view=view))
    out: dict[str, list[float]] = {"few_cpu_s": [], "few_frame_s": []}
    for before, snap in itertools.pairwise([fixed, *polls]):
        # Judged before it is shown, as the session judges a poll before the console sees it.
        judged = judge_recorded(snap, (), None, last_ok=before, previous_ok=None, facts=None)
        state = replace(states[0], now=snap.taken_at, judged=judged)

        async def refresh(state: Any = state) -> None:
            app.publish(state)
            await _rows_shown(pilot, app.screen)

        out["few_frame_s"].append(await watch.watch(refresh))
        out["few_cpu_s"].append(watch.cpu)
    return out


async def preview_scroll(columns: int, rows: int, scale: int = 1) -> dict[str, list[float]]:
    """A ``columns``-column preview of ``rows`` rows: the longest frame of each key press
    (cursor down, page down, next page, the next column window, scrolling right); ``scale``
    divides the number of presses of each key (at least one)."""
    from konsole.ui.app import KonsoleApp
    from konsole.ui.feed import StaticFeed
    from konsole.ui.screens.tables.preview import PreviewScreen
    from tests._testutil.console import fake_preview

    result = fake_preview("wide.table", rows, columns=columns)

    async def scan(request: Any) -> Any:
        return result

    app = KonsoleApp(StaticFeed([large_state(time.time(), tables=2)], name="bench", scan=scan))
    watch = LongestFrame()

    def times(n: int) -> int:
        return max(1, n // scale)

    keys = {
        "down": ["down"] * times(30),
        "pagedown": ["pagedown"] * times(10),
        "right": ["right"] * times(20),
        "next_page": ["n"] * times(5),
        "column_window": ["right_square_bracket"] * times(5) + ["left_square_bracket"] * times(5),
    }
    out: dict[str, list[float]] = {name: [] for name in ("open", *keys)}
    cpu: dict[str, list[float]] = {f"{name}_cpu": [] for name in ("open", *keys)}
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(500):
            if app.live_state is not None:
                break
            await pilot.pause(0.01)
        screen = PreviewScreen("wide.table")

        async def open_it() -> None:
            app.push_screen(screen)
            for _ in range(500):
                await pilot.pause()
                if screen.result is not None:
                    break
                await asyncio.sleep(0.01)
            await _painted(pilot, screen.query_one("#preview-rows"))

        out["open"].append(await watch.watch(open_it))
        cpu["open_cpu"].append(watch.cpu)
        for name, presses in keys.items():
            for key in presses:

                async def press(key: str = key) -> None:
                    await pilot.press(key)
                    await pilot.pause()

                out[name].append(await watch.watch(press))
                cpu[f"{name}_cpu"].append(watch.cpu)
    return {**out, **cpu}


#: The small cluster the 10,000-table figures are divided by.
SMALL_TABLES = 20
#: The goals: a 10,000-table open within this of a small one's (CPU and longest frame),
#: and no frame of a refresh over this many seconds.
OPEN_RATIO_GOAL, FRAME_GOAL_S = 1.5, 0.050


def big_tables(reps: int, refreshes: int, scale: int = 1) -> dict[str, Any]:
    """The big-table figures; ``scale`` > 1 divides the sizes (``--quick``: a smoke run)."""
    import konsole.ui.screens.tables.screen  # noqa: F401  (imported by neither Tables run's open)

    small = asyncio.run(detail_open(8, reps))
    big = asyncio.run(detail_open(1600 // scale, reps))
    return {
        "detail_open_8_buckets": {k: _stats(v) for k, v in small.items()},
        "detail_open_1600_buckets": {k: _stats(v) for k, v in big.items()},
        "detail_open_ratio_wall": statistics.median(big["wall"]) / statistics.median(small["wall"]),
        "detail_open_ratio_cpu": statistics.median(big["cpu"]) / statistics.median(small["cpu"]),
        "tables_small": asyncio.run(tables_10k(SMALL_TABLES, refreshes)),
        "tables_10000": asyncio.run(tables_10k(10_000 // scale, refreshes)),
        "preview_300_columns": asyncio.run(preview_scroll(300 // scale, 2000 // scale, scale)),
    }


def _print_big(big: dict[str, Any]) -> None:
    ms = 1000.0
    d8, d1600 = big["detail_open_8_buckets"], big["detail_open_1600_buckets"]
    print(
        f"table detail opened to its first painted rows, median wall / CPU: 8 buckets "
        f"{d8['wall']['median'] * ms:.0f} / {d8['cpu']['median'] * ms:.0f} ms, 1,600 buckets "
        f"{d1600['wall']['median'] * ms:.0f} / {d1600['cpu']['median'] * ms:.0f} ms: "
        f"{big['detail_open_ratio_wall']:.2f}x wall, {big['detail_open_ratio_cpu']:.2f}x CPU "
        f"(goal <= 1.5x); longest frame (1,600) {d1600['frame']['median'] * ms:.0f} ms"
    )
    t, small = big["tables_10000"], big["tables_small"]
    for figures in (small, t):
        print(
            f"Tables screen of {figures['tables']:,} tables, wall / CPU / longest frame: open "
            f"{figures['open_wall_s'] * ms:.0f} / {figures['open_cpu_s'] * ms:.0f} / "
            f"{figures['open_frame_s'] * ms:.0f} ms; a new poll (median) "
            f"{statistics.median(figures['refresh_wall_s']) * ms:.0f} / "
            f"{statistics.median(figures['refresh_cpu_s']) * ms:.0f} / "
            f"{max(figures['refresh_frame_s']) * ms:.0f} ms (max) over "
            f"{len(figures['refresh_wall_s'])}; filter to one and back "
            f"{figures['filter_wall_s'] * ms:.0f} / {figures['filter_cpu_s'] * ms:.0f} / "
            f"{figures['filter_frame_s'] * ms:.0f} ms; a new poll in which 1 % of the tables "
            f"moved, CPU / longest frame (median) "
            f"{statistics.median(figures['few_cpu_s']) * ms:.0f} / "
            f"{statistics.median(figures['few_frame_s']) * ms:.0f} ms"
        )
    cpu_ratio = t["open_cpu_s"] / small["open_cpu_s"]
    frame_ratio = t["open_frame_s"] / small["open_frame_s"]
    worst = max(t["refresh_frame_s"])
    print(
        f"{t['tables']:,} / {SMALL_TABLES} tables opened: {cpu_ratio:.2f}x CPU, "
        f"{frame_ratio:.2f}x longest frame (goal <= {OPEN_RATIO_GOAL}x); a poll in which "
        f"every table moved: worst frame "
        f"{worst * ms:.0f} ms (goal <= {FRAME_GOAL_S * ms:.0f}), the UI thread's CPU in it "
        f"{max(t['refresh_ui_cpu_s']) * ms:.0f} ms at most"
    )
    p = big["preview_300_columns"]
    keys = [name for name in p if not name.endswith("_cpu") and name != "open"]
    frames = ", ".join(
        f"{name} {max(p[name]) * ms:.0f} / {max(p[name + '_cpu']) * ms:.0f}" for name in keys
    )
    print(
        f"preview of 300 columns x 2,000 rows: open longest frame {p['open'][0] * ms:.0f} ms "
        f"(CPU {p['open_cpu'][0] * ms:.0f} ms); per key, the worst longest frame / CPU (ms, "
        f"goal < 50): {frames}"
    )


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
    parser.add_argument(
        "--parts",
        default="paint,refresh,idle,big",
        help="comma-separated: paint (first paint), refresh, idle (CPU), big (big tables)",
    )
    parser.add_argument("--story", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--screen", default="t", help=argparse.SUPPRESS)
    # --big-scale divides the big tables' sizes: a smoke run keeps their paths, not their cost
    parser.add_argument("--big-scale", type=int, default=1, help=argparse.SUPPRESS)
    # --warm-runs: unmeasured first paints of each kind before the measured ones (file cache)
    parser.add_argument("--warm-runs", type=int, default=1, help=argparse.SUPPRESS)
    add_quick(
        parser,
        {"reps": 1, "refreshes": 3, "idle_seconds": 1.0, "big_scale": 10, "warm_runs": 0},
    )
    args = parse_args(parser)
    if args.child == "bare":
        return _child_bare()
    if args.child == "konsole":
        return _child_konsole(args.story)
    if args.child == "konsole-connecting":
        return _child_konsole_connecting()
    if args.child == "idle":
        return _child_idle(args.idle_seconds, args.screen)

    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    summary: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    }
    if "paint" in parts:
        summary.update(_first_paints(args.reps, args.warm_runs))
    if "refresh" in parts:
        refresh, refresh_wall = asyncio.run(refresh_times(max(1, args.refreshes)))
        summary["refresh_1600_buckets_cpu_s"] = _stats(refresh)
        summary["refresh_1600_buckets_wall_s"] = _stats(refresh_wall)
        summary["refreshes"] = len(refresh)
        overview, overview_wall = asyncio.run(refresh_times(max(1, args.refreshes), "o"))
        summary["refresh_overview_1600_buckets_cpu_s"] = _stats(overview)
        summary["refresh_overview_1600_buckets_wall_s"] = _stats(overview_wall)
    if "idle" in parts:
        cpu_s, wall_s = idle_cpu(args.idle_seconds, "t")
        overview_cpu_s, overview_wall_s = idle_cpu(args.idle_seconds, "o")
        summary["idle_cpu_percent"] = 100.0 * cpu_s / wall_s
        summary["idle_seconds"] = wall_s
        summary["idle_overview_cpu_percent"] = 100.0 * overview_cpu_s / overview_wall_s
    if "big" in parts:
        summary["big_tables"] = big_tables(
            max(1, args.reps), max(1, min(args.refreshes, 10)), max(1, args.big_scale)
        )
    if args.json:
        print(json.dumps(summary, indent=1))
        return None
    _print_summary(summary, args.reps)
    return None


def _first_paints(reps: int, warm_runs: int) -> dict[str, Any]:
    story = _story_file()
    installed_bytecode(extra=("tests/_testutil",))  # the konsole child imports the story's
    kinds = ("bare", "konsole-connecting", "konsole")
    for _ in range(warm_runs):  # unmeasured: the files the children read, cached
        for kind in kinds:
            paint_times(kind, story)
    load = [os.getloadavg()[0]]
    wall: dict[str, list[float]] = {k: [] for k in kinds}
    cpu: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(max(1, reps)):  # interleaved, so all see the same machine
        for kind in kinds:
            w, c = paint_times(kind, story)
            wall[kind].append(w)
            cpu[kind].append(c)
    load.append(os.getloadavg()[0])
    bare, ours, with_data = (wall[k] for k in kinds)
    return {
        "first_paint_bare_s": _stats(bare),
        "first_paint_konsole_s": _stats(ours),
        "first_paint_ratio": statistics.median(ours) / statistics.median(bare),
        "first_paint_with_data_s": _stats(with_data),
        "first_paint_with_data_ratio": statistics.median(with_data) / statistics.median(bare),
        "first_paint_cpu_s": {k: _stats(v) for k, v in cpu.items()},
        "first_paint_cpu_ratio": statistics.median(cpu["konsole-connecting"])
        / statistics.median(cpu["bare"]),
        "first_paint_load": load,
    }


def _print_summary(summary: dict[str, Any], reps: int) -> None:
    if "first_paint_bare_s" in summary:
        fb, fk = summary["first_paint_bare_s"], summary["first_paint_konsole_s"]
        print(
            f"first paint, bare Textual app: median {fb['median'] * 1000:.0f} ms, "
            f"p90 {fb['p90'] * 1000:.0f} ms ({reps} processes)"
        )
        print(
            f"first paint, konsole overview (connecting): median {fk['median'] * 1000:.0f} ms, "
            f"p90 {fk['p90'] * 1000:.0f} ms"
        )
        print(
            f"  ratio konsole / bare: {summary['first_paint_ratio']:.2f}x (goal <= {PAINT_GOAL}x)"
        )
        fd = summary["first_paint_with_data_s"]
        print(
            f"first paint, konsole overview with a recorded state: median "
            f"{fd['median'] * 1000:.0f} ms, p90 {fd['p90'] * 1000:.0f} ms, ratio "
            f"{summary['first_paint_with_data_ratio']:.2f}x"
        )
        fc = summary["first_paint_cpu_s"]
        print(
            "  CPU of each child, median: bare "
            f"{fc['bare']['median'] * 1000:.0f} ms, konsole (connecting) "
            f"{fc['konsole-connecting']['median'] * 1000:.0f} ms (ratio "
            f"{summary['first_paint_cpu_ratio']:.2f}x), with a recorded state "
            f"{fc['konsole']['median'] * 1000:.0f} ms; load average "
            + " -> ".join(f"{x:.1f}" for x in summary["first_paint_load"])
        )
    if "refresh_1600_buckets_cpu_s" in summary:
        r, rw = summary["refresh_1600_buckets_cpu_s"], summary["refresh_1600_buckets_wall_s"]
        print(
            f"refresh of the 200-table x 8-bucket Tables screen: CPU median "
            f"{r['median'] * 1000:.1f} ms, p90 {r['p90'] * 1000:.1f} ms over "
            f"{summary['refreshes']} (goal < 50 ms); wall incl. the pilot's idle wait: "
            f"median {rw['median'] * 1000:.1f} ms"
        )
    if "refresh_overview_1600_buckets_cpu_s" in summary:
        r = summary["refresh_overview_1600_buckets_cpu_s"]
        rw = summary["refresh_overview_1600_buckets_wall_s"]
        print(
            f"refresh of the Overview of 1,600 buckets: CPU median {r['median'] * 1000:.1f} ms, "
            f"p90 {r['p90'] * 1000:.1f} ms (goal < 50 ms); wall median "
            f"{rw['median'] * 1000:.1f} ms"
        )
    if "idle_cpu_percent" in summary:
        print(
            f"CPU while idle at a 2 s refresh, Tables screen of 1,600 buckets: "
            f"{summary['idle_cpu_percent']:.2f} % of one core over "
            f"{summary['idle_seconds']:.0f} s (goal < 3 %)"
        )
        print(
            f"CPU while idle at a 2 s refresh, Overview of the same cluster: "
            f"{summary['idle_overview_cpu_percent']:.2f} % of one core"
        )
    if "big_tables" in summary:
        _print_big(summary["big_tables"])


if __name__ == "__main__":
    main()

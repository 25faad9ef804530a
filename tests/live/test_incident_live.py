"""Incidents with evidence, on real servers of both generations.

One small local cluster per generation (2 tablet servers; 2 coordinators on the 1.0 line)
serves the module. ``konsole record --local`` records it while the demo's producer
(:class:`konsole.localcluster.producer.DemoProducer`, pyfluss) writes rows; tablet
server 1 is stopped (SIGTERM: it logs its shutdown) and started again (it logs its start),
and on the 1.0 line the active coordinator is killed and the standby takes over (and
``konsole upgrade gate`` then waits for the killed one by name: issue 43's standby). Then:

- the history holds the events and the recorder's log excerpt of tablet server 1, with the
  server's own shutdown and start-up lines (read from its log file, the local source);
- ``konsole history report --around T`` writes HTML whose plots mark those events (their
  SVG lines carry the event's number and kind) and that headless Chromium renders to a PNG
  with no console message; the Markdown variant writes its plots beside it;
- a profile whose log source is a command (``sh -c 'tail -n 500 FILE'``, no shell of ours)
  reads the same lines as the file source;
- ``konsole check --record`` prints the report command of its moment.

Every wait is bounded in count and time; every process runs with a timeout.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import fluss
import pytest

from konsole.collect.logs.reading import FileSource, read_log, server_ref
from konsole.collect.profiles import load_profiles
from konsole.localcluster import LocalCluster
from konsole.localcluster.producer import DemoProducer
from konsole.localcluster.seed import create_with_leaders, demo_descriptor
from konsole.localcluster.seed_local import restart_coordinator
from store import open_reader
from tests._testutil import pyfluss_data as pf
from tests._testutil.cli import run_konsole
from tests._testutil.plots import colour_pixels, series_lines
from tests._testutil.system_tools import need_binary
from tests.conftest import FlussServer, our_java_processes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]
STOPPED = 1  # the tablet server stopped and started again
LIVE = "demo.clickstream"


konsole = partial(run_konsole, timeout=120)


def wait_for(predicate: Any, timeout: float, every: float = 0.5) -> bool:
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout / every) + 2):
        if predicate():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return False


def create_live_table(lc: LocalCluster, bootstrap: str) -> None:
    """The demo table the producer writes to (replicated on both tablet servers: the writes
    go on, after a dip, while one is down). Created as the demo seed creates its tables: a
    loaded 0.9.1 coordinator can miss a new table for good (seen in a CI rehearsal: no
    "New table" line, no leader), so it is created anew, and then the coordinator is
    restarted once (konsole.localcluster.seed_local)."""

    async def create(replace: bool) -> str | None:
        conn = await pf.connect(bootstrap)
        try:
            admin = conn.get_admin()
            await pf.create_database(admin, "demo")
            path = fluss.TablePath("demo", "clickstream")
            descriptor = demo_descriptor(LIVE, 2)
            return await create_with_leaders(admin, path, descriptor, 8, replace=replace)
        finally:
            await pf.close_connection(conn)

    missing = asyncio.run(create(replace=False))
    if missing is not None:
        restart_coordinator(lc)
        missing = asyncio.run(create(replace=True))
    assert missing is None, missing


@dataclass
class Incident:
    server: FlussServer
    desc: dict[str, Any]
    history: Path
    tmp: Path
    #: Epoch seconds: tablet server 1 stopped, started again.
    stopped_at: float
    started_at: float
    record_out: str


def _events(history: Path, kind: str) -> list[Any]:
    if not history.exists():
        return []
    with open_reader(history) as reader:
        return reader.events(kinds=(kind,))


def _log_of(desc: dict[str, Any], role: str, sid: int) -> Path:
    (proc,) = [p for p in desc["processes"] if p["role"] == role and p["id"] == sid]
    return Path(proc["log"])


def _play(lc: LocalCluster, server: FlussServer, desc: dict[str, Any], history: Path) -> float:
    """Stop and start tablet server 1; on 1.0 kill the active coordinator. Returns the
    start's time."""
    lc.stop_server("tablet-server", STOPPED, timeout=60)
    assert wait_for(lambda: _events(history, "server_left"), 40), "no server_left recorded"
    lc.start_server("tablet-server", STOPPED, ready_timeout=120)
    started = time.time()
    assert wait_for(lambda: _events(history, "server_joined"), 40), "no server_joined recorded"
    if server.is_1_0:
        active = lc.active_coordinator()
        assert active is not None
        lc.kill("coordinator", active)
        assert wait_for(lambda: _events(history, "coordinator_failover"), 60), "no failover"
        _gate_holds_while_a_coordinator_is_down(lc, desc, active)
    return started


def _gate_holds_while_a_coordinator_is_down(
    lc: LocalCluster, desc: dict[str, Any], killed: int
) -> None:
    """Issue 43, a standby coordinator on the 1.0 line: after the failover the killed
    coordinator (a standby once started again) is down, and `konsole upgrade gate` waits
    for it by name, as it would while a standby restarts in a rolling upgrade."""
    (proc,) = [p for p in desc["processes"] if p["role"] == "coordinator" and p["id"] == killed]
    done = konsole(
        "upgrade", "gate", "--local", "--run-dir", str(lc.run_dir), "--timeout", "1",
        "--format", "json",
    )  # fmt: skip
    assert done.returncode != 0, done.stdout + done.stderr
    verdict = json.loads(done.stdout)
    down = [w for w in verdict["waits"] if w["condition"] == "servers"]
    assert {"condition": "servers", "subject": f"coordinator {proc['endpoint']}",
            "reason": "not answering"} in down, verdict  # fmt: skip


@pytest.fixture(scope="module")
def incident(
    fluss_server: FlussServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Incident]:
    tmp = tmp_path_factory.mktemp(f"incident-{fluss_server.generation}")
    lc = LocalCluster(tmp / "run")
    desc = lc.start(
        **fluss_server.start_kwargs(),
        tablet_servers=2,
        coordinators=2 if fluss_server.is_1_0 else 1,
        ready_timeout=180,
    ).to_dict()
    history = tmp / "history.sqlite"
    create_live_table(lc, desc["bootstrap_servers"])
    # The demo's own producer (konsole demo runs it) writes while the recorder records.
    producer = DemoProducer(desc["bootstrap_servers"], (LIVE,), rate=40.0, period_s=30.0)
    recorder: subprocess.Popen[str] | None = None
    try:
        producer.start()
        assert wait_for(lambda: producer.written > 0, 60), producer.last_error
        recorder = subprocess.Popen(
            [sys.executable, "-m", "konsole.cli", "record", "--local", "--run-dir",
             str(lc.run_dir), "--history", str(history), "--interval", "1"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        assert wait_for(lambda: len(_polls(history)) >= 5, 60), "the recorder wrote no polls"
        stopped = time.time()
        started = _play(lc, fluss_server, desc, history)
        played = round(time.time() * 1000)
        after = lambda: [p for p in _polls(history) if p.at_ms > played]  # noqa: E731
        assert wait_for(lambda: len(after()) >= 3, 60), "no polls recorded after the incident"
        recorder.send_signal(signal.SIGINT)
        out, _ = recorder.communicate(timeout=60)
        assert recorder.returncode == 0, out
        yield Incident(fluss_server, desc, history, tmp, stopped, started, out)
    finally:
        producer.stop()
        if recorder is not None and recorder.poll() is None:
            recorder.kill()
            recorder.wait(10)
        lc.stop(graceful=False)
        assert not our_java_processes(Path(desc["run_dir"]))


def _polls(history: Path) -> list[Any]:
    if not history.exists():
        return []
    with open_reader(history) as reader:
        return reader.polls()


def test_the_history_keeps_the_servers_own_shutdown_and_start_lines(incident: Incident) -> None:
    with open_reader(incident.history) as reader:
        (left,) = reader.events(kinds=("server_left",))
        excerpts = reader.log_excerpts(subject=f"tablet-server {STOPPED}")
        (table,) = reader.tables_named("demo", "clickstream")
        rates = reader.throughput(table.table_id, all_partitions=True, until=left.at_ms)
    assert any(p.value for p in rates), "no rows/s recorded before the incident"
    assert excerpts, "no log excerpt recorded for the stopped server"
    lines = [line for row in excerpts for line in row.lines]
    assert excerpts[0].source == str(_log_of(incident.desc, "tablet-server", STOPPED))
    assert any("Shutting down" in line for line in lines), lines[-20:]
    assert any("Starting TabletServer" in line for line in lines), lines[-20:]
    assert all(row.error is None for row in excerpts)


def test_the_report_marks_the_events_and_chromium_renders_it(incident: Incident) -> None:
    with open_reader(incident.history) as reader:
        (left,) = reader.events(kinds=("server_left",))
        # The report's window: 10 minutes around the event; its events are numbered in order.
        events = reader.events(left.at_ms - 300_000, left.at_ms + 300_000)
    out = incident.tmp / "report.html"
    around = f"{left.at_ms / 1000:.3f}"
    made = konsole(
        "history", "report", "--history", str(incident.history), "--around", around,
        "--window", "10m", "-o", str(out),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    page = out.read_text()
    number = 1 + next(i for i, e in enumerate(events) if e == left)
    for plot in ("health", "throughput", "placement", "disk", "kv"):
        assert f'id="{plot}-0-event-{number}-server_left"' in page, plot
    kinds = {"server_joined"} | ({"coordinator_failover"} if incident.server.is_1_0 else set())
    for kind in kinds:
        assert re.search(rf'id="throughput-0-event-\d+-{kind}"', page), kind
    assert "demo.clickstream" in page
    assert "Shutting down" in page and "Starting TabletServer" in page
    chromium = need_binary("chromium")
    png = incident.tmp / "report.png"
    shot = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", f"--screenshot={png}", "--window-size=1200,3000", out.as_uri()],
        capture_output=True, text=True, timeout=90, check=False,
        env={**os.environ, "HOME": str(incident.tmp)},
    )  # fmt: skip
    assert shot.returncode == 0, shot.stderr[-2000:]
    console = [line for line in shot.stderr.splitlines() if "CONSOLE" in line]
    assert not console, console
    # The plots drew what was recorded: the table's rows/s line has a point per poll, and
    # it moved (the stop dips it); each server's leaders are drawn too.
    (rows,) = series_lines(page, "throughput")
    assert len(rows.points) >= 5 and len(rows.heights) > 1, rows
    assert len(series_lines(page, "placement")) >= 2 * 2  # leaders and replicas, 2 servers
    # ...and Chromium showed it: the line's colour fills pixel columns across as much of
    # the screenshot as the line spans in the SVG (1 pt = 4/3 CSS px; the legend's swatch
    # is some 20 columns)
    xs = [x for x, _ in rows.points]
    columns = {x for x, _ in colour_pixels(png, rows.colour)}
    assert len(columns) >= 0.5 * (max(xs) - min(xs)) * 4 / 3, (len(columns), min(xs), max(xs))


def test_the_markdown_report_writes_its_plots(incident: Incident) -> None:
    out = incident.tmp / "report.md"
    made = konsole(
        "history", "report", "--history", str(incident.history), "--from",
        f"{incident.stopped_at - 60:.0f}", "--to", f"{incident.started_at + 60:.0f}",
        "-o", str(out),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    svg = (incident.tmp / "report.plots" / "throughput.svg").read_text()
    (rows,) = series_lines(svg, "throughput")
    assert len(rows.points) >= 5 and len(rows.heights) > 1, rows
    assert "server_left" in out.read_text()


def test_a_command_source_reads_the_same_lines_as_the_file(incident: Incident) -> None:
    log = _log_of(incident.desc, "tablet-server", 0)
    config = incident.tmp / "config.toml"
    config.write_text(
        "[profiles.incident]\n"
        f'bootstrap = "{incident.desc["bootstrap_servers"]}"\n'
        '[profiles.incident.logs.servers."tablet-server 0"]\n'
        f'command = ["sh", "-c", "tail -n 500 {log}"]\n'
        "timeout = 10\n"
    )
    source = load_profiles(config)["incident"].logs.source_for("tablet-server 0")
    assert source is not None
    server = server_ref("tablet-server 0")
    for _ in range(5):  # the server may log between two reads: compare a quiet moment
        by_file = read_log(FileSource(str(log)), server, since=0)
        by_command = read_log(source, server, since=0)
        if read_log(FileSource(str(log)), server, since=0) == by_file:
            break
        time.sleep(1)
    assert len(by_command) > 10
    raw = [line.raw for line in by_command]
    assert raw == [line.raw for line in by_file][-len(raw) :]


def test_check_record_prints_the_report_command(incident: Incident) -> None:
    history = incident.tmp / "check.sqlite"
    ran = konsole("check", "--bootstrap", "127.0.0.1:1", "--record", "--history", str(history))
    assert "report: konsole history report --history" in ran.stderr, ran.stderr
    assert f"{history}" in ran.stderr and "--around 20" in ran.stderr

"""`konsole watch --format jsonl` as a real subprocess against a real 3-tablet cluster.

One cluster per server generation (module-scoped; 2 coordinators on the 1.0 line, where a
standby exists), one watch process for the whole module, faults injected with the local
runner (stop / start / SIGKILL / restart with other settings) and data written and tables
created by pyfluss, independently of konsole. Each test marks where the watch output
stood before its fault and waits, bounded, for the events it expects after that mark.

The tests run in file order and each leaves every tablet server running with its normal
settings. Every wait is bounded in time; everything listens on loopback only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fluss_proto.client import FlussClient
from fluss_proto.coordinators import probe_coordinators
from fluss_proto.gather import gather_cluster
from konsole.collect.profiles import profile_from_local
from konsole.localcluster import LocalCluster
from konsole.localcluster.seed import wait_leaders
from tests._testutil import pyfluss_data as pf
from tests._testutil.cli import run_konsole
from tests.conftest import TABLET_SERVERS, FlussServer, our_java_processes

pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(240),
]

#: Seconds between the watch's polls.
INTERVAL = 1.0
#: The tablet server restarted with a disk write limit below its usage (1.0 line).
FAULTY = 2
LOCK_SETTINGS = [
    "server.data-disk.write-limit-ratio=0.05",
    "server.data-disk.write-recover-ratio=0.04",
    "server.data-disk.check-interval=1s",
]

Event = dict[str, Any]
#: The line ``watch --verbose`` writes to stderr per poll.
POLL_TAKEN = re.compile(r"konsole watch: poll (\d+) taken ")


# ------------------------------------------------------------------ the watch process


@dataclass
class Line:
    received: float  # time.time() when the line was read
    data: Event


@dataclass
class Watch:
    """``konsole watch --local --format jsonl`` with reader threads draining both pipes."""

    proc: subprocess.Popen[str]
    lines: list[Line] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: The seq of the last poll it took (``--verbose``: a stderr line per poll).
    last_poll: int = 0

    @classmethod
    def start(cls, run_dir: Path) -> Watch:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "konsole.cli",
                "watch",
                "--local",
                "--run-dir",
                str(run_dir),
                "--format",
                "jsonl",
                "--interval",
                str(INTERVAL),
                "--verbose",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        watch = cls(proc)
        threading.Thread(target=watch._read_stdout, daemon=True).start()
        threading.Thread(target=watch._read_stderr, daemon=True).start()
        return watch

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            data = json.loads(raw)  # every stdout line must be one JSON object
            with self.lock:
                self.lines.append(Line(time.time(), data))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            taken = POLL_TAKEN.match(raw)
            with self.lock:
                if taken:
                    self.last_poll = int(taken.group(1))
                    continue
                self.stderr.append(raw.rstrip("\n"))
                del self.stderr[:-200]  # the last lines are enough to explain a failure

    def mark(self) -> int:
        with self.lock:
            return len(self.lines)

    def events(self, since: int = 0) -> list[Line]:
        with self.lock:
            return [ln for ln in self.lines[since:] if ln.data.get("type") == "event"]

    def seen(
        self,
        since: int,
        kind: str,
        subject: str | None = None,
        where: Callable[[Event], bool] = lambda _: True,
    ) -> list[Line]:
        return [
            ln
            for ln in self.events(since)
            if ln.data["kind"] == kind
            and (subject is None or ln.data["subject"]["name"] == subject)
            and where(ln.data)
        ]

    async def wait(
        self,
        since: int,
        kind: str,
        subject: str | None = None,
        *,
        timeout: float = 60.0,
        where: Callable[[Event], bool] = lambda _: True,
    ) -> Line:
        """The first ``kind`` event (naming ``subject``) after ``since``, or fail."""
        deadline = time.monotonic() + timeout
        for _ in range(int(timeout / 0.1) + 1):
            found = self.seen(since, kind, subject, where)
            if found:
                return found[0]
            assert self.proc.poll() is None, f"watch exited: {self.proc.returncode}"
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        shown = [(ln.data["kind"], ln.data["subject"]["name"]) for ln in self.events(since)]
        raise AssertionError(
            f"no {kind} ({subject or 'any subject'}) within {timeout:g}s; events since: "
            f"{shown}; stderr tail: {self.stderr[-5:]}"
        )

    async def wait_health(
        self, since: int, what: str, ok: Callable[[Event], bool], *, timeout: float = 60.0
    ) -> Line:
        """The first health line after ``since`` that ``ok`` accepts, or fail."""
        deadline = time.monotonic() + timeout
        for _ in range(int(timeout / 0.1) + 1):
            with self.lock:
                found = [
                    ln
                    for ln in self.lines[since:]
                    if ln.data.get("type") == "health" and ok(ln.data)
                ]
            if found:
                return found[0]
            assert self.proc.poll() is None, f"watch exited: {self.proc.returncode}"
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        raise AssertionError(f"no health line {what} within {timeout:g}s: {self.stderr[-5:]}")

    async def polls(self, n: int, timeout: float = 30.0) -> None:
        """Until the watch has taken ``n`` more polls: what it would say of them is said."""
        with self.lock:
            target = self.last_poll + n
        deadline = time.monotonic() + timeout
        for _ in range(int(timeout / 0.1) + 1):
            with self.lock:
                if self.last_poll >= target:
                    return
            assert self.proc.poll() is None, f"watch exited: {self.proc.returncode}"
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        raise AssertionError(f"the watch took no {n} polls within {timeout:g}s")

    def stop(self) -> int:
        """SIGTERM, as an operator's service manager would; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            return -9


@dataclass
class Watched:
    server: FlussServer
    lc: LocalCluster
    description: dict[str, Any]
    watch: Watch
    db: str

    @property
    def bootstrap(self) -> str:
        return str(self.description["bootstrap_servers"])

    def coordinator_address(self, sid: int) -> str:
        for p in self.description["processes"]:
            if p["role"] == "coordinator" and p["id"] == sid:
                return str(p["endpoint"])
        raise KeyError(sid)


@pytest.fixture(scope="module")
def watched(
    fluss_server: FlussServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Watched]:
    run_dir = tmp_path_factory.mktemp(f"watch-{fluss_server.generation}")
    lc = LocalCluster(run_dir)
    watch: Watch | None = None
    try:
        description = lc.start(
            **fluss_server.start_kwargs(),
            tablet_servers=TABLET_SERVERS,
            coordinators=2 if fluss_server.is_1_0 else 1,
            ready_timeout=180,
        ).to_dict()
        watch = Watch.start(run_dir)
        # The first health line comes after the first poll: the baseline is set.
        deadline = time.monotonic() + 60
        while not any(ln.data.get("type") == "health" for ln in watch.lines[:]):
            assert watch.proc.poll() is None, f"watch exited early: {watch.stderr[-5:]}"
            assert time.monotonic() < deadline, f"no first poll: {watch.stderr[-5:]}"
            time.sleep(0.2)
        db = pf.unique_name("watch")
        yield Watched(fluss_server, lc, description, watch, db)
        assert watch.proc.poll() is None, "the watch process exited during the tests"
        # Fluss's NO_LEADER (-1) once showed up as "tablet-server -1" (leaders moving to it).
        negative = [ln.data for ln in watch.events() if "tablet-server -" in json.dumps(ln.data)]
        assert not negative, negative
        assert watch.stop() == 0
    finally:
        if watch is not None:
            watch.stop()
            # Kept beside the cluster's logs for a post-mortem.
            with watch.lock:
                (run_dir / "watch.jsonl").write_text(
                    "".join(json.dumps(ln.data) + "\n" for ln in watch.lines)
                )
                (run_dir / "watch.stderr").write_text("".join(f"{e}\n" for e in watch.stderr))
        lc.stop(graceful=False)
        leftover = our_java_processes(run_dir)
        assert not leftover, f"Java processes of the test cluster remain: {leftover}"


@contextlib.asynccontextmanager
async def pyfluss(bootstrap: str, db: str) -> Any:
    conn = await pf.connect(bootstrap)
    try:
        await pf.create_database(conn.get_admin(), db)
        yield conn
    finally:
        await pf.close_connection(conn)


async def new_log_table(
    conn: Any, db: str, prefix: str, *, buckets: int, replication_factor: int = 1
) -> tuple[str, Any]:
    """A new log table whose buckets all have a leader: (name, pyfluss TablePath).

    Fluss 0.9.1's coordinator now and then never elects leaders for a new table (the
    bench met it too); pyfluss then hangs on the first write. Such a table is dropped and
    another name is tried, so the watch's events for the final one are unambiguous.
    """
    admin = conn.get_admin()
    for _ in range(3):
        name = pf.unique_name(prefix)
        async with asyncio.timeout(60):
            path = await pf.create_log_table(
                conn, db, name, buckets=buckets, replication_factor=replication_factor
            )
            if await wait_leaders(admin, path, buckets):
                return name, path
            await admin.drop_table(path, ignore_if_not_exists=True)
    raise AssertionError(f"3 new tables in {db} never got bucket leaders")


async def leaders_of(bootstrap: str, table: str) -> Counter[int]:
    """Bucket leaders of ``db.table`` per tablet server, read with our own gather."""
    client = await FlussClient.connect(bootstrap, connect_timeout=5.0, request_timeout=10.0)
    try:
        view = await asyncio.wait_for(gather_cluster(client, offsets=False), 30)
    finally:
        await client.close()
    (tv,) = [t for t in view.tables if str(t.path) == table]
    return Counter(b.leader_id for b in tv.buckets if b.leader_id is not None)


def tablet(sid: int) -> str:
    return f"tablet-server {sid}"


def only_1_0(watched: Watched) -> None:
    if not watched.server.is_1_0:
        pytest.skip("the 1.0 line only (0.9.1 has no standby coordinator, no disk write lock)")


# ------------------------------------------------------------------ both generations


def gone_finding(subject: str) -> Callable[[Event], bool]:
    return lambda d: any(
        f["rule"] == "server_gone" and f["subject"] == subject for f in d["findings"]
    )


def isolated(tmp_path: Path) -> dict[str, str]:
    """The environment of a konsole process that reads no user's files: no config, and
    the data dirs (the cluster's own history file by the one rule) under ``tmp_path``."""
    env = {k: v for k, v in os.environ.items() if k != "FLUSS_BOOTSTRAP"}
    env |= {
        "KONSOLE_CONFIG": "/nonexistent/konsole-watch-test.toml",
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    return env


def findings_of(proc: subprocess.CompletedProcess[str]) -> list[tuple[str, str]]:
    return [(f["rule"], f["subject"]) for f in json.loads(proc.stdout)["findings"]]


async def test_a_dead_empty_tablet_server_is_never_ok_until_it_returns(
    watched: Watched, tmp_path: Path
) -> None:
    """Issue 38's repro on the module's empty cluster (no table yet: every tablet server
    holds nothing): `konsole cluster kill ts 1`; once the coordinator dropped it (its
    ZooKeeper session ended) and 10 s after the kill, `konsole check --bootstrap <list>`
    said `FLUSS OK` with an [OK] line for the dead address. Now the address is a WARNING;
    with a history that saw tablet server 1 the check names it gone; the watch names it
    gone within 2 polls of the coordinator dropping it, until it returns."""
    w = watched.watch
    env = isolated(tmp_path)
    listed = watched.bootstrap
    t1 = next(
        p["endpoint"]
        for p in watched.description["processes"]
        if p["role"] == "tablet-server" and p["id"] == 1
    )
    assert t1 in listed.split(",")
    history = tmp_path / "seen.sqlite"
    seen = run_konsole(
        "record", "--bootstrap", listed, "--history", str(history), "--count", "1", env=env
    )
    assert seen.returncode == 0, seen.stderr
    mark = w.mark()
    killed_at = time.monotonic()
    await asyncio.to_thread(watched.lc.kill, "ts", 1)
    try:
        left = await w.wait(mark, "server_left", tablet(1), timeout=60)
        gone = await w.wait_health(mark, "naming tablet-server 1 gone", gone_finding(tablet(1)))
        # the same poll or the next: the coordinator dropping it is the finding's moment
        assert gone.data["time_ms"] - left.data["time_ms"] <= 2 * INTERVAL * 1000 + 500
        assert gone.data["status"] == "YELLOW"  # it held no replica
        # the repro's check: 10 s and more after the kill, after the coordinator dropped it
        for _ in range(200):
            if time.monotonic() - killed_at >= 10:
                break
            await asyncio.sleep(0.1)
        # -t 30: the check's own bound is not what is judged here, and a loaded CI box
        # took more than 10 s for one (its bound is issue 38's other part)
        plain = await asyncio.to_thread(
            run_konsole, "check", "--bootstrap", listed, "-t", "30", env=env, timeout=60
        )
        assert plain.returncode in (1, 2), plain.stdout
        assert plain.stdout.startswith(f"FLUSS WARNING: bootstrap {t1}: "), plain.stdout
        known = await asyncio.to_thread(
            run_konsole,
            *("check", "--bootstrap", listed, "--history", str(history), "-t", "30"),
            *("--format", "json"),
            env=env,
            timeout=60,
        )
        assert known.returncode in (1, 2), known.stdout
        result = json.loads(known.stdout)
        assert result["summary"].startswith("tablet-server 1: not in metadata; in the history")
        assert ("server_gone", tablet(1)) in findings_of(known)
        assert f"its address {t1} (in the bootstrap list) does not answer" in known.stdout
    finally:
        mark = w.mark()
        await asyncio.to_thread(watched.lc.start_server, "ts", 1, 120.0)
    await w.wait(mark, "server_joined", tablet(1), timeout=60)
    await w.wait_health(mark, "without server_gone", lambda d: not gone_finding(tablet(1))(d))


async def test_a_drained_stopped_and_retired_server_leaves_no_finding(
    watched: Watched, tmp_path: Path
) -> None:
    """Issue 38: drain a tablet server, stop it, retire it (`konsole admin server retire`):
    the check (with the history that saw it) judges nothing gone, and the history's audit
    names the retirement. The bootstrap is the coordinators only: the stopped server's own
    address is not in it."""
    env = isolated(tmp_path)
    history = tmp_path / "ops.sqlite"
    coordinators = ",".join(
        p["endpoint"] for p in watched.description["processes"] if p["role"] == "coordinator"
    )
    where = ("--bootstrap", coordinators, "--history", str(history))
    seen = run_konsole("record", *where, "--count", "1", env=env)
    assert seen.returncode == 0, seen.stderr
    drained = await asyncio.to_thread(
        run_konsole,
        *("admin", "server", "drain", "2", "--yes", "--timeout", "60", "--allow-writes"),
        *where,
        env=env,
    )
    assert drained.returncode == 0, drained.stdout + drained.stderr
    assert "once it is stopped for good: konsole admin server retire 2" in drained.stdout
    mark = watched.watch.mark()
    await asyncio.to_thread(watched.lc.stop_server, "ts", 2)
    try:

        def check() -> subprocess.CompletedProcess[str]:
            return run_konsole("check", *where, "-t", "30", "--format", "json", env=env)

        # the watch (this process's memory) names it once the coordinator dropped it; the
        # check (the history's memory) then too
        await watched.watch.wait_health(
            mark, "naming tablet-server 2 gone", gone_finding(tablet(2))
        )
        judged = await asyncio.to_thread(check)
        assert judged.returncode in (1, 2) and ("server_gone", tablet(2)) in findings_of(judged)
        retired = await asyncio.to_thread(
            run_konsole,
            *("admin", "server", "retire", "2", "--yes", "--allow-writes"),
            *where,
            env=env,
        )
        assert retired.returncode == 0, retired.stdout + retired.stderr
        assert "server 2 retired" in retired.stdout
        after = await asyncio.to_thread(check)
        assert after.returncode == 0, after.stdout
        assert not [f for f in findings_of(after) if f[1] == tablet(2)], after.stdout
        audit = run_konsole("history", "events", "--kind", "operator", *where[2:], env=env)
        assert audit.returncode == 0 and "server retire 2: succeeded" in audit.stdout, audit
    finally:
        # back as the module's other tests expect: running and untagged
        await asyncio.to_thread(watched.lc.start_server, "ts", 2, 120.0)
        untag = await asyncio.to_thread(
            run_konsole,
            *("admin", "server", "untag", "2", "permanent-offline", "--yes", "--allow-writes"),
            *where,
            env=env,
        )
    assert untag.returncode == 0, untag.stdout + untag.stderr
    await watched.watch.wait(mark, "server_joined", tablet(2), timeout=60)


def _bytes_in_except(urls: list[str], server: int) -> float:
    """The tablet servers' own ``bytesInPerSecond`` summed, ``server``'s left out."""
    import httpx

    line = re.compile(
        r'^fluss_tabletserver_bytesInPerSecond\{[^}]*server_id="(\d+)"[^}]*\}\s+(\S+)$', re.M
    )
    total = 0.0
    with httpx.Client(trust_env=False, timeout=5.0) as client:
        for url in urls:
            for sid, value in line.findall(client.get(url).text):
                total += float(value) if int(sid) != server else 0.0
    return total


async def _until_async(
    probe: Callable[[], float], done: Callable[[float], bool], what: str, timeout: float
) -> float:
    deadline = time.monotonic() + timeout
    value = 0.0
    for _ in range(int(timeout) + 1):  # bounded: a probe a second at most
        value = await asyncio.to_thread(probe)
        if done(value) or time.monotonic() > deadline:
            break
        await asyncio.sleep(1.0)  # the servers' meters move every few seconds
    assert done(value), f"{what} within {timeout:g}s: last {value!r}"
    return value


async def test_tablet_server_stopped_and_started(watched: Watched) -> None:
    w = watched.watch
    async with pyfluss(watched.bootstrap, watched.db) as conn:
        mark = w.mark()
        # 6 buckets with 3 replicas each: every tablet server holds every bucket.
        name, path = await new_log_table(
            conn, watched.db, "replicated", buckets=6, replication_factor=TABLET_SERVERS
        )
        table = f"{watched.db}.{name}"
        leaders = await leaders_of(watched.bootstrap, table)
        victim = leaders.most_common(1)[0][0]
        assert leaders[victim] >= 1 and leaders.total() > leaders[victim], leaders
        await pf.write_rows(conn, path, 60)
    await w.wait(mark, "table_created", table, timeout=30)
    # The servers that stay take the writes into their own meters (a minute's window):
    # the health line the stop brings carries them in its totals.
    urls = [m.url for m in profile_from_local(watched.description).metrics if m.role == "tablet"]
    await _until_async(
        lambda: _bytes_in_except(urls, victim), lambda v: v > 0, "the others' bytes in", 30
    )

    mark = w.mark()
    await asyncio.to_thread(watched.lc.stop_server, "ts", victim)
    await w.wait(mark, "server_left", tablet(victim), timeout=60)
    # the health line that counts the servers left: a first one may come while the stopped
    # server is still counted (its last meters, on 1.0 seen in a CI rehearsal)
    stopped = await w.wait_health(
        mark,
        "after the stop, without the stopped server",
        lambda d: (
            d["status"] != "GREEN"
            and (d.get("totals") or {}).get("tablet_servers") == TABLET_SERVERS - 1
        ),
    )
    totals = stopped.data["totals"]
    staying = {
        str(p["id"]) for p in watched.description["processes"] if p["role"] == "tablet-server"
    }
    staying.discard(str(victim))
    assert totals["tablet_servers"] == len(staying) == TABLET_SERVERS - 1, totals
    assert totals["messages_in_per_s"] > 0 and totals["bytes_in_per_s"] > 0, totals
    assert totals["bytes_out_per_s"] is not None and totals["bytes_out_per_s"] >= 0, totals
    for figure in ("cpu_load", "heap_used_ratio"):
        named = set(totals[figure])
        assert str(victim) not in named and named & staying, (figure, totals)
        assert named - staying, (figure, totals)  # and the coordinator(s)
        assert all(0.0 <= v <= 1.0 for v in totals[figure].values()), totals
    moved = await w.wait(mark, "leaders_moved", tablet(victim), timeout=30)
    offline = await w.wait(mark, "replicas_offline", tablet(victim), timeout=30)
    assert moved.data["details"]["from"] == victim
    assert victim not in {int(s) for s in moved.data["details"]["to"]}
    assert offline.data["details"]["server"] == victim
    assert offline.data["details"]["tables"].get(table) == 6
    # grouped: one event per cause and subject, not one per bucket
    since_stop = Counter(ln.data["kind"] for ln in w.events(mark))
    assert since_stop["leaders_moved"] == 1 and since_stop["replicas_offline"] == 1

    mark = w.mark()
    await asyncio.to_thread(watched.lc.start_server, "ts", victim, 120.0)
    joined = await w.wait(mark, "server_joined", tablet(victim), timeout=60)
    in_sync = await w.wait(mark, "replicas_in_sync", timeout=90)
    assert in_sync.data["time_ms"] >= joined.data["time_ms"]
    assert in_sync.data["details"]["replicas_offline"] == 0


async def test_table_created_and_dropped(watched: Watched) -> None:
    w = watched.watch
    async with pyfluss(watched.bootstrap, watched.db) as conn:
        mark = w.mark()
        name, path = await new_log_table(conn, watched.db, "created", buckets=2)
        table = f"{watched.db}.{name}"
        created = await w.wait(mark, "table_created", table, timeout=30)
        mark = w.mark()
        async with asyncio.timeout(30):
            await conn.get_admin().drop_table(path, ignore_if_not_exists=False)
        dropped = await w.wait(mark, "table_dropped", table, timeout=30)
    assert created.data["severity"] == "info"
    assert dropped.data["severity"] == "warning"


async def test_ingest_stalled_after_pyfluss_stops_writing(watched: Watched) -> None:
    w = watched.watch
    async with pyfluss(watched.bootstrap, watched.db) as conn:
        mark = w.mark()
        name, path = await new_log_table(conn, watched.db, "ingest", buckets=2)
        table = f"{watched.db}.{name}"
        await w.wait(mark, "table_created", table, timeout=30)
        # Two writes a poll apart: the watch sees the log end offsets advance.
        await pf.write_rows(conn, path, 50)
        await w.polls(2)  # one of them began after the first write
        await pf.write_rows(conn, path, 50, start=50)
        stopped_at = time.time()
    # A slow second write may let a stall at 50 show first (then ingest_resumed): the
    # stall that counts is the one after the last write.
    stalled = await w.wait(
        mark,
        "ingest_stalled",
        table,
        timeout=30,
        where=lambda e: e["details"]["log_end_offset"] == 100,
    )
    assert stalled.data["details"]["quiet_polls"] >= 3
    assert stalled.data["time_ms"] / 1000 > stopped_at


# ------------------------------------------------------------------ the 1.0 line


async def test_active_coordinator_killed_gives_one_failover(
    fluss_1_0: FlussServer, watched: Watched
) -> None:
    only_1_0(watched)
    w = watched.watch
    old_id = await asyncio.to_thread(watched.lc.active_coordinator)
    assert old_id in (0, 1)
    old, new = watched.coordinator_address(old_id), watched.coordinator_address(1 - old_id)
    mark = w.mark()
    await asyncio.to_thread(watched.lc.kill, "coordinator", old_id)

    # When the standby first answers as active, seen by a probe of our own.
    answered_at = None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        (probe,) = await probe_coordinators(new, timeout=1.0)
        if probe.active:
            answered_at = time.time()
            break
        await asyncio.sleep(0.1)
    assert answered_at is not None, "the standby never became active"

    failover = await w.wait(mark, "coordinator_failover", f"coordinator {new}", timeout=30)
    assert (failover.data["details"]["old"], failover.data["details"]["new"]) == (old, new)
    # The poll that saw it started at most two intervals after the new one answered.
    lag = failover.data["time_ms"] / 1000 - answered_at
    print(
        f"failover: event poll {lag:+.2f}s after the new coordinator answered; "
        f"printed {failover.received - answered_at:+.2f}s after; "
        f"no coordinator for {failover.data['details']['no_coordinator_s']}s"
    )
    assert lag <= 2 * INTERVAL
    await w.polls(4)
    assert len(w.seen(mark, "coordinator_failover")) == 1
    assert w.proc.poll() is None


async def test_standby_coordinator_killed_gives_standby_lost(
    fluss_1_0: FlussServer, watched: Watched
) -> None:
    only_1_0(watched)
    w = watched.watch
    active_id = await asyncio.to_thread(watched.lc.active_coordinator)
    assert active_id in (0, 1)
    standby_id = 1 - active_id
    standby = watched.coordinator_address(standby_id)
    state = watched.lc.status()
    running = {p.id for p in state.of_role("coordinator") if p.alive} if state else set()
    mark = w.mark()
    if standby_id not in running:  # killed by the failover test: back as a standby
        await asyncio.to_thread(watched.lc.start_server, "coordinator", standby_id, 120.0)
    (probe,) = await probe_coordinators(standby, timeout=2.0)
    assert probe.role == "standby"
    if standby_id not in running:
        await w.wait(mark, "standby_joined", f"coordinator {standby}", timeout=30)
    else:
        await w.polls(2)  # the watch has seen it as a standby

    mark = w.mark()
    await asyncio.to_thread(watched.lc.kill, "coordinator", standby_id)
    lost = await w.wait(mark, "standby_lost", f"coordinator {standby}", timeout=30)
    assert lost.data["details"]["address"] == standby
    assert not w.seen(mark, "coordinator_failover")
    assert w.proc.poll() is None


async def test_disk_write_limit_below_usage_gives_write_rejected_then_accepted(
    fluss_1_0: FlussServer, watched: Watched
) -> None:
    only_1_0(watched)
    w = watched.watch
    lc = watched.lc
    mark = w.mark()
    await asyncio.to_thread(lc.stop_server, "ts", FAULTY)
    await asyncio.to_thread(lc.start_server, "ts", FAULTY, 120.0, LOCK_SETTINGS)
    rejected = await w.wait(mark, "write_rejected", tablet(FAULTY), timeout=60)
    details = rejected.data["details"]
    assert details["cause"] == "disk_write_locked"
    assert details["server"] == str(FAULTY)
    assert details["disk_usage_ratio"] is not None and details["disk_usage_ratio"] > 0.05
    await w.wait(mark, "server_joined", tablet(FAULTY), timeout=60)
    await w.polls(2)
    # once per engagement, however many polls see the lock
    assert len(w.seen(mark, "write_rejected", tablet(FAULTY))) == 1

    mark = w.mark()
    await asyncio.to_thread(lc.stop_server, "ts", FAULTY)
    await asyncio.to_thread(lc.start_server, "ts", FAULTY, 120.0)
    accepted = await w.wait(mark, "writes_accepted", tablet(FAULTY), timeout=60)
    assert accepted.data["details"]["cause"] == "disk_write_locked"
    assert not w.seen(mark, "write_rejected", tablet(FAULTY))
    await w.wait(mark, "replicas_in_sync", timeout=90)

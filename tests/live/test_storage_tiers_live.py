"""The storage view live: `konsole storage`, the storage poll, tiering_stalled / resumed in
`konsole watch`, `konsole check` going WARNING, against a real cluster per generation.

One small cluster per server generation (module-scoped: 1 coordinator, 2 tablet servers)
that snapshots KV every second, rolls 16 KB log segments and runs the remote log tiering
task every second into ``remote.data.dir`` (a local directory under the run dir). Data is
written by pyfluss. The tiering fault is real: the table's remote log directory is replaced
by a plain file, so the tablet server's copies fail (whatever the user, root included),
while pyfluss keeps writing; putting the directory back lets tiering resume.

The 0.9.1 generation has no ListRemoteLogManifests: there the remote figures read unknown
(null) and nothing is sent (no error lines either); the tiering test is 1.0-only. No lake:
no table here is datalake-enabled and no lake tiering service runs (see docs/storage.md),
so the lake figures read null with the reason said.
Every wait is bounded in count and time; loopback only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fluss
import pytest
import pytest_asyncio

from konsole.collect.cluster.metrics import Scraper
from konsole.collect.profiles import MetricsEndpoint
from konsole.localcluster import LocalCluster
from tests._testutil import pyfluss_data as pf
from tests._testutil.waiting import until
from tests.conftest import FlussServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(300),
]

SETTINGS = (
    "kv.snapshot.interval=1s",
    "log.segment.file-size=16kb",
    "remote.log.task-interval-duration=1s",
)
#: The profile the konsole processes use: fast polls, a short stall limit.
STALL_S = 6
WAIT_S = 60.0


@dataclass
class Tiers:
    server: FlussServer
    run_dir: Path
    description: dict[str, Any]
    config: Path
    history: Path
    conn: fluss.FlussConnection
    db: str

    @property
    def bootstrap(self) -> str:
        return str(self.description["bootstrap_servers"])

    def konsole(self, *args: str, profile: str = "tiers") -> list[str]:
        return [
            sys.executable,
            "-m",
            "konsole.cli",
            *args[:1],
            "--config",
            str(self.config),
            "--profile",
            profile,
            *args[1:],
        ]


@pytest.fixture(scope="module")
def cluster(
    fluss_server: FlussServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, dict[str, Any]]]:
    run_dir = tmp_path_factory.mktemp(f"tiers-{fluss_server.generation}")
    lc = LocalCluster(run_dir)
    try:
        desc = lc.start(
            **fluss_server.start_kwargs(), tablet_servers=2, settings=SETTINGS, ready_timeout=180
        ).to_dict()
        yield run_dir, desc
    finally:
        lc.stop(graceful=False)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tiers(
    fluss_server: FlussServer, cluster: tuple[Path, dict[str, Any]]
) -> AsyncIterator[Tiers]:
    run_dir, desc = cluster
    config = run_dir / "konsole.toml"
    # `scraped`: the same cluster with its tablet servers' metrics endpoints listed (the
    # servers' bytes come from their scrapes)
    urls = ", ".join(
        f'"{p["metrics_url"]}"' for p in desc["processes"] if p["role"] == "tablet-server"
    )
    config.write_text(
        f'[profiles.tiers]\nbootstrap = "{desc["bootstrap_servers"]}"\n'
        "poll_interval = 1\nstorage_interval = 1\n"
        f"[profiles.tiers.health]\ntiering_stall_s = {STALL_S}\n"
        f'[profiles.scraped]\nbootstrap = "{desc["bootstrap_servers"]}"\n'
        f"metrics = [{urls}]\n"
    )
    conn = await pf.connect(str(desc["bootstrap_servers"]))
    db = pf.unique_name("tiers")
    try:
        await pf.create_database(conn.get_admin(), db)
        yield Tiers(fluss_server, run_dir, desc, config, run_dir / "history.db", conn, db)
    finally:
        await pf.close_connection(conn)


async def storage_json(t: Tiers, table: str, profile: str = "tiers") -> dict[str, Any]:
    """`konsole storage --format json DB.TABLE` as a subprocess; the table's entry."""
    proc = await asyncio.create_subprocess_exec(
        *t.konsole("storage", "--format", "json", table, profile=profile),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    report = json.loads(out)
    [entry] = report["tables"]
    entry["_report"] = report
    return entry


async def check_history(t: Tiers) -> tuple[int, str]:
    """`konsole check --history` on the recorder's file: its exit code and JSON text."""
    check = await asyncio.create_subprocess_exec(
        *t.konsole("check", "--history", str(t.history), "--format", "json"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(check.communicate(), 60)
    assert check.returncode is not None
    return check.returncode, json.dumps(json.loads(out))


async def recorded_polls(path: Path) -> int:
    """Polls the history file holds so far (0 before the recorder made it)."""
    from store import HistoryError, open_reader

    try:
        reader = open_reader(path)
    except HistoryError:
        return 0
    try:
        return len(reader.polls())
    finally:
        reader.close()


@dataclass
class Lines:
    """A konsole process whose stdout is JSON lines, drained by a thread."""

    proc: subprocess.Popen[str]
    lines: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def start(cls, argv: list[str]) -> Lines:
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        me = cls(proc)
        threading.Thread(target=me._drain, daemon=True).start()
        return me

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            with contextlib.suppress(ValueError):
                self.lines.append(json.loads(raw))

    async def polled(self) -> bool:
        """The watch printed its first health line (it polled)."""
        return any(line.get("type") == "health" for line in list(self.lines))

    async def wait(self, kind: str, subject: str, timeout: float = WAIT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for _ in range(int(timeout / 0.2) + 1):
            for line in list(self.lines):
                if line.get("kind") == kind and line.get("subject", {}).get("name") == subject:
                    return line
            assert self.proc.poll() is None, f"exited: {self.proc.returncode}"
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        kinds = [(x.get("kind"), x.get("subject", {}).get("name")) for x in self.lines]
        raise AssertionError(f"no {kind} for {subject} within {timeout:g}s: {kinds}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


class Writer:
    """pyfluss appending acknowledged batches until stopped (bounded in count)."""

    def __init__(self, conn: fluss.FlussConnection, path: fluss.TablePath, start: int) -> None:
        self.conn, self.path, self.next = conn, path, start
        self._stop = asyncio.Event()
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        for _ in range(2000):
            if self._stop.is_set():
                return
            await pf.write_rows(self.conn, self.path, 50, start=self.next)
            self.next += 50
            await asyncio.sleep(0.2)

    async def stop(self) -> None:
        self._stop.set()
        await asyncio.wait_for(self._task, 60)


async def test_kv_snapshots_with_their_age_and_replica_load(tiers: Tiers) -> None:
    t = tiers
    path = await pf.create_pk_table(t.conn, t.db, "pk", buckets=2)
    name = f"{t.db}.pk"
    await pf.write_rows(t.conn, path, 20)
    theirs = await pf.latest_offsets(t.conn, path, 2)

    def covered(entry: dict[str, Any]) -> bool:
        return all(
            b["kv_snapshot_id"] is not None and b["kv_snapshot_log_offset"] == theirs[b["bucket"]]
            for b in entry["bucket_detail"]
        )

    first = await until(lambda: storage_json(t, name), covered, "a KV snapshot of every write")
    assert "kv-snapshot" in first["tiers"] and first["primary_key"]
    for b in first["bucket_detail"]:
        assert b["kv_snapshot_age_s"] is not None and b["kv_snapshot_age_is_lower_bound"]
        assert b["kv_offsets_behind"] == 0 and b["log_end_offset"] == theirs[b["bucket"]]
    report = first["_report"]
    caps = report["capabilities"]
    assert caps["kv_snapshots"] and report["errors"] == []
    assert caps["table_stats"] and first["row_count"] == 20  # GetTableStats: both lines
    if t.server.is_1_0:
        assert caps["remote_manifests"]
        assert first["untiered_offsets"] == sum(theirs.values())  # a PK table's log: not tiered
    else:  # the 1.0-only figures are unknown, and nothing was sent for them
        assert not caps["remote_manifests"]
        assert first["untiered_offsets"] is None
        assert all(b["remote_log_end_offset"] is None for b in first["bucket_detail"])
    # no lake here: the lake figures are unknown and say why
    assert first["lake_enabled"] is False and first["lake_lag"] is None
    assert "not enabled" in first["lake_note"]

    # per-server replicas and leaders as placed in metadata, against each server's own
    # replicaCount / leaderCount metrics
    tablets = [p for p in t.description["processes"] if p["role"] == "tablet-server"]
    scraper = Scraper(timeout=5)
    try:
        scraped = await scraper.scrape([MetricsEndpoint(p["metrics_url"]) for p in tablets])
    finally:
        await scraper.aclose()
    theirs_load = {int(m.server_id): (m.replica_count, m.leader_count) for m in scraped}  # type: ignore[union-attr,arg-type]
    ours_load = {s["server"]: (s["replicas"], s["leaders"]) for s in report["servers"]}
    assert ours_load == theirs_load, (ours_load, theirs_load)
    # bytes held are unknown without a scrape, known from each server's own metrics with one
    assert all(s["bytes_held"] is None for s in report["servers"])
    assert all(s["remote_log_bytes"] is None for s in report["servers"])
    servers = (await storage_json(t, name, "scraped"))["_report"]["servers"]
    assert {s["server"] for s in servers} == set(theirs_load)
    assert all(s["bytes_held"] is not None and s["remote_log_bytes"] is not None for s in servers)
    assert sum(s["bytes_held"] for s in servers) > 0, servers  # the rows just written

    # the age is exact once a new snapshot was seen, and grows between storage polls
    from konsole.collect.cluster.connect import build_poller
    from konsole.collect.profiles import load_profiles

    poller, release = build_poller(load_profiles(t.config)["tiers"], 1.0)
    try:

        async def look() -> Any:
            snapshot = await poller.poll()
            return snapshot.storage

        await until(look, lambda p: p is not None, "a storage part")
        await pf.write_rows(t.conn, path, 5, start=100)
        after = await pf.latest_offsets(t.conn, path, 2)

        def new_snapshots(p: Any) -> bool:
            mine = [b for b in p.buckets if b.table_id == first["table_id"]]
            return all(b.kv_changed and b.kv_log_offset == after[b.bucket_id] for b in mine)

        part = await until(look, new_snapshots, "new KV snapshots seen")
        mine = [b for b in part.buckets if b.table_id == first["table_id"]]
        later = await until(look, lambda p: p.taken_at > part.taken_at + 2, "a later look")
        again = {b.bucket_id: b for b in later.buckets if b.table_id == first["table_id"]}
        for b in mine:
            # no write since: the server skips a snapshot with no new log (Fluss's
            # KvTabletSnapshotTarget), so it is the same snapshot, older now
            assert again[b.bucket_id].kv_snapshot_id == b.kv_snapshot_id, (b, again)
            age = later.taken_at - again[b.bucket_id].kv_since
            assert age >= 2, age
    finally:
        await release()


async def test_tiering_advances_stalls_and_resumes(tiers: Tiers) -> None:
    t = tiers
    if not t.server.is_1_0:
        pytest.skip("ListRemoteLogManifests (remote log end offsets) is 1.0-line only")
    path = await pf.create_log_table(t.conn, t.db, "tiered", buckets=2)
    name = f"{t.db}.tiered"
    for i in range(20):  # many 16 KB segments
        await pf.write_rows(t.conn, path, 50, start=i * 50)
    first = await until(
        lambda: storage_json(t, name),
        lambda e: all(b["remote_log_end_offset"] for b in e["bucket_detail"]),
        "both buckets tiered",
    )
    for i in range(20, 30):
        await pf.write_rows(t.conn, path, 50, start=i * 50)
    ends = {b["bucket"]: b["remote_log_end_offset"] for b in first["bucket_detail"]}
    # the tiered bytes show in the servers' remoteLogSize metric
    await until(
        lambda: storage_json(t, name, "scraped"),
        lambda e: sum(s["remote_log_bytes"] or 0 for s in e["_report"]["servers"]) > 0,
        "remote log bytes on the servers",
    )
    await until(
        lambda: storage_json(t, name),
        lambda e: all(b["remote_log_end_offset"] > ends[b["bucket"]] for b in e["bucket_detail"]),
        "remote end offsets advancing",
    )

    watch = Lines.start(t.konsole("watch", "--format", "jsonl"))
    record = Lines.start(t.konsole("record", "--history", str(t.history)))
    writer = Writer(t.conn, path, 10_000)
    table_id = first["table_id"]
    remote = t.run_dir / "remote" / "log" / t.db / f"tiered-{table_id}"
    assert remote.is_dir(), sorted(str(p) for p in (t.run_dir / "remote").rglob("*"))[:20]
    saved = remote.with_name("saved-tiered")
    try:
        # the watch and the recorder have polled, and tiering moved after that
        await until(watch.polled, bool, "the watch's first health line")
        await until(lambda: recorded_polls(t.history), lambda n: n >= 2, "2 recorded polls")
        looked = (await storage_json(t, name))["bucket_detail"]
        mark = {b["bucket"]: b["remote_log_end_offset"] for b in looked}
        await until(
            lambda: storage_json(t, name),
            lambda e: any(
                b["remote_log_end_offset"] > mark[b["bucket"]] for b in e["bucket_detail"]
            ),
            "tiering moving while the watch and the recorder look",
        )
        remote.rename(saved)
        remote.write_text("not a directory: the tablet server cannot copy segments here\n")
        stalled = await watch.wait("tiering_stalled", name, timeout=STALL_S + 40)
        assert stalled["severity"] == "warning" and stalled["details"]["untiered_offsets"] > 0
        # the recorder writes a storage part past the stall: `check` on its file says so
        _, text = await until(
            lambda: check_history(t),
            lambda r: r[0] == 1 and "tiering_stalled" in r[1],
            "check --history WARNING with tiering_stalled",
        )
        assert f"table {name}" in text
        behind = (await storage_json(t, name))["untiered_offsets"]
        remote.unlink()
        saved.rename(remote)
        await watch.wait("tiering_resumed", name, timeout=40)
        # what piled up on local disk during the stall is tiered: the backlog shrinks
        await until(
            lambda: storage_json(t, name),
            lambda e: e["untiered_offsets"] < behind / 2,
            f"not-yet-tiered offsets shrinking from {behind}",
        )
    finally:
        if remote.is_file():
            remote.unlink()
        if saved.is_dir():
            saved.rename(remote)
        await writer.stop()
        watch.stop()
        record.stop()

"""Fault paths of the Fluss 1.0 line on a real cluster: standby coordinators, cluster health,
the disk write lock, KV backpressure, and the demo seed on two coordinators.

One cluster serves the module (2 coordinators + 3 tablet servers), started the way a new
user would, with ``konsole cluster start ... --json``; tests run in file order and each
leaves the cluster whole again (every server running, normal settings) when it ends.
Faults are injected on tablet server ``FAULTY`` (restarted with other settings) and on the
active coordinator (SIGKILL). Every loop is bounded in count and in time.

konsole itself never writes. Where a test must see the code a server answers a *write*
with, it sends a write that carries nothing over a bare fluss_proto ``Connection``: an
empty ProduceLog (no bucket), a PutKv holding one header-only KV batch (0 records, schema
id -1, which the server refuses before decoding anything); the dynamic-config check sends
AlterClusterConfigs (pyfluss 1.0 has no call for it) and deletes what it set in the same
test. Those messages are not in our .proto (konsole never sends them), so they are encoded
here by hand. pyfluss writes that are expected to get stuck run in a child process.

Observed figures are printed (``-s``) and written to ``faults-facts.json`` in the run dir;
docs/protocol.md ("Observed on the 1.0 line (faults)") keeps them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import struct
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import fluss
import pytest
import pytest_asyncio

from fluss_proto import error_codes
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.admin import FlussAdmin
from fluss_proto.api_keys import ApiKey
from fluss_proto.client import FlussClient, TablePath
from fluss_proto.connection import Connection
from fluss_proto.coordinators import probe_coordinators
from fluss_proto.errors import FlussError
from fluss_proto.gather import gather_cluster
from fluss_proto.model import LATEST, HealthStatus
from konsole.localcluster import LocalCluster
from konsole.localcluster.seed import DEMO_TABLES, demo_descriptor, demo_rows, wait_leaders
from konsole.localcluster.settle import SettledConnection
from tests._testutil import pyfluss_data as pf
from tests._testutil.cli import run_konsole
from tests.conftest import FlussServer, our_java_processes

pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(240),
]

FAULTY = 2  # the tablet server restarted with fault settings
LOCK_SETTINGS = [
    "server.data-disk.write-limit-ratio=0.05",
    "server.data-disk.write-recover-ratio=0.04",
    "server.data-disk.check-interval=1s",
]
# Small memtables and many of them: Fluss's flush-budget gate (L0 files + pending
# memtables + write buffer count against RocksDB's slowdown trigger, 20) is reached soon.
BACKPRESSURE_SETTINGS = [
    "kv.rocksdb.writebuffer.size=64kb",
    "kv.rocksdb.writebuffer.count=16",
    "kv.backpressure.l0-slowdown-trigger=1",
]
CLIENT = {"connect_timeout": 2.0, "request_timeout": 2.0, "retry_backoff": 0.1}
PREVIEW_TABLE = "go_sensor_demo.sensor_info"
ADMIN_EVERY_S = 0.1


# ------------------------------------------------------------------ helpers


konsole = partial(run_konsole, timeout=180)


_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Sample:
    name: str
    labels: dict[str, str]
    value: float


def scrape(url: str) -> list[Sample]:
    """One Prometheus text scrape (loopback, bounded)."""
    with _NO_PROXY.open(url, timeout=5) as resp:
        text = resp.read().decode("utf-8", "replace")
    out = []
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if line.startswith("#") or match is None:
            continue
        labels = dict(_LABEL.findall(match.group(2) or ""))
        out.append(Sample(match.group(1), labels, float(match.group(3))))
    return out


def values(samples: list[Sample], name: str, **labels: str) -> list[float]:
    return [
        s.value
        for s in samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]


async def until(predicate: Any, timeout: float, every: float = 0.2) -> float | None:
    """Seconds until ``predicate()`` (sync or async) held, or None after ``timeout``."""
    t0 = time.monotonic()
    for _ in range(int(timeout / every) + 1):
        result = predicate()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            break
        await asyncio.sleep(every)
    return None


# Hand-encoded protobuf for the three writes (see the module docs).


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _bytes_field(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def _fields(buf: bytes) -> list[tuple[int, int | bytes]]:
    pos, out = 0, []
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        value: int | bytes
        if key & 7 == 0:
            value, pos = _read_varint(buf, pos)
        else:
            size, pos = _read_varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        out.append((key >> 3, value))
    return out


def empty_produce_log(table_id: int) -> bytes:
    """ProduceLog with acks=1 and no bucket: nothing to append, only the disk check runs."""
    return _int_field(1, 1) + _int_field(2, table_id) + _int_field(3, 5000)


def header_only_put_kv(table_id: int, bucket: int) -> bytes:
    """PutKv for one bucket with a KV batch of 0 records and schema id -1 (refused with
    SCHEMA_NOT_EXIST unless something rejects the batch before it is looked at)."""
    header = struct.pack(">bihbqii", 0, 0, -1, 0, -1, -1, 0)  # magic crc schema attr id seq n
    batch = struct.pack(">i", len(header)) + header
    per_bucket = _int_field(2, bucket) + _bytes_field(3, batch)
    return (
        _int_field(1, 1)
        + _int_field(2, table_id)
        + _int_field(3, 5000)
        + _bytes_field(5, per_bucket)
    )


def put_kv_bucket_errors(body: bytes) -> list[tuple[int, int | None, str]]:
    """(bucket, error code or None, message) per bucket of a PutKvResponse."""
    out = []
    for number, value in _fields(body):
        if number == 1 and isinstance(value, bytes):
            bucket = dict(_fields(value))
            message = bucket.get(4, b"")
            code = bucket.get(3)
            out.append(
                (
                    int(bucket[2]),  # type: ignore[arg-type]
                    int(code) if isinstance(code, int) else None,
                    message.decode() if isinstance(message, bytes) else "",
                )
            )
    return out


def alter_cluster_configs(changes: dict[str, str | None]) -> bytes:
    """SET (a value) or DELETE (None) each key."""
    body = b""
    for key, value in changes.items():
        item = _bytes_field(1, key.encode())
        item += (
            _int_field(3, 1)
            if value is None
            else _bytes_field(2, value.encode()) + _int_field(3, 0)
        )
        body += _bytes_field(1, item)
    return body


async def raw(endpoint: str, api: ApiKey, version: int, body: bytes) -> bytes | FlussError:
    """One request on a fresh connection: the reply body, or the typed error it raised."""
    host, _, port = endpoint.rpartition(":")
    conn = await Connection.open(host, int(port), connect_timeout=5, request_timeout=10)
    try:
        return await conn.request(int(api), version, body, api_name=api.name)
    except FlussError as exc:
        return exc
    finally:
        await conn.close()


# ------------------------------------------------------------------ the cluster


@dataclass
class Cluster:
    lc: LocalCluster
    started: dict[str, Any]  # `konsole cluster start --json`
    facts: dict[str, Any]

    @property
    def run_dir(self) -> str:
        return str(self.lc.run_dir)

    @property
    def bootstrap(self) -> str:
        return str(self.started["bootstrap_servers"])

    def process(self, role: str, sid: int) -> dict[str, Any]:
        return next(p for p in self.started["processes"] if p["role"] == role and p["id"] == sid)

    def ts(self, sid: int) -> dict[str, Any]:
        return self.process("tablet-server", sid)

    def coordinator_endpoints(self) -> list[str]:
        return [p["endpoint"] for p in self.started["processes"] if p["role"] == "coordinator"]

    def record(self, key: str, value: Any) -> None:
        self.facts[key] = value
        print(f"FACT {key}: {value}")


@pytest.fixture(scope="module")
def cluster(fluss_1_0: FlussServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    run_dir = tmp_path_factory.mktemp("faults") / "cluster"
    t0 = time.monotonic()
    started = konsole(
        "cluster",
        "start",
        *fluss_1_0.cli_args(),
        "--coordinators",
        "2",
        "--tablet-servers",
        "3",
        "--json",
        "--run-dir",
        str(run_dir),
    )
    lc = LocalCluster(run_dir)
    facts: dict[str, Any] = {}
    try:
        # a failed start stops what it started; the finally below checks that too
        assert started.returncode == 0, started.stderr
        c = Cluster(lc, json.loads(started.stdout), facts)
        c.record("cli_start_seconds", round(time.monotonic() - t0, 1))
        yield c
    finally:
        lc.stop(graceful=False)
        if run_dir.is_dir():
            (run_dir / "faults-facts.json").write_text(json.dumps(facts, indent=2, default=str))
        assert our_java_processes(lc.run_dir) == [], "Java processes of the fault cluster remain"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def client(cluster: Cluster) -> AsyncIterator[FlussClient]:
    c = await FlussClient.connect(cluster.bootstrap, **CLIENT)  # type: ignore[arg-type]
    try:
        yield c
    finally:
        await c.close()


async def leader_of(client: FlussClient, path: TablePath) -> dict[int, int | None]:
    """bucket -> leader id (None while it has none; the server may also send -1)."""
    md = await client.refresh_metadata([path])
    return {b.bucket_id: b.leader_id for b in md.tables[path].buckets}


async def restart(cluster: Cluster, sid: int, settings: list[str]) -> float:
    t0 = time.monotonic()
    await asyncio.to_thread(cluster.lc.stop_server, "ts", sid)
    await asyncio.to_thread(cluster.lc.start_server, "ts", sid, 90.0, settings)
    return round(time.monotonic() - t0, 1)


async def close_quietly(conn: SettledConnection) -> None:
    """pyfluss close() waits for undelivered records: a stuck writer would hold it 30 s, so
    the flush and the close are bounded (a connection still holding records is kept)."""
    await conn.close_settled(5)
    await asyncio.sleep(0.3)


REPO = Path(__file__).resolve().parents[2]


def _child_main(args: list[str]) -> None:
    """In a child process: write with pyfluss, print what happened as JSON, and leave
    without closing (a stuck pyfluss writer keeps retrying inside its process; in the test
    process it would starve later pyfluss connections: 2 cores, 2 runtime threads)."""
    bootstrap, database, table, mode, count, bound = args
    n, bound_s = int(count), float(bound)

    async def run() -> dict[str, Any]:
        conn = await pf.connect(bootstrap)
        path = fluss.TablePath(database, table)
        target = await conn.get_table(path)
        # A pyfluss write into a bucket without a leader never completes: wait first.
        leaders = await wait_leaders(conn.get_admin(), path, target.get_table_info().num_buckets)
        handles: list[Any]
        if mode == "append":
            appender = target.new_append().create_writer()
            handles = [appender.append(row) for row in pf.expected_rows(n, start=1000)]
            writer: Any = appender
        else:
            upserter = target.new_upsert().create_writer()
            wide = "x" * 1000
            handles = [
                upserter.upsert({"id": i % 20_000, "name": wide, "amount": None, "ts": None})
                for i in range(n)
            ]
            writer = upserter
        t0 = time.monotonic()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(bound_s):
                await writer.flush()
        outcome: dict[str, Any] = {"leaders": leaders, "flush_s": round(time.monotonic() - t0, 1)}
        for handle in handles[-300:]:
            try:
                await asyncio.wait_for(handle.wait(), 0.02)
                key = "acknowledged"
            except TimeoutError:
                key = "pending"
            except fluss.FlussError as exc:
                key = f"error {exc.error_code}"
            outcome[key] = outcome.get(key, 0) + 1
        return outcome

    print(json.dumps(asyncio.run(run())), flush=True)
    os._exit(0)


async def write_in_child(
    cluster: Cluster, path: fluss.TablePath, mode: str, count: int, bound_s: float
) -> dict[str, Any]:
    """pyfluss ``mode`` ("append"/"upsert") of ``count`` rows in a child process; what the
    last (up to) 300 write handles said after a flush bounded by ``bound_s``."""
    code = (
        "import sys; from tests.live.test_fluss_1_0_faults import _child_main; "
        "_child_main(sys.argv[1:])"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        cluster.bootstrap,
        path.database_name,
        path.table_name,
        mode,
        str(count),
        str(bound_s),
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), bound_s + 60)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode == 0 and out.strip(), err.decode()[-2000:]
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return result


# ------------------------------------------------------------------ 1. start, as a user would


async def test_cli_start_reports_two_coordinators_and_status_names_the_active_one(
    cluster: Cluster, fluss_1_0: FlussServer
) -> None:
    desc = cluster.started
    assert desc["version"] == fluss_1_0.version == "1.0-SNAPSHOT"
    roles = [(p["role"], p["id"], p["alive"]) for p in desc["processes"]]
    assert roles == [
        ("zookeeper", 0, True),
        ("coordinator", 0, True),
        ("coordinator", 1, True),
        ("tablet-server", 0, True),
        ("tablet-server", 1, True),
        ("tablet-server", 2, True),
    ]
    coordinator_roles = sorted(p["coordinator_role"] for p in desc["processes"][1:3])
    assert coordinator_roles == ["active", "standby"]
    status = konsole("cluster", "status", "--run-dir", cluster.run_dir)
    assert status.returncode == 0, status.stderr
    lines = [line for line in status.stdout.splitlines() if line.strip().startswith("coordinator")]
    assert len(lines) == 2 and sum(" active " in f"{line} " for line in lines) == 1
    assert sum(" standby " in f"{line} " for line in lines) == 1
    active = next(p["id"] for p in desc["processes"][1:3] if p["coordinator_role"] == "active")
    cluster.record("first_election_winner", f"coordinator {active}")


# ------------------------------------------------------------------ 5. seed on 2 coordinators


def seed_lines(out: str) -> dict[str, str]:
    """table -> its state text in the report of `konsole cluster seed`."""
    found = {}
    for line in out.splitlines():
        match = re.match(r"\s+(\S+)\s.*?  \((.*)\)$", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


async def test_seed_completes_and_a_rerun_completes_a_half_done_seed(cluster: Cluster) -> None:
    t0 = time.monotonic()
    first = await asyncio.to_thread(konsole, "cluster", "seed", "--run-dir", cluster.run_dir)
    cluster.record("seed_seconds", round(time.monotonic() - t0, 1))
    assert first.returncode == 0, first.stderr
    states = seed_lines(first.stdout)
    assert set(states) == set(DEMO_TABLES)
    # A table whose first attempt failed (seen once: a pyfluss write that never finished)
    # is completed by the second one, and the report says so.
    retried = {n: st for n, st in states.items() if "retried after:" in st}
    cluster.record("seed_tables_retried", retried)
    assert all(s.startswith("created") for n, s in states.items() if n not in retried), states
    assert_seeded(first.stdout)

    # What the issue saw after a seed died: a PK table created with no rows, the last
    # table absent; plus a log table holding part of its rows.
    conn = await pf.connect(cluster.bootstrap)
    admin = conn.get_admin()
    try:
        async with asyncio.timeout(60):
            info = fluss.TablePath("go_sensor_demo", "sensor_info")
            await admin.drop_table(info, ignore_if_not_exists=False)
            await admin.create_table(info, demo_descriptor(PREVIEW_TABLE, 3), False)
            readings = fluss.TablePath("go_sensor_demo", "sensor_readings")
            await admin.drop_table(readings, ignore_if_not_exists=False)
            orders = fluss.TablePath("demo", "order_events")
            await admin.drop_table(orders, ignore_if_not_exists=False)
            await pf.create_ready(admin, orders, demo_descriptor("demo.order_events", 3), 3)
            table = await conn.table_for_writing(orders, 30)
            writer = table.new_append().create_writer()
            handles = [writer.append(row) for row in demo_rows("demo.order_events")[:10]]
            await writer.flush()
            await asyncio.gather(*(h.wait() for h in handles))
    finally:
        await close_quietly(conn)

    again = await asyncio.to_thread(konsole, "cluster", "seed", "--run-dir", cluster.run_dir)
    assert again.returncode == 0, again.stderr
    states = seed_lines(again.stdout)
    assert states[PREVIEW_TABLE].startswith("existed incomplete, 40 rows written"), again.stdout
    assert states["go_sensor_demo.sensor_readings"].startswith("created, 1200 rows"), again.stdout
    assert states["demo.order_events"].startswith("half-written log table recreated"), again.stdout
    assert states["demo.customer_profile"] == "existed complete, untouched"
    assert_seeded(again.stdout)

    third = await asyncio.to_thread(konsole, "cluster", "seed", "--run-dir", cluster.run_dir)
    assert third.returncode == 0, third.stderr
    assert set(seed_lines(third.stdout).values()) == {"existed complete, untouched"}
    assert "0 rows written" in third.stdout.splitlines()[0]
    assert_seeded(third.stdout)


def assert_seeded(report: str) -> None:
    """Every demo table holds its rows: log tables exactly, PK tables (changelog records)
    at least one per row."""
    for line in report.splitlines()[1:]:
        name = line.split()[0]
        records = int(re.search(r"log records=(\d+)", line).group(1))  # type: ignore[union-attr]
        assert records >= len(demo_rows(name)), line
        if " log " in line:
            assert records == len(demo_rows(name)), line


# ------------------------------------------------------------------ 1. standby coordinators


async def preview_loop(cluster: Cluster, done: asyncio.Event) -> list[tuple[float, int, int]]:
    """`konsole preview` of a seeded PK table, again and again: (start, exit code, rows)."""
    runs: list[tuple[float, int, int]] = []
    for _ in range(60):
        t0 = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "konsole.cli",
            "preview",
            PREVIEW_TABLE,
            "--bootstrap",
            cluster.bootstrap,
            "--format",
            "json",
            "--timeout",
            "10",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, _err = await asyncio.wait_for(proc.communicate(), 30)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            runs.append((t0, -1, 0))
            continue
        rows = len(json.loads(out)["rows"]) if proc.returncode in (0, 1) and out else 0
        runs.append((t0, proc.returncode or 0, rows))
        if done.is_set():
            break
    return runs


async def admin_loop(client: FlussClient, t_kill: float) -> list[tuple[float, bool, str]]:
    """A cheap coordinator request every ~100 ms until it has answered for 2 s after a
    failure (or 60 s passed): (start, ok, error type)."""
    samples: list[tuple[float, bool, str]] = []
    for _ in range(600):
        t = time.monotonic()
        try:
            await client.call(
                ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), coordinator=True, timeout=1.0
            )
            samples.append((t, True, ""))
        except FlussError as exc:
            code = getattr(exc, "code", None)
            samples.append((t, False, type(exc).__name__ + (f"({code})" if code else "")))
        failures = [s for s in samples if not s[1]]
        if failures and t - failures[-1][0] >= 2.0:
            break
        if t - t_kill > 60:
            break
        await asyncio.sleep(max(0.0, ADMIN_EVERY_S - (time.monotonic() - t)))
    return samples


async def test_active_coordinator_killed_the_standby_takes_over(
    cluster: Cluster, client: FlussClient
) -> None:
    endpoints = cluster.coordinator_endpoints()
    before = await probe_coordinators(endpoints, timeout=2.0)
    assert sorted(p.role for p in before) == ["active", "standby"], before
    active_id = next(i for i, p in enumerate(before) if p.active)
    assert active_id == cluster.lc.active_coordinator()
    survivor_id = 1 - active_id
    view_before = await gather_cluster(client)
    assert not view_before.errors and view_before.coordinator is not None
    assert view_before.coordinator.port == cluster.process("coordinator", active_id)["ports"]["rpc"]

    done = asyncio.Event()
    previews = asyncio.create_task(preview_loop(cluster, done))
    await asyncio.sleep(1.0)  # a preview or two before the kill
    t_kill = time.monotonic()
    await asyncio.to_thread(cluster.lc.kill, "cs", active_id)
    killed_s = time.monotonic() - t_kill
    admin = asyncio.create_task(admin_loop(client, t_kill))

    async def survivor_active_after() -> float | None:
        for _ in range(600):
            if (await probe_coordinators([endpoints[survivor_id]], timeout=1.0))[0].active:
                return time.monotonic() - t_kill
            await asyncio.sleep(0.1)
        return None

    takeover = asyncio.create_task(survivor_active_after())
    during = await gather_cluster(client, timeout=2.0)  # never raises: errors are kept
    takeover_s = await takeover
    samples = await admin
    done.set()
    runs = await asyncio.wait_for(previews, 90)

    failures = [s for s in samples if not s[1]]
    assert takeover_s is not None, "the standby never became active"
    assert failures, "no admin request failed: the kill did not reach the active coordinator?"
    recovered = next(s for s in samples if s[1] and s[0] > failures[-1][0])
    failed_s = recovered[0] - failures[0][0]
    cluster.record("election_standby_active_after_kill_s", round(takeover_s, 1))
    cluster.record("kill_took_s", round(killed_s, 2))
    cluster.record("election_admin_requests_failed_for_s", round(failed_s, 1))
    cluster.record(
        "election_admin_failures",
        {e: sum(1 for s in failures if s[2] == e) for e in sorted({s[2] for s in failures})},
    )
    cluster.record("election_admin_requests", len(samples))
    cluster.record("election_gather_during_errors", sorted({e.api for e in during.errors}))
    cluster.record("coordinator_redirects", [(e.api, e.reason) for e in client.events])
    cluster.record("previews_during_failover", [(round(t - t_kill, 1), c, n) for t, c, n in runs])
    assert failed_s < 30
    assert during.tablet_servers, "gather during the election lost the tablet servers"

    # The client follows: the coordinator it uses now is the survivor.
    assert client.coordinator is not None
    assert client.coordinator.port == cluster.process("coordinator", survivor_id)["ports"]["rpc"]
    assert any(e.new_address == endpoints[survivor_id] for e in client.events)
    view = await gather_cluster(client)
    assert not view.errors, view.errors
    assert view.coordinator is not None and view.coordinator.address == endpoints[survivor_id]
    assert {t.path for t in view.tables} == {t.path for t in view_before.tables}
    after = await probe_coordinators(endpoints, timeout=2.0)
    assert after[survivor_id].role == "active" and after[active_id].role == "unreachable"

    # `konsole preview` answered before, during and after the election: every run read the
    # whole table (the preview reads tablet servers; metadata comes from any of them).
    assert len(runs) >= 3 and any(t > t_kill for t, _, _ in runs)
    assert all(code == 0 and rows == 40 for _, code, rows in runs), runs

    status = json.loads(konsole("cluster", "status", "--json", "--run-dir", cluster.run_dir).stdout)
    coordinators = {p["id"]: p for p in status["processes"] if p["role"] == "coordinator"}
    assert coordinators[survivor_id]["coordinator_role"] == "active"
    assert not coordinators[active_id]["alive"]

    # Back to two coordinators: the restarted one joins as a standby.
    await asyncio.to_thread(cluster.lc.start_server, "cs", active_id)
    again = await probe_coordinators(endpoints, timeout=2.0)
    assert [p.role for p in again] == [
        "standby" if i == active_id else "active" for i in range(2)
    ], again
    cluster.record("restarted_coordinator_role", again[active_id].role)


# ------------------------------------------------------------------ 2. cluster health


async def test_cluster_health_green_yellow_or_red_green(
    cluster: Cluster, client: FlussClient
) -> None:
    admin = FlussAdmin(client)
    healthy = await admin.cluster_health()
    assert healthy.status is HealthStatus.GREEN, healthy
    assert healthy.in_sync_replicas == healthy.num_replicas
    assert healthy.active_leader_replicas == healthy.num_leader_replicas
    await asyncio.to_thread(cluster.lc.stop_server, "ts", FAULTY)
    seen: list[Any] = []
    try:

        async def degraded() -> bool:
            seen.append(await admin.cluster_health())
            return seen[-1].status is not HealthStatus.GREEN

        assert await until(degraded, 30, every=0.5) is not None, seen[-1:]
        stopped = seen[-1]
        assert stopped.status in (HealthStatus.YELLOW, HealthStatus.RED)
        cluster.record("health_while_ts_stopped", stopped)
    finally:
        await asyncio.to_thread(cluster.lc.start_server, "ts", FAULTY)
    back: list[Any] = []

    async def green() -> bool:
        back.append(await admin.cluster_health())
        return back[-1].status is HealthStatus.GREEN

    green_s = await until(green, 60, every=0.5)
    assert green_s is not None, back[-1:]
    cluster.record("health_green_again_after_restart_s", round(green_s, 1))


# ------------------------------------------------------------------ 3. disk write lock


@dataclass
class LockTables:
    db: str
    log: fluss.TablePath
    pk: fluss.TablePath
    log_id: int
    pk_id: int


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def lock_tables(cluster: Cluster, client: FlussClient) -> AsyncIterator[LockTables]:
    conn = await pf.connect(cluster.bootstrap)
    try:
        db = await pf.create_database(conn.get_admin(), pf.unique_name("faults"))
        log = await pf.create_log_table(conn, db, "locked_log", buckets=3)
        pk = await pf.create_pk_table(conn, db, "locked_pk", buckets=3)
        await pf.write_rows(conn, log, 30)
        await pf.write_rows(conn, pk, 30)
        md = await client.refresh_metadata([(db, "locked_log"), (db, "locked_pk")])
        yield LockTables(
            db,
            log,
            pk,
            md.tables[TablePath(db, "locked_log")].table_id,
            md.tables[TablePath(db, "locked_pk")].table_id,
        )
    finally:
        await close_quietly(conn)


async def test_disk_write_lock_seen_from_the_server_side(
    cluster: Cluster, client: FlussClient, lock_tables: LockTables
) -> None:
    ts = cluster.ts(FAULTY)
    endpoint = ts["endpoint"]
    restart_s = await restart(cluster, FAULTY, LOCK_SETTINGS)
    cluster.record("restart_with_settings_s", restart_s)

    def locked() -> bool:
        return values(scrape(ts["metrics_url"]), "fluss_tabletserver_diskWriteLocked") == [1.0]

    assert await until(locked, 10) is not None
    samples = scrape(ts["metrics_url"])
    ratio = values(samples, "fluss_tabletserver_diskUsageRatio")
    assert ratio and ratio[0] > 0.05
    cluster.record("disk_usage_ratio", round(ratio[0], 4))
    log_text = Path(ts["log"]).read_text(errors="replace")
    line = next(
        (
            ln
            for ln in log_text.splitlines()
            if "rejecting writes" in ln and "DiskUsageMonitor" in ln
        ),
        None,
    )
    assert line is not None
    cluster.record("disk_lock_log_line", line.split(" - ", 1)[-1])

    # The code a write meets: DISK_WRITE_LOCKED (70), for the whole request, typed by us.
    produce = await raw(endpoint, ApiKey.PRODUCE_LOG, 0, empty_produce_log(lock_tables.log_id))
    assert isinstance(produce, error_codes.DiskWriteLockedError), produce
    assert produce.code == 70 and produce.retriable
    put = await raw(endpoint, ApiKey.PUT_KV, 2, header_only_put_kv(lock_tables.pk_id, 0))
    assert isinstance(put, error_codes.DiskWriteLockedError), put
    cluster.record("disk_lock_error", str(produce).split(" [")[0])

    # What a pyfluss writer sees: no error, its appends to the locked server's buckets
    # just never complete (it retries); appends to the other servers' buckets do.
    # The table has one replica per bucket over 3 servers: one bucket is FAULTY's, led by
    # it again once it has registered after the restart.
    locked_log = TablePath(lock_tables.db, "locked_log")

    async def faulty_leads() -> bool:
        return FAULTY in (await leader_of(client, locked_log)).values()

    assert await until(faulty_leads, 30, every=0.5) is not None, await leader_of(client, locked_log)
    cluster.record("locked_log_leaders", await leader_of(client, locked_log))
    outcome = await write_in_child(cluster, lock_tables.log, "append", 30, 8)
    cluster.record("pyfluss_append_while_locked", outcome)
    assert outcome.get("pending", 0) > 0, outcome

    # The server counts the refused requests (a meter: a rate over its last minute).
    def produce_errors() -> bool:
        rate = values(
            scrape(ts["metrics_url"]),
            "fluss_tabletserver_request_errorsPerSecond",
            request="produceLog",
        )
        return bool(rate) and rate[0] > 0

    assert await until(produce_errors, 15, every=1.0) is not None
    cluster.record(
        "locked_produce_metrics",
        {
            s.name.removeprefix("fluss_tabletserver_")
            + (f"[{s.labels.get('request') or s.labels.get('table')}]"): s.value
            for s in scrape(ts["metrics_url"])
            if s.value
            and (
                ("produceLog" in s.labels.get("request", "") and "errors" in s.name)
                or ("failedProduceLog" in s.name)
            )
        },
    )

    # Our read path does not meet the lock: the locked server still answers reads.
    offsets = await FlussAdmin(client).list_offsets(TablePath(lock_tables.db, "locked_log"), LATEST)
    assert all(b.ok for b in offsets.buckets), offsets
    cluster.record("locked_log_offsets_read", {b.bucket_id: b.offset for b in offsets.buckets})
    health = await FlussAdmin(client).cluster_health()
    cluster.record("health_while_disk_locked", health)


async def test_disk_write_ratios_are_dynamic_cluster_configs(cluster: Cluster) -> None:
    """Runs while ``FAULTY`` is locked by its static config (previous test)."""
    other = cluster.ts(0)
    active = cluster.lc.active_coordinator()
    assert active is not None
    endpoint = cluster.process("coordinator", active)["endpoint"]
    limit, recover = "server.data-disk.write-limit-ratio", "server.data-disk.write-recover-ratio"

    def locked(ts: dict[str, Any]) -> float:
        return values(scrape(ts["metrics_url"]), "fluss_tabletserver_diskWriteLocked")[0]

    not_dynamic = await raw(
        endpoint,
        ApiKey.ALTER_CLUSTER_CONFIGS,
        0,
        alter_cluster_configs({"server.data-disk.check-interval": "1s"}),
    )
    assert isinstance(not_dynamic, error_codes.ConfigError), not_dynamic
    limit_alone = await raw(
        endpoint, ApiKey.ALTER_CLUSTER_CONFIGS, 0, alter_cluster_configs({limit: "0.05"})
    )
    assert isinstance(limit_alone, error_codes.ConfigError), limit_alone
    cluster.record(
        "alter_config_refusals",
        [str(e).split(" [")[0] for e in (not_dynamic, limit_alone)],
    )
    assert locked(other) == 0.0
    try:
        lowered = await raw(
            endpoint,
            ApiKey.ALTER_CLUSTER_CONFIGS,
            0,
            alter_cluster_configs({recover: "0.04", limit: "0.05"}),
        )
        assert lowered == b"", lowered
        lock_s = await until(lambda: locked(other) == 1.0, 10, every=0.1)
        assert lock_s is not None
        cluster.record("dynamic_lower_locks_other_servers_within_s", round(lock_s, 1))
        configs = await raw(
            endpoint,
            ApiKey.DESCRIBE_CLUSTER_CONFIGS,
            0,
            pb.DescribeClusterConfigsRequest().SerializeToString(),
        )
        assert isinstance(configs, bytes)
        described = pb.DescribeClusterConfigsResponse.FromString(configs)
        dynamic = {
            c.config_key: (c.config_value, c.config_source)
            for c in described.configs
            if "data-disk" in c.config_key
        }
        cluster.record("describe_cluster_configs_after_lowering", dynamic)
    finally:
        raised = await raw(
            endpoint,
            ApiKey.ALTER_CLUSTER_CONFIGS,
            0,
            alter_cluster_configs({limit: None, recover: None}),
        )
    assert raised == b"", raised
    unlock_s = await until(lambda: locked(other) == 0.0, 10, every=0.1)
    assert unlock_s is not None
    cluster.record("dynamic_delete_unlocks_within_s", round(unlock_s, 1))
    # Deleting the dynamic values falls back to each server's own file: FAULTY stays locked.
    assert locked(cluster.ts(FAULTY)) == 1.0


# ------------------------------------------------------------------ 4. KV backpressure


async def test_kv_backpressure_metrics_and_typed_rejection(
    cluster: Cluster, client: FlussClient, lock_tables: LockTables
) -> None:
    ts = cluster.ts(FAULTY)
    await restart(cluster, FAULTY, BACKPRESSURE_SETTINGS)  # also lifts the disk lock
    conn = await pf.connect(cluster.bootstrap)
    try:
        # Created after the restart, so the leaders pyfluss finds are the ones it keeps.
        pk = await pf.create_pk_table(conn, lock_tables.db, "pressed_pk", buckets=3)
        path = TablePath(lock_tables.db, "pressed_pk")
        leaders = await leader_of(client, path)
        on_faulty = [b for b, leader in leaders.items() if leader == FAULTY]
        table_id = client.metadata.tables[path].table_id
        cluster.record("pressed_pk_leaders", leaders)
        assert on_faulty, f"no bucket of the table landed on tablet server {FAULTY}: {leaders}"

        # ~6 MB of upserts queued at once (bounded volume: pyfluss blocks the calling
        # thread once its buffer is full), then one bounded flush.
        outcome = await write_in_child(cluster, pk, "upsert", 6_000, 10)
        cluster.record("pyfluss_upserts_under_pressure", outcome)

        v2 = await raw(ts["endpoint"], ApiKey.PUT_KV, 2, header_only_put_kv(table_id, on_faulty[0]))
        v1 = await raw(ts["endpoint"], ApiKey.PUT_KV, 1, header_only_put_kv(table_id, on_faulty[0]))
        assert isinstance(v2, bytes) and isinstance(v1, bytes), (v2, v1)
        answers = {"v2": put_kv_bucket_errors(v2), "v1": put_kv_bucket_errors(v1)}
        cluster.record("header_only_put_kv_answers", answers)
        samples = scrape(ts["metrics_url"])
        mine = {"database": lock_tables.db, "table": "pressed_pk"}
        rejections = values(
            samples, "fluss_tabletserver_table_kvBackpressureRejectionsTotal", **mine
        )
        pressure = values(samples, "fluss_tabletserver_table_kvBackpressureMaxPressure", **mine)
        l0 = values(samples, "fluss_tabletserver_table_rocksdbNumFilesAtLevel0Max", **mine)
        cluster.record(
            "kv_backpressure_metrics",
            {"rejections_total": rejections, "max_pressure": pressure, "l0_files_max": l0},
        )
        # The metric path exists for the table on the real endpoint.
        assert len(rejections) == 1 and len(pressure) == 1
        # Rejected by the flush-budget gate the burst closed (docs/protocol.md): typed as
        # ours, counted by the server, and downgraded to KV_STORAGE_EXCEPTION (11) for a
        # PutKv v1 client. A batch let through would meet the schema check instead (9).
        v2_code, v1_code = answers["v2"][0][1], answers["v1"][0][1]
        assert (v2_code, v1_code) == (72, 11), answers
        err = error_codes.from_code(v2_code, answers["v2"][0][2])
        assert isinstance(err, error_codes.StorageBackpressureError) and err.retriable
        assert rejections[0] >= 2
    finally:
        await close_quietly(conn)


# ------------------------------------------------------------------ back to normal


async def test_normal_settings_accept_writes_again(
    cluster: Cluster, client: FlussClient, lock_tables: LockTables
) -> None:
    ts = cluster.ts(FAULTY)
    await restart(cluster, FAULTY, [])
    assert values(scrape(ts["metrics_url"]), "fluss_tabletserver_diskWriteLocked") == [0.0]
    produce = await raw(
        ts["endpoint"], ApiKey.PRODUCE_LOG, 0, empty_produce_log(lock_tables.log_id)
    )
    assert produce == b"", produce  # the empty ProduceLog is accepted: no lock any more
    # pyfluss writes again, into tables created after the restart with a bucket on it.
    conn = await pf.connect(cluster.bootstrap)
    try:
        log = await pf.create_log_table(conn, lock_tables.db, "after_log", buckets=3)
        pk = await pf.create_pk_table(conn, lock_tables.db, "after_pk", buckets=3)
        leaders = await leader_of(client, TablePath(lock_tables.db, "after_pk"))
        cluster.record("after_pk_leaders", leaders)
        assert FAULTY in leaders.values(), leaders
        async with asyncio.timeout(30):
            await pf.write_rows(conn, log, 30)
            written = await pf.write_rows(conn, pk, 30)
            rows = await pf.read_pk_rows(conn, pk, range(30))
        assert sorted(rows, key=lambda r: r["id"]) == written
        offsets = await pf.latest_offsets(conn, log, 3)
        assert sum(offsets.values()) == 30
    finally:
        await close_quietly(conn)

    # And into the tables it was refused on (in a child process, like the refused writes).
    # Not asserted: in 2 of 5 runs the bucket on this server kept pyfluss's appends pending
    # (fresh process, leaders listed), while the others took them; what the server saw of
    # those appends is recorded next to the outcome.
    for name in ("locked_log", "locked_pk"):

        async def led(name: str = name) -> bool:
            leaders = await leader_of(client, TablePath(lock_tables.db, name))
            return all(leader is not None and leader >= 0 for leader in leaders.values())

        assert await until(led, 30, every=0.5) is not None

    def produce_counters() -> dict[str, float]:
        samples = scrape(ts["metrics_url"])
        return {
            "processed": sum(
                values(
                    samples,
                    "fluss_tabletserver_request_requestProcessTimeMs_count",
                    request="produceLog",
                )
            ),
            "errors_per_s": sum(
                values(samples, "fluss_tabletserver_request_errorsPerSecond", request="produceLog")
            ),
        }

    before = produce_counters()
    outcome = await write_in_child(cluster, lock_tables.log, "append", 30, 10)
    await asyncio.sleep(5)  # meters are updated every few seconds
    cluster.record(
        "pyfluss_append_into_once_refused_table",
        {**outcome, "server_before": before, "server_after": produce_counters()},
    )
    health = await FlussAdmin(client).cluster_health()
    cluster.record("health_at_the_end", health.status.name)

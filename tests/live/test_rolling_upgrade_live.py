"""Issue 43's acceptance: a 0.9.1 cluster rolled onto the 1.0 line, one server at a time,
under a producer that counts acknowledged writes, with ``konsole upgrade gate`` between
the steps; every acknowledged row is readable at the end. The gated upgrade is played by
``konsole demo --upgrade``'s own script (:class:`~konsole.localcluster.upgrade_play.UpgradePlay`
behind the gate command's loop), so this run is also the demo's live proof.

The cluster is this module's own (3 tablet servers, RF-3 log and primary-key tables): the
test turns it into another cluster, so it cannot share the session's. It needs both
server generations (0.9.1 from Maven, the 1.0 line from ``KONSOLE_TEST_FLUSS_HOME``), is not
parametrised, and every wait is bounded. Observed figures (gate waits, restart times,
producer failures) are printed (``-s``) for docs/upgrade.md.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import fluss
import pytest

from konsole.cli.options import ConnectionArgs
from konsole.cli.upgrade import gate_for
from konsole.collect.history.notes import write_note
from konsole.localcluster import LocalCluster
from konsole.localcluster.upgrade_play import Move, MoveRecord, UpgradePlay, upgrade_order
from store import open_reader
from tests._testutil import pyfluss_data as pf
from tests._testutil.acked_producer import AckedProducer
from tests._testutil.cli import run_konsole
from tests._testutil.waiting import wait_until
from tests.conftest import TABLET_SERVERS, FlussServer, our_java_processes, resolve_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

BUCKETS = 3
RENAMED_KEY = "log.fetch.max-bytes"
#: The servers' data dirs sit on the machine's disk, whose fill is not this test's: the 1.0
#: line reports it (diskUsageRatio) and the check warns under 10% of room below the write
#: limit (85% by default). Seen: the host's disk at 75% held the gate for its whole 300 s.
#: A 99% limit (ignored by 0.9.1, read by the 1.0 servers from the same server.yaml)
#: keeps the host's fill out of the verdicts.
HOST_DISK = "server.data-disk.write-limit-ratio=0.99"
#: A bucket stayed under-replicated for over 120 s on a freshly made cluster once, with
#: the machine's load average at 43 on 2 cores (followers late from the table's creation:
#: "Shrink ISR" in the servers' logs); the gate rightly waited. Bounded, never a sleep.
GATE_TIMEOUT = 300.0


@pytest.fixture
def servers(request: pytest.FixtureRequest) -> tuple[FlussServer, FlussServer]:
    return resolve_server(request.config, "0.9"), resolve_server(request.config, "1.0")


async def _make_tables(bootstrap: str) -> tuple[str, str]:
    conn = await pf.connect(bootstrap)
    try:
        db = await pf.create_database(conn.get_admin(), pf.unique_name("upgrade"))
        await pf.create_log_table(conn, db, "events", buckets=BUCKETS, replication_factor=3)
        await pf.create_pk_table(conn, db, "accounts", buckets=BUCKETS, replication_factor=3)
    finally:
        await pf.close_connection(conn)
    return f"{db}.events", f"{db}.accounts"


async def _read_back(bootstrap: str, log: str, pk: str, acked: int) -> tuple[set[int], int]:
    """Ids in the log table (every record: a batch written again after a failure is there
    twice, so the read stops at the log's end, not at ``acked`` rows), and how many of a
    sample of acknowledged keys the PK table has."""
    conn = await pf.connect(bootstrap)
    try:
        db, _, name = log.partition(".")
        path = fluss.TablePath(db, name)
        records = sum((await pf.latest_offsets(conn, path, BUCKETS)).values())
        assert records >= acked, f"{records} records in the log, {acked} acknowledged"
        rows = await pf.read_all_log(conn, path, records, timeout_s=60)
        db, _, name = pk.partition(".")
        sample = sorted({0, acked - 1, *range(0, acked, max(1, acked // 50))})
        found = await pf.read_pk_rows(conn, fluss.TablePath(db, name), sample)
        expected = {r["id"]: r for r in pf.expected_rows(acked)}
        assert all(row == expected[row["id"]] for row in found), (
            "a row differs from what was written"
        )
        return {int(r["id"]) for r in rows}, len(found) - len(sample)
    finally:
        await pf.close_connection(conn)


def _gate(run_dir: Path, *extra: str) -> tuple[int, float, str]:
    started = time.monotonic()
    done = run_konsole(
        "upgrade",
        "gate",
        "--local",
        "--run-dir",
        str(run_dir),
        "--timeout",
        str(GATE_TIMEOUT),
        "--interval",
        "1",
        *extra,
        timeout=GATE_TIMEOUT + 30,
    )
    return done.returncode, time.monotonic() - started, done.stdout + done.stderr


def _leading_under_replicated(gate_said: str) -> list[int]:
    """The tablet servers the gate's WAIT names as leading under-replicated buckets (the
    servers' own ``underReplicated`` metric: "tablet-server 0: 2 under-replicated bucket(s)
    it leads")."""
    found = re.findall(r"tablet-server (\d+): \d+ under-replicated bucket\(s\) it leads", gate_said)
    return sorted({int(sid) for sid in found})


def _upgrade_check(run_dir: Path) -> tuple[int, dict[str, Any]]:
    done = run_konsole(
        "upgrade",
        "check",
        "--local",
        "--run-dir",
        str(run_dir),
        "--format",
        "json",
        timeout=60,
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def _record(run_dir: Path, history: Path) -> subprocess.Popen[str]:
    """``konsole record`` on the cluster for the whole upgrade (one poll a second)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "konsole.cli",
            "record",
            "--local",
            "--run-dir",
            str(run_dir),
            "--history",
            str(history),
            "--interval",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _events(history: Path) -> list[dict[str, Any]]:
    done = run_konsole(
        "history", "events", "--history", str(history), "--format", "json", timeout=60
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    return list(doc["events"] if isinstance(doc, dict) else doc)


def _preview_count(run_dir: Path, table: str, limit: int) -> int:
    done = run_konsole(
        "preview",
        table,
        "--local",
        "--run-dir",
        str(run_dir),
        "--limit",
        str(limit),
        "--format",
        "jsonl",
        "--timeout",
        "60",
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return sum(1 for line in done.stdout.splitlines() if line.strip())


def test_a_rolling_upgrade_from_0_9_to_1_0_behind_the_gate_keeps_every_acknowledged_row(
    servers: tuple[FlussServer, FlussServer], tmp_path: Path
) -> None:
    old, new = servers
    assert new.fluss_home is not None
    cluster = LocalCluster(tmp_path / "cluster")
    # an old key name (renamed in 1.0, still read): the readiness check must name it
    desc = cluster.start(
        old.version,
        tablet_servers=TABLET_SERVERS,
        ready_timeout=180,
        settings=[f"{RENAMED_KEY}=16mb", HOST_DISK],
    )
    run_dir = Path(desc.run_dir)
    seen: dict[str, Any] = {"steps": []}
    producer: AckedProducer | None = None
    history = tmp_path / "history.sqlite"
    recorder = _record(run_dir, history)
    try:
        log, pk = asyncio.run(_make_tables(desc.bootstrap_servers))
        producer = AckedProducer(desc.bootstrap_servers, [log, pk])
        producer.start()
        wait_until(lambda: producer.acked, lambda n: n >= 200, "first acknowledged writes", 60)
        code, _took, text = _gate(run_dir)
        assert code == 0, text
        code, before = _upgrade_check(run_dir)
        assert (before["lines"], before["skew"]) == (["0.9"], False), before
        assert code == 1, before  # the renamed key is an item to act on
        renamed = [i for i in before["items"] if i["item"] == "config-keys"]
        assert renamed and all(RENAMED_KEY in i["text"] for i in renamed), renamed
        assert [s["subject"] for s in before["steps"]][:3] == [
            f"tablet-server {i}" for i in range(TABLET_SERVERS)
        ]
        assert before["steps"][-1]["subject"].endswith("(active, last)")
        # The steps are `konsole demo --upgrade`'s own script (UpgradePlay) behind the
        # gate command's own loop (gate_for): each tablet server (named to the gate), then
        # the coordinator, the gate before each and once more at the end; its notes go
        # into the recorded history, as the demo's do.
        acked_at = [producer.acked]

        def after(record: MoveRecord) -> None:
            acked_at.append(producer.acked)
            assert record.version == new.version, record
            if record.move == Move("tablet-server", 0):
                _code, mid = _upgrade_check(run_dir)
                assert (mid["lines"], mid["skew"]) == (["0.9", "1.0"], True), mid

        play = UpgradePlay(
            cluster,
            upgrade_order(cluster.describe(), cluster.active_coordinator()),
            fluss_home=new.fluss_home,
            version=new.version,
            gate=gate_for(ConnectionArgs(local=True, run_dir=run_dir), timeout=GATE_TIMEOUT),
            note=lambda text: write_note(history, text),
            after_s=0,
            on_move=after,
        )
        play.run()
        assert not play.failed, play.failed
        assert [r.move.subject for r in play.done] == [
            *(f"tablet-server {i}" for i in range(TABLET_SERVERS)),
            "coordinator 0",
        ]
        assert play.final is not None and play.final.safe, play.final
        for i, record in enumerate(play.done):
            seen["steps"].append(
                {
                    "server": record.move.subject,
                    "gate_before_s": round(record.gate.waited_s, 1),
                    "restart_s": round(record.restart_s, 1),
                    "acked_during": acked_at[i + 1] - acked_at[i],
                    "gate_said_before": [*record.gate.said, record.gate.summary],
                }
            )
        seen["safe_at_the_end_s"] = round(play.final.waited_s, 1)
        code, _took, text = _gate(run_dir)  # the command itself agrees
        assert code == 0, text
        last = producer.acked
        wait_until(lambda: producer.acked, lambda n: n > last, "writes on 1.0", 60)
        producer.stop()
        acked = producer.acked
        ids, missing = asyncio.run(_read_back(desc.bootstrap_servers, log, pk, acked))
        assert set(range(acked)) <= ids, (
            f"acknowledged ids lost: {sorted(set(range(acked)) - ids)[:10]}"
        )
        assert missing == 0, "acknowledged keys missing from the primary-key table"
        assert _preview_count(run_dir, pk, acked + 1000) >= acked
        _code, end = _upgrade_check(run_dir)
        assert (end["lines"], end["skew"]) == (["1.0"], False), end
        assert all(s["done"] for s in end["steps"]), end["steps"]
        recorder.send_signal(signal.SIGINT)
        recorder.wait(30)
        events = _events(history)
        changed = sorted(
            e["subject"]["name"] for e in events if e["kind"] == "server_version_changed"
        )
        assert len(changed) == TABLET_SERVERS + 1, changed  # each server once
        assert changed[0].startswith("coordinator "), changed
        assert {f"tablet-server {i}" for i in range(TABLET_SERVERS)} <= set(changed), changed
        with open_reader(history) as reader:  # the demo's notes, as the Events screen has them
            said = [n.text for n in reader.notes()]
        assert [n for n in said if n.endswith(f"starting it again on {new.version}")] == [
            f"demo upgrade: {r.move.subject}: stopping it, starting it again on {new.version}"
            for r in play.done
        ], said
        assert said[-1] == "demo upgrade: over", said
        kinds: dict[str, int] = {}
        for e in events:
            kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
        seen["events"] = kinds
        described = cluster.describe()
        assert {p.version for p in described.processes if p.role != "zookeeper"} == {new.version}
        seen.update(
            acked=acked,
            failures=[text for _t, text in producer.failures],
            children=producer.children,
            longest_wait_s=round(producer.longest_gap(), 1),
        )
        print(json.dumps(seen, indent=1))
    finally:
        if recorder.poll() is None:
            recorder.kill()
            recorder.wait(10)
        if producer is not None:
            producer.stop()
        cluster.stop(graceful=False)
        assert not our_java_processes(run_dir)


def test_the_same_upgrade_without_the_gate_is_noted_what_it_costs(
    servers: tuple[FlussServer, FlussServer], tmp_path: Path
) -> None:
    """Each next server goes down as soon as the one before is launched again (as a service
    manager's back-to-back restarts do), with no gate. A one-look gate (``--timeout 1``)
    right after each launch says what it would have waited for; the producer's failures and
    its longest wait between acknowledgements are the cost. At the end the cluster recovers
    and every acknowledged row is readable."""
    old, new = servers
    assert new.fluss_home is not None
    cluster = LocalCluster(tmp_path / "cluster")
    desc = cluster.start(
        old.version, tablet_servers=TABLET_SERVERS, ready_timeout=180, settings=[HOST_DISK]
    )
    run_dir = Path(desc.run_dir)
    producer: AckedProducer | None = None
    seen: dict[str, Any] = {"steps": []}
    try:
        log, pk = asyncio.run(_make_tables(desc.bootstrap_servers))
        producer = AckedProducer(desc.bootstrap_servers, [log, pk])
        producer.start()
        wait_until(lambda: producer.acked, lambda n: n >= 200, "first acknowledged writes", 60)
        started = time.monotonic()
        for role, sid in [("ts", i) for i in range(TABLET_SERVERS)] + [("coordinator", 0)]:
            t0 = time.monotonic()
            cluster.stop_server(role, sid)
            cluster.start_server(role, sid, fluss_home=new.fluss_home, wait=False)
            code, _took, said = _gate(run_dir, "--timeout", "1")
            seen["steps"].append(
                {
                    "server": f"{role} {sid}",
                    "restart_s": round(time.monotonic() - t0, 1),
                    "gate_exit": code,
                    "gate_said": said.strip().splitlines(),
                }
            )
        seen["upgrade_s"] = round(time.monotonic() - started, 1)
        code, recovered, text = _gate(run_dir)
        stuck = _leading_under_replicated(text) if code != 0 else []
        if stuck:
            # Seen once in four CI rehearsals: an ISR expansion a leader sent while the
            # coordinator was down failed, and the leader did not try again in 5 minutes;
            # the servers' own underReplicated metric said so, and the gate named them.
            # A Fluss behaviour, not konsole's: as an operator would, restart that leader.
            seen["stuck_leaders"] = {"servers": stuck, "gate_said": text.strip().splitlines()}
            for sid in stuck:
                cluster.stop_server("ts", sid)
                cluster.start_server("ts", sid, fluss_home=new.fluss_home)
            code, recovered, text = _gate(run_dir)
        assert code == 0, f"the cluster did not recover: {text}"
        seen["safe_again_s"] = round(recovered, 1)
        last = producer.acked
        wait_until(lambda: producer.acked, lambda n: n > last, "writes on 1.0", 60)
        producer.stop()
        acked = producer.acked
        ids, missing = asyncio.run(_read_back(desc.bootstrap_servers, log, pk, acked))
        lost = sorted(set(range(acked)) - ids)
        seen.update(
            acked=acked,
            lost=len(lost),
            pk_missing=-missing,
            failures=[text for _t, text in producer.failures],
            longest_wait_s=round(producer.longest_gap(started), 1),
        )
        print(json.dumps(seen, indent=1))
        # the gate's value: right after a launch it would have held the next step
        assert any(step["gate_exit"] != 0 for step in seen["steps"]), seen["steps"]
        assert not lost, f"acknowledged ids lost without the gate: {lost[:10]}"
        assert missing == 0, "acknowledged keys missing from the primary-key table"
    finally:
        if producer is not None:
            producer.stop()
        cluster.stop(graceful=False)
        assert not our_java_processes(run_dir)

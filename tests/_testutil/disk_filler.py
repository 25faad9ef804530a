"""A pyfluss writer that fills a tablet server's disk at a steady byte rate, in a child
process (the capacity live tests' independent load).

Why a process: once the server locks its disk, writes are refused and retried, and a
pyfluss writer whose records cannot be delivered cannot be stopped from Python (see
konsole.localcluster.settle); ending the process is the one sure stop.

``python -m tests._testutil.disk_filler SPEC`` (SPEC a JSON object: bootstrap, database,
table, bytes_per_s, row_bytes, tick_s). The table is a log table (``id BIGINT``, ``payload
STRING``) made by :func:`create_fill_table`. Each tick the child appends rows whose payloads
are random text (so that compression cannot shrink them much) and says on stdout
``{"acked": bytes, "at": time}`` once they are acknowledged, or ``{"failed": text}`` when a
write fails (then it goes on trying: the disk may be freed). End of stdin means stop; the
parent kills it after a grace period.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import fluss
import pyarrow as pa

from tests._testutil.pace import Pace

__all__ = ["FILL_SCHEMA", "Filler", "create_fill_table", "running_filler"]

FILL_SCHEMA: Final = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), pa.field("payload", pa.string())]
)
#: A write not acknowledged in this time counts as failed (the lock may be on).
WRITE_TIMEOUT_S: Final = 5.0
STOP_GRACE_S: Final = 3.0


async def create_fill_table(
    bootstrap: str, database: str, table: str, *, buckets: int = 1, timeout_s: float = 60.0
) -> None:
    """The log table the filler appends to (replication factor 1: one server's disk)."""
    from konsole.localcluster.settle import SettledConnection
    from tests._testutil import pyfluss_data as pf

    conn = await SettledConnection.open(fluss.Config({"bootstrap.servers": bootstrap}), timeout_s)
    try:
        admin = conn.get_admin()
        path = fluss.TablePath(database, table)
        descriptor = fluss.TableDescriptor(
            fluss.Schema(FILL_SCHEMA),
            bucket_count=buckets,
            bucket_keys=["id"],
            properties={"table.replication.factor": "1"},
        )
        async with asyncio.timeout(timeout_s):
            await admin.create_database(database, ignore_if_exists=True)
        await pf.create_ready(admin, path, descriptor, buckets)
    finally:
        await conn.close_settled(timeout_s)


def _payload(size: int) -> str:
    return base64.b64encode(os.urandom(size * 3 // 4 + 1)).decode()[:size]


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


async def _fill(spec: dict[str, Any], stop: threading.Event) -> None:
    conn = await fluss.FlussConnection.create(
        fluss.Config({"bootstrap.servers": spec["bootstrap"]})
    )
    table = await conn.get_table(fluss.TablePath(spec["database"], spec["table"]))
    writer = table.new_append().create_writer()
    tick, row_bytes = float(spec["tick_s"]), int(spec["row_bytes"])
    pace = Pace(float(spec["bytes_per_s"]) / row_bytes, tick, time.monotonic())
    next_id = 0
    while not stop.is_set():  # bounded by the parent: it closes stdin, then kills
        # What the schedule owes, a stall made up by one write: never a sprint of writes
        # faster than the pace (tests/_testutil/pace.py says why).
        count = pace.owed(time.monotonic())
        rows = [{"id": next_id + i, "payload": _payload(row_bytes)} for i in range(count)]
        next_id += count
        try:
            handles = [writer.append(r) for r in rows]
            async with asyncio.timeout(WRITE_TIMEOUT_S):
                await writer.flush()
                await asyncio.gather(*(h.wait() for h in handles))
            _say({"acked": count * row_bytes, "at": time.time()})
        except Exception as exc:  # the lock: said, and tried again next tick
            _say({"failed": f"{type(exc).__name__}: {exc}"[:300], "at": time.time()})
        await asyncio.to_thread(stop.wait, pace.wait_s(time.monotonic()))


def main(argv: list[str]) -> None:
    spec = json.loads(argv[0])
    # Ahead of the test clusters' JVMs where the suite may (as root: CI): the live parts
    # run four clusters on 2 cores, and a fill kept from a CPU is not the steady pace the
    # forecast test judges against. Its own work is small (2 MB/s of text).
    with contextlib.suppress(OSError):
        os.nice(-5)
    stop = threading.Event()

    def watch_stdin() -> None:
        for _ in sys.stdin:  # nothing is sent; EOF is the signal
            pass
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    asyncio.run(_fill(spec, stop))
    sys.stdout.flush()
    os._exit(0)  # no interpreter shutdown under pyfluss' threads


@dataclass
class Filler:
    """The running child and what it said (read by a thread)."""

    proc: subprocess.Popen[str]
    acked: int = 0
    failures: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:  # bounded: the child ends or is killed
            with contextlib.suppress(ValueError):
                said = json.loads(line)
                with self.lock:
                    if "acked" in said:
                        self.acked += int(said["acked"])
                    elif "failed" in said:
                        self.failures.append(str(said["failed"]))

    def stop(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


@contextlib.contextmanager
def running_filler(
    bootstrap: str,
    database: str,
    table: str,
    *,
    bytes_per_s: float,
    row_bytes: int = 4096,
    tick_s: float = 0.25,
) -> Iterator[Filler]:
    """The filler child for the block; stopped (killed if need be) on exit."""
    spec = {
        "bootstrap": bootstrap,
        "database": database,
        "table": table,
        "bytes_per_s": bytes_per_s,
        "row_bytes": row_bytes,
        "tick_s": tick_s,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests._testutil.disk_filler", json.dumps(spec)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    filler = Filler(proc)
    threading.Thread(target=filler._read, daemon=True).start()
    try:
        yield filler
    finally:
        filler.stop()


if __name__ == "__main__":
    main(sys.argv[1:])

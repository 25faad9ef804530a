"""A pyfluss producer for live tests that counts acknowledged writes (not a test).

:class:`AckedProducer` supervises child processes (``python -m tests._testutil.acked_producer
SPEC``); each holds one pyfluss connection and writes batches of
:func:`tests._testutil.pyfluss_data.expected_rows` (ids from ``start``) to every table in
SPEC, one batch to all tables, then says ``{"acked": next_id}`` on stdout: every id below
it is acknowledged by every table. A failed write is said (``{"failed": text}``) and the
child ends (a pyfluss writer that cannot deliver cannot be stopped otherwise, see
konsole.localcluster.producer_child); the supervisor starts another from the last
acknowledged id after a pause. A log table may therefore hold a batch twice (written,
not acknowledged, written again); a primary-key table holds each id once.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Final

BATCH: Final = 50
PAUSE_S: Final = 0.2
WRITE_TIMEOUT_S: Final = 15.0
BACKOFF_S: Final = 1.0
MAX_CHILDREN: Final = 200


@dataclass
class AckedProducer:
    bootstrap: str
    tables: list[str]
    acked: int = 0
    failures: list[tuple[float, str]] = field(default_factory=list)
    #: When each acknowledgement arrived (monotonic): the longest gap is the writes' outage.
    ack_times: list[float] = field(default_factory=list)
    children: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _child: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._supervise, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 20.0) -> None:
        self._stop.set()
        child = self._child
        if child is not None and child.stdin is not None:
            with contextlib.suppress(OSError):
                child.stdin.close()
        if self._thread is not None:
            self._thread.join(timeout)
        child = self._child
        if child is not None and child.poll() is None:
            child.kill()
            child.wait(5)

    def longest_gap(self, since: float = 0.0) -> float:
        """The longest wait between two acknowledgements after ``since`` (monotonic)."""
        times = [t for t in self.ack_times if t >= since]
        return max((b - a for a, b in itertools.pairwise(times)), default=0.0)

    def _supervise(self) -> None:
        for _ in range(MAX_CHILDREN):
            if self._stop.is_set():
                return
            spec = {"bootstrap": self.bootstrap, "tables": self.tables, "start": self.acked}
            child = subprocess.Popen(
                [sys.executable, "-m", "tests._testutil.acked_producer", json.dumps(spec)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            self._child = child
            self.children += 1
            assert child.stdout is not None
            for line in child.stdout:
                message = json.loads(line)
                if "acked" in message:
                    self.acked = int(message["acked"])
                    self.ack_times.append(time.monotonic())
                elif "failed" in message:
                    self.failures.append((time.time(), str(message["failed"])))
            child.wait(30)
            self._stop.wait(BACKOFF_S)


async def _produce(spec: dict[str, Any], stop: threading.Event) -> None:
    import fluss

    from konsole.localcluster.producer import describe_failure
    from konsole.localcluster.seed import write_table_rows
    from konsole.localcluster.settle import SettledConnection
    from tests._testutil.pyfluss_data import expected_rows

    at = int(spec["start"])
    try:
        conn = await SettledConnection.open(
            fluss.Config({"bootstrap.servers": spec["bootstrap"]}), WRITE_TIMEOUT_S
        )
        handles = []
        for name in spec["tables"]:
            database, _, table = name.partition(".")
            handles.append(
                await conn.table_for_writing(fluss.TablePath(database, table), WRITE_TIMEOUT_S)
            )
        while not stop.is_set():  # bounded by the parent: it closes stdin, then kills
            rows = expected_rows(BATCH, start=at)
            for handle in handles:
                await write_table_rows(handle, rows, WRITE_TIMEOUT_S)
            at += BATCH
            _say({"acked": at})
            await asyncio.to_thread(stop.wait, PAUSE_S)
    except Exception as exc:
        _say({"failed": describe_failure(exc)})
        return
    await conn.close_settled(3.0)


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _watch_stdin(stop: threading.Event) -> None:
    for _ in sys.stdin:
        pass
    stop.set()


if __name__ == "__main__":
    _stop = threading.Event()
    threading.Thread(target=_watch_stdin, args=(_stop,), daemon=True).start()
    asyncio.run(_produce(json.loads(sys.argv[1]), _stop))
    sys.stdout.flush()
    os._exit(0)  # pyfluss' threads may still run: no interpreter shutdown under them

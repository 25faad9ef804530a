"""A demo that lives: a small pyfluss producer writing to the demo's log tables while the
demo runs, at a modest rate that varies, so rows/s, sparklines and ingest events move.

:class:`DemoProducer` supervises a child process (:mod:`konsole.localcluster.producer_child`)
that holds the one pyfluss connection. Every tick (1 s) the child appends :func:`rows_at`
rows to each table in :data:`LIVE_TABLES` (the seed's own rows, cycled), a sine of period
``period_s`` around ``rate`` rows/s. A write that fails (a server down during the scripted
incident) is counted; the child then ends (its pyfluss writer cannot be stopped any other
way, see the child's docs) and, after a pause, a fresh child goes on where it left off. It
never stops the demo. :meth:`DemoProducer.stop` ends it within a bounded time (the demo's
exit calls it before stopping the cluster): stdin closed, then the child killed.
"""

from __future__ import annotations

import contextlib
import json
import math
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Final

__all__ = ["LIVE_TABLES", "DemoProducer", "describe_failure", "rows_at"]

#: The demo's log tables the producer appends to (no partitioned or primary-key table).
LIVE_TABLES: Final = ("demo.clickstream", "go_sensor_demo.sensor_readings")
TICK_S: Final = 1.0
WRITE_TIMEOUT_S: Final = 10.0
#: After a failed write: the cluster is in trouble, do not hammer it.
BACKOFF_S: Final = 3.0
#: How long a child may take to end once told to; then it is killed.
STOP_GRACE_S: Final = 5.0
#: Children started at most (one per failure): bounds the supervisor's loop.
MAX_CHILDREN: Final = 10_000


def rows_at(elapsed_s: float, rate: float, period_s: float) -> int:
    """Rows per table for the tick at ``elapsed_s``: between 0.3 and 1.7 times ``rate``."""
    wave = math.sin(2 * math.pi * elapsed_s / period_s)
    return max(1, round(rate * TICK_S * (1 + 0.7 * wave)))


def describe_failure(exc: BaseException) -> str:
    """The error's type and text; a timeout's text is empty, so it is said instead."""
    text = str(exc) or ("no answer in time" if isinstance(exc, TimeoutError) else "")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class DemoProducer:
    def __init__(
        self,
        bootstrap: str,
        tables: Sequence[str] = LIVE_TABLES,
        *,
        rate: float = 20.0,
        period_s: float = 120.0,
    ) -> None:
        self.bootstrap = bootstrap
        self.tables = tuple(tables)
        self.rate, self.period_s = rate, period_s
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._child: subprocess.Popen[str] | None = None
        self._thread: threading.Thread | None = None
        #: Rows acknowledged, writes that failed, and the last failure (for the demo's exit).
        self.written = 0
        self.failures = 0
        self.last_error: str | None = None
        #: Rows acknowledged per table: a fresh child goes on from there.
        self.at = dict.fromkeys(self.tables, 0)

    def rows_at(self, elapsed_s: float) -> int:
        return rows_at(elapsed_s, self.rate, self.period_s)

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._supervise, name="konsole-demo-producer", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 15.0) -> None:
        """Tells the child to end (its stdin closed), kills it after ``STOP_GRACE_S``."""
        self._stop.set()
        with self._lock:
            child = self._child
        if child is not None:
            _end(child, min(timeout, STOP_GRACE_S))
        if self._thread is not None:
            self._thread.join(timeout)

    def summary(self) -> str:
        """One line for the demo's exit: what was written and what failed."""
        line = f"producer: {self.written} rows written, {self.failures} writes failed"
        return line if self.last_error is None else f"{line} (last: {self.last_error})"

    def _supervise(self) -> None:
        started = time.monotonic()
        for _ in range(MAX_CHILDREN):  # and bounded by stop()
            if self._stop.is_set():
                return
            spec = {
                "bootstrap": self.bootstrap,
                "tables": list(self.tables),
                "rate": self.rate,
                "period_s": self.period_s,
                "elapsed_s": time.monotonic() - started,
                "at": self.at,
            }
            with self._lock:
                if self._stop.is_set():
                    return
                self._child = _spawn(spec)
            said_why = self._follow(self._child)
            _end(self._child, STOP_GRACE_S)
            if not said_why and not self._stop.is_set():  # it died without a word
                self.failures += 1
                self.last_error = f"the producer process ended (exit {self._child.returncode})"
            self._stop.wait(BACKOFF_S)

    def _follow(self, child: subprocess.Popen[str]) -> bool:
        """Counts what the child says until its stdout ends (it ended, or was killed);
        True when it said why it gave up."""
        assert child.stdout is not None
        said_why = False
        for line in child.stdout:  # bounded: the child ends, or stop() kills it
            try:
                said = json.loads(line)
            except ValueError:
                continue
            if "failed" in said:
                said_why = True
                self.failures += 1
                self.last_error = str(said["failed"])
            elif said.get("table") in self.at:
                self.at[said["table"]] += int(said["rows"])
                self.written += int(said["rows"])
        return said_why


def _spawn(spec: dict[str, object]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "konsole.localcluster.producer_child", json.dumps(spec)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _end(child: subprocess.Popen[str], grace_s: float) -> None:
    """Closes the child's stdin (its signal to stop), kills it if it has not ended in time."""
    if child.stdin is not None and not child.stdin.closed:
        with contextlib.suppress(OSError):
            child.stdin.close()
    try:
        child.wait(grace_s)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait(10)

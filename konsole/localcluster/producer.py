"""A demo that lives: a small pyfluss producer writing to the demo's log tables while the
demo runs, at a modest rate that varies, so rows/s, sparklines and ingest events move.

:class:`DemoProducer` runs in a daemon thread with its own event loop and one pyfluss
connection. Every tick (1 s) it appends :meth:`DemoProducer.rows_at` rows to each table in
:data:`LIVE_TABLES` (the seed's own rows, cycled), a sine of period ``period_s`` around
``rate`` rows/s. A write that fails (a server down during the scripted incident) is counted
and the producer waits a little before the next; it never stops the demo. :meth:`stop`
ends it within a bounded time (the demo's exit calls it before stopping the cluster).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import fluss

__all__ = ["LIVE_TABLES", "DemoProducer", "describe_failure"]

#: The demo's log tables the producer appends to (no partitioned or primary-key table).
LIVE_TABLES: Final = ("demo.clickstream", "go_sensor_demo.sensor_readings")
TICK_S: Final = 1.0
WRITE_TIMEOUT_S: Final = 10.0
#: After a failed write: the cluster is in trouble, do not hammer it.
BACKOFF_S: Final = 3.0


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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bootstrap = bootstrap
        self.tables = tuple(tables)
        self.rate, self.period_s = rate, period_s
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: Rows acknowledged, writes that failed, and the last failure (for the demo's exit).
        self.written = 0
        self.failures = 0
        self.last_error: str | None = None

    def rows_at(self, elapsed_s: float) -> int:
        """Rows per table for the tick at ``elapsed_s``: between 0.3 and 1.7 times the rate."""
        wave = math.sin(2 * math.pi * elapsed_s / self.period_s)
        return max(1, round(self.rate * TICK_S * (1 + 0.7 * wave)))

    def start(self) -> None:
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._run()), name="konsole-demo-producer", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 15.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def summary(self) -> str:
        """One line for the demo's exit: what was written and what failed."""
        line = f"producer: {self.written} rows written, {self.failures} writes failed"
        return line if self.last_error is None else f"{line} (last: {self.last_error})"

    async def _run(self) -> None:
        import fluss

        from konsole.localcluster.seed import demo_rows, write_table_rows

        rows = {name: demo_rows(name) for name in self.tables}
        at = dict.fromkeys(self.tables, 0)
        conn = await self._connect()
        if conn is None:
            return
        try:
            handles = {}
            for name in self.tables:
                database, _, table = name.partition(".")
                handles[name] = await asyncio.wait_for(
                    conn.get_table(fluss.TablePath(database, table)), WRITE_TIMEOUT_S
                )
            started = self._clock()
            while not self._stop.is_set():  # bounded by stop(): the demo's exit sets it
                n = self.rows_at(self._clock() - started)
                for name, handle in handles.items():
                    batch = [rows[name][(at[name] + i) % len(rows[name])] for i in range(n)]
                    try:
                        await write_table_rows(handle, batch, WRITE_TIMEOUT_S)
                    except Exception as exc:  # a server down: counted, the demo goes on
                        self.failures += 1
                        self.last_error = describe_failure(exc)
                        await self._sleep(BACKOFF_S)
                        continue
                    at[name] += n
                    self.written += n
                await self._sleep(TICK_S)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), WRITE_TIMEOUT_S)

    async def _connect(self) -> fluss.FlussConnection | None:
        import fluss

        config = fluss.Config({"bootstrap.servers": self.bootstrap})
        try:
            return await asyncio.wait_for(fluss.FlussConnection.create(config), WRITE_TIMEOUT_S)
        except Exception as exc:
            self.failures += 1
            self.last_error = f"connecting: {describe_failure(exc)}"
            return None

    async def _sleep(self, seconds: float) -> None:
        """A sleep that ends early when the producer is stopped."""
        await asyncio.to_thread(self._stop.wait, seconds)

"""The demo producer's child process: one pyfluss connection, appending until told to
stop or until a write fails, then the process ends.

Why a process: a pyfluss writer whose records cannot be delivered (a tablet server down,
the cluster stopped) cannot be stopped from Python. ``FlussConnection.close()`` waits for
the records without a bound, and cancelling that wait leaves the connection's sender task
behind, draining for ever, at times with no pause (a core burned for the rest of the
process). Ending the process is the one sure stop, so the connection lives here and
:class:`konsole.localcluster.producer.DemoProducer` starts a fresh child after a failure.

Protocol: ``python -m konsole.localcluster.producer_child SPEC`` (SPEC a JSON object:
bootstrap, tables, rate, period_s, elapsed_s, at: {table: rows written before}). Stdout
carries one JSON object a line: ``{"table": name, "rows": n}`` for an acknowledged write,
``{"failed": text}`` for a write (or the connect) that failed; the process then ends.
End of stdin means stop: the parent closed it, or the parent is gone.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from typing import Any, Final

from konsole.localcluster.producer import TICK_S, WRITE_TIMEOUT_S, describe_failure, rows_at

#: Flushing before the close, at most; past this the process ends anyway.
CLOSE_TIMEOUT_S: Final = 3.0


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


async def _sleep(stop: threading.Event, seconds: float) -> None:
    """A sleep that ends early when the parent says stop."""
    await asyncio.to_thread(stop.wait, seconds)


async def produce(spec: dict[str, Any], stop: threading.Event) -> None:
    """Appends each tick until ``stop`` or the first failure (said on stdout)."""
    import fluss

    from konsole.localcluster.seed import demo_rows, write_table_rows
    from konsole.localcluster.settle import SettledConnection

    tables: list[str] = list(spec["tables"])
    rows = {name: demo_rows(name) for name in tables}
    at: dict[str, int] = {name: int(spec["at"].get(name, 0)) for name in tables}
    config = fluss.Config({"bootstrap.servers": spec["bootstrap"]})
    try:
        conn = await SettledConnection.open(config, WRITE_TIMEOUT_S)
    except Exception as exc:
        _say({"failed": f"connecting: {describe_failure(exc)}"})
        return
    try:
        handles = {}
        for name in tables:
            database, _, table = name.partition(".")
            handles[name] = await conn.table_for_writing(
                fluss.TablePath(database, table), WRITE_TIMEOUT_S
            )
        started = time.monotonic() - float(spec["elapsed_s"])
        while not stop.is_set():  # bounded by the parent: it closes stdin, then kills
            n = rows_at(time.monotonic() - started, spec["rate"], spec["period_s"])
            for name, handle in handles.items():
                batch = [rows[name][(at[name] + i) % len(rows[name])] for i in range(n)]
                await write_table_rows(handle, batch, WRITE_TIMEOUT_S)
                at[name] += n
                _say({"table": name, "rows": n})
            await _sleep(stop, TICK_S)
    except Exception as exc:  # a server down: said, and this process gives up (it ends
        _say({"failed": describe_failure(exc)})  # with its records; nothing to close)
        return
    # Told to stop: what is in flight is delivered (bounded), then the connection closed.
    await conn.close_settled(CLOSE_TIMEOUT_S)


def _watch_stdin(stop: threading.Event) -> None:
    for _ in sys.stdin:  # nothing is sent; EOF is the signal
        pass
    stop.set()


def main(argv: list[str]) -> None:
    spec = json.loads(argv[0])
    stop = threading.Event()
    threading.Thread(target=_watch_stdin, args=(stop,), daemon=True).start()
    asyncio.run(produce(spec, stop))
    sys.stdout.flush()
    # No interpreter shutdown: pyfluss' runtime threads may still be running (an
    # undelivered record), and finalising under them can abort the process.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Writes into the bench tables with pyfluss until told to stop: the load of a busy poll.

Run by ``bench/poll_busy.py`` as a separate process, so its CPU never counts as the
poller's. Appends ``--batch`` rows to each of the first ``--tables`` bench tables in turn
(one table at a time: pyfluss 1.0 writers on several tables at once have hung), until
``--seconds`` pass or a SIGTERM comes. Prints one JSON line with what it wrote.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time

import fluss

DATABASE = "konsole_bench"
TABLE_PREFIX = "bench_"
FLUSH_TIMEOUT_S = 30.0


async def write(bootstrap: str, tables: int, batch: int, seconds: float) -> dict[str, float]:
    conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": bootstrap}))
    written, flushes = 0, 0
    started = time.monotonic()
    deadline = started + seconds
    stopping = asyncio.Event()  # SIGTERM: finish the flush under way, then report
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopping.set)

    def done() -> bool:
        return stopping.is_set() or time.monotonic() >= deadline

    try:
        handles = [
            await conn.get_table(fluss.TablePath(DATABASE, f"{TABLE_PREFIX}{i:03d}"))
            for i in range(tables)
        ]
        writers = [t.new_append().create_writer() for t in handles]
        next_id = 10_000_000
        while not done():
            for writer in writers:
                for _ in range(batch):
                    writer.append({"id": next_id, "v": f"busy-{next_id}"})
                    next_id += 1
                async with asyncio.timeout(FLUSH_TIMEOUT_S):
                    await writer.flush()
                written += batch
                flushes += 1
                if done():
                    break
    finally:
        conn.close()
        await asyncio.sleep(0.2)  # pyfluss can abort at exit without a pause after close
    elapsed = time.monotonic() - started
    return {
        "rows": written,
        "flushes": flushes,
        "seconds": elapsed,
        "rows_per_s": written / elapsed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("bootstrap")
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    result = asyncio.run(write(args.bootstrap, args.tables, args.batch, args.seconds))
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

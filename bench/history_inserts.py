"""The per-poll inserts of the history writer: plain ``sqlite3`` against sqlite-utils.

Usage::

    .venv/bin/python bench/history_inserts.py [--polls 3000]
    .venv/bin/python bench/history_inserts.py --quick    # smoke run: 100 polls, 1 import

Both write, per poll, in one transaction on the same kind of file (the real schema, WAL,
``synchronous=NORMAL``): one ``polls`` row, one ``offsets`` row (an 850-byte blob, the
size of a 10 s delta of 1,600 buckets) and one ``metrics`` row (a 240-byte blob), as
:class:`store.HistoryWriter` does for an unchanged cluster. (a) is the writer's way:
``Connection.execute`` with fixed SQL; (b) is ``sqlite_utils.Database(conn)`` on the same
connection, ``Table.insert`` of a dict per row (it joins the open transaction with a
savepoint). Also printed: what importing sqlite-utils and wrapping a connection cost.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from _quick import add_quick, parse_args  # noqa: E402  (bench/ is the script's dir)
from sqlite_utils import Database  # noqa: E402

from store import open_writer  # noqa: E402
from store.schema import database  # noqa: E402

OFFSETS = os.urandom(850)
METRICS = os.urandom(240)


def plain(c: sqlite3.Connection, poll: int) -> None:
    cur = c.execute(
        "INSERT INTO polls (at_ms, seq, latency_ms, ok, error, n_errors, errors) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (poll * 10_000, poll, 20, 1, None, 0, None),
    )
    poll_id = int(cur.lastrowid or 0)
    c.execute(
        "INSERT INTO offsets (poll_id, layout_id, base_poll, latest, earliest) "
        "VALUES (?, ?, ?, ?, ?)",
        (poll_id, 1, poll_id - 1, OFFSETS, None),
    )
    c.execute(
        "INSERT INTO metrics (poll_id, layout_id, vals) VALUES (?, ?, ?)",
        (poll_id, 2, METRICS),
    )


def with_sqlite_utils(d: Database, poll: int) -> None:
    polls = d.table("polls")
    polls.insert(
        {
            "at_ms": poll * 10_000,
            "seq": poll,
            "latency_ms": 20,
            "ok": 1,
            "error": None,
            "n_errors": 0,
            "errors": None,
        }
    )
    poll_id = int(polls.last_rowid or 0)
    d.table("offsets").insert(
        {"poll_id": poll_id, "layout_id": 1, "base_poll": poll_id - 1, "latest": OFFSETS}
    )
    d.table("metrics").insert({"poll_id": poll_id, "layout_id": 2, "vals": METRICS})


def run(polls: int, write: Callable[[Any, int], None], wrap: bool) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        writer = open_writer(Path(tmp) / "h.sqlite")
        conn = writer.connection
        target: Any = database(conn) if wrap else conn
        times = []
        for poll in range(1, polls + 1):
            t0 = time.process_time()
            conn.execute("BEGIN IMMEDIATE")
            write(target, poll)
            conn.execute("COMMIT")
            times.append((time.process_time() - t0) * 1000)
        writer.close()
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--polls", type=int, default=3000)
    ap.add_argument("--import-reps", type=int, default=5, help="processes timing the import")
    add_quick(ap, {"polls": 100, "import_reps": 1})
    args = parse_args(ap)
    imports = []
    for _ in range(max(1, args.import_reps)):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import sqlite_utils"], check=True)
        t1 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import sqlite3"], check=True)
        imports.append((t1 - t0) - (time.perf_counter() - t1))
    print(
        f"importing sqlite-utils (beyond sqlite3), best of {len(imports)}: "
        f"{min(imports) * 1000:.0f} ms"
    )
    with tempfile.TemporaryDirectory() as tmp:
        writer = open_writer(Path(tmp) / "h.sqlite")
        t0 = time.perf_counter()
        for _ in range(100):
            database(writer.connection)
        wrap_ms = (time.perf_counter() - t0) * 10
        writer.close()
    print(f"sqlite_utils.Database(conn): {wrap_ms:.3f} ms")
    for name, fn, wrap in (
        ("plain sqlite3 (the writer's way)", plain, False),
        ("sqlite-utils Table.insert", with_sqlite_utils, True),
    ):
        times = run(args.polls, fn, wrap)
        print(
            f"{name}: per poll (3 rows, one transaction) median {statistics.median(times):.3f} ms"
            f" CPU, mean {statistics.fmean(times):.3f} ms over {args.polls} polls"
        )


if __name__ == "__main__":
    main()

"""bench/scan.py's ``--find`` part: key lookups against pyfluss's, and a filtered scan of a big
log table with and without the filter sent to the server (issue 31).

Tables (pyfluss, a fresh database ``konsole_bench_find_<pid>``, dropped at the end; the
columns of bench/scan.py: id BIGINT, name STRING, amount DECIMAL(10,2), ts TIMESTAMP(3),
v DOUBLE):

- ``lk``: a primary-key table (PK ``id``) of ``--lookup-rows`` rows, ``--buckets`` buckets;
- ``flt``: a log table of ``--filter-rows`` rows appended in order, ``--batch-rows`` rows
  per flush, ``--buckets`` buckets, with ``table.statistics.columns = '*'`` when the
  server is of the 1.0 line (0.9.1 refuses the property; there is then no pushdown).

Measured (connections already open; best of ``--reps`` after a warm-up):

- **one key per call**: ``--lookup-keys`` present keys (random ids), looked up one after
  the other; ours through one :class:`fluss_proto.lookup.Lookuper` (the table read once, as
  pyfluss's lookuper does), pyfluss through one ``create_lookuper()``. Per key, and the
  ratio ours / pyfluss (the goal: <= 1.5x);
- **all keys in one call**: ours one ``Lookuper.lookup`` of every key (one request per
  leader); pyfluss the same keys through 32 lookupers at once (one pyfluss lookuper serves
  its calls one at a time);

pyfluss (as Fluss's Java client) holds a lookup up to ``lookup_batch_timeout_ms`` (100 ms
by default) for a batch to fill; pyfluss 1.0's ``Config`` has no key for it, so one key at
a time costs it about 100 ms a key. The ratios are printed as measured.
- **filtered scan**: ``preview_table(where=FILTER, limit=all)`` over ``flt``, with the
  filter sent to the server (the 1.0 line skips batches by their statistics) and with
  ``pushdown=False`` (every batch comes and is filtered here); rows scanned, rows matched,
  batch runs the server skipped, and the ratio of the times.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import fluss

from fluss_proto.client import FlussClient
from fluss_proto.lookup import Lookuper
from fluss_proto.scan import preview_table

ADMIN_TIMEOUT_S = 60.0
#: pyfluss lookupers used at once for the many-keys case.
LANES = 32


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--find", action="store_true", help="run only the lookup / filter part")
    parser.add_argument("--lookup-rows", type=int, default=100_000)
    parser.add_argument("--lookup-keys", type=int, default=500)
    parser.add_argument("--filter-rows", type=int, default=1_000_000)
    parser.add_argument("--batch-rows", type=int, default=10_000)


QUICK = {"lookup_rows": 1000, "lookup_keys": 50, "filter_rows": 20_000, "batch_rows": 2000}


def the_filter(rows: int) -> str:
    """About 0.1% of the rows, in one place of the log (ids are appended in order)."""
    low = rows // 2
    return f"id >= {low} AND id < {low + max(1, rows // 1000)} AND v >= 0"


async def _timed(reps: int, fn: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    await fn()  # warm-up
    times, last = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        last = await fn()
        times.append(time.perf_counter() - t0)
    return min(times), last


async def create(
    conn: fluss.FlussConnection,
    db: str,
    args: argparse.Namespace,
    chunk: Callable[[int, int], Any],
    schema: Any,
    stats: bool,
    log: Callable[[str], None],
) -> None:
    admin = conn.get_admin()
    props = {"table.replication.factor": "1"}
    async with asyncio.timeout(ADMIN_TIMEOUT_S):
        await admin.create_database(db, ignore_if_exists=True)
        await admin.create_table(
            fluss.TablePath(db, "lk"),
            fluss.TableDescriptor(
                fluss.Schema(schema, primary_keys=["id"]),
                bucket_count=args.buckets,
                properties=props,
            ),
            ignore_if_exists=False,
        )
        await admin.create_table(
            fluss.TablePath(db, "flt"),
            fluss.TableDescriptor(
                fluss.Schema(schema),
                bucket_count=args.buckets,
                bucket_keys=["id"],
                properties={**props, **({"table.statistics.columns": "*"} if stats else {})},
            ),
            ignore_if_exists=False,
        )
    started = time.monotonic()
    upsert = (await conn.get_table(fluss.TablePath(db, "lk"))).new_upsert().create_writer()
    for start in range(0, args.lookup_rows, 50_000):
        for row in chunk(start, min(50_000, args.lookup_rows - start)).to_pylist():
            upsert.upsert(row)
        await asyncio.wait_for(upsert.flush(), 300)
    log(f"lookup table: {args.lookup_rows} rows in {time.monotonic() - started:.1f}s")
    started = time.monotonic()
    writer = (await conn.get_table(fluss.TablePath(db, "flt"))).new_append().create_writer()
    for start in range(0, args.filter_rows, args.batch_rows):
        writer.write_arrow(chunk(start, min(args.batch_rows, args.filter_rows - start)))
        await asyncio.wait_for(writer.flush(), 300)
    log(f"filter table: {args.filter_rows} rows in {time.monotonic() - started:.1f}s")


async def measure(
    conn: fluss.FlussConnection,
    client: FlussClient,
    db: str,
    args: argparse.Namespace,
) -> dict[str, Any]:
    rng = random.Random(31)
    ids = [rng.randrange(args.lookup_rows) for _ in range(args.lookup_keys)]
    keys = [{"id": i} for i in ids]
    ours = await Lookuper.open(client, f"{db}.lk")
    lk_table = await conn.get_table(fluss.TablePath(db, "lk"))
    theirs = lk_table.new_lookup().create_lookuper()
    out: dict[str, Any] = {"keys": len(keys)}

    async def ours_one_by_one() -> int:
        found = 0
        for k in keys:
            found += (await ours.lookup([k])).report.found
        return found

    async def theirs_one_by_one() -> int:
        return sum([await theirs.lookup(k) is not None for k in keys])

    async def ours_batch() -> int:
        return (await ours.lookup(keys, deadline_s=60)).report.found

    lanes = [lk_table.new_lookup().create_lookuper() for _ in range(min(LANES, len(keys)))]

    async def theirs_batch() -> int:
        # one pyfluss lookuper serves its calls one at a time: many lookupers at once
        found = [False] * len(keys)

        async def lane(first: int) -> None:
            for i in range(first, len(keys), len(lanes)):
                found[i] = await lanes[first].lookup(keys[i]) is not None

        await asyncio.gather(*(lane(i) for i in range(len(lanes))))
        return sum(found)

    for name, fn in (
        ("ours_one", ours_one_by_one),
        ("pyfluss_one", theirs_one_by_one),
        ("ours_batch", ours_batch),
        ("pyfluss_batch", theirs_batch),
    ):
        best, found = await _timed(args.reps, fn)
        if found != len(keys):
            raise RuntimeError(f"{name}: {found} of {len(keys)} keys found")
        out[name] = {"best_s": best, "per_key_ms": best / len(keys) * 1000}
    out["one_ratio"] = out["ours_one"]["per_key_ms"] / out["pyfluss_one"]["per_key_ms"]
    out["batch_ratio"] = out["ours_batch"]["per_key_ms"] / out["pyfluss_batch"]["per_key_ms"]

    where = the_filter(args.filter_rows)
    out["filter"] = {"where": where, "rows": args.filter_rows}
    for name, push in (("pushdown", True), ("no_pushdown", False)):

        async def scan(push: bool = push) -> Any:
            return await preview_table(
                client,
                f"{db}.flt",
                where=where,
                limit=args.filter_rows,
                deadline_s=600,
                pushdown=push,
            )

        best, result = await _timed(args.reps, scan)
        report = result.report
        if not report.complete:
            raise RuntimeError(f"{name}: {report.summary_lines()}")
        out["filter"][name] = {
            "best_s": best,
            "rows_scanned": report.rows_scanned,
            "rows_matched": report.rows_read,
            "skipped_runs": report.server_skipped_runs,
            "skipped_offsets": report.server_skipped_offsets,
            "sent": report.filter_pushed,
        }
    f = out["filter"]
    if f["pushdown"]["rows_matched"] != f["no_pushdown"]["rows_matched"]:
        raise RuntimeError("the filter kept other rows with pushdown than without")
    f["ratio"] = f["no_pushdown"]["best_s"] / f["pushdown"]["best_s"]
    return out


def print_find(out: dict[str, Any]) -> None:
    n = out["keys"]
    one, batch = out["ours_one"], out["ours_batch"]
    print(
        f"lookup, 1 key per call ({n} keys): ours {one['per_key_ms']:.3f} ms/key, pyfluss "
        f"{out['pyfluss_one']['per_key_ms']:.3f} ms/key, ratio {out['one_ratio']:.2f}x "
        "(goal <= 1.5x)"
    )
    print(
        f"lookup, {n} keys in one call: ours {batch['per_key_ms']:.4f} ms/key, pyfluss "
        f"({LANES} lookupers at once) {out['pyfluss_batch']['per_key_ms']:.4f} ms/key, ratio "
        f"{out['batch_ratio']:.3f}x"
    )
    f = out["filter"]
    push, plain = f["pushdown"], f["no_pushdown"]
    print(
        f"filtered scan of {f['rows']:,} rows, {f['where']!r}: "
        f"pushdown {push['best_s']:.3f}s ({push['rows_scanned']:,} rows scanned, "
        f"{push['rows_matched']:,} matched, {push['skipped_runs']} batch runs / "
        f"{push['skipped_offsets']:,} offsets skipped by the server); "
        f"no pushdown {plain['best_s']:.3f}s ({plain['rows_scanned']:,} scanned); "
        f"no pushdown / pushdown {f['ratio']:.1f}x"
    )
    if push["sent"] is None:
        print("  (the filter was not sent: a server before the 1.0 line)")


async def run_find(
    bootstrap: str,
    args: argparse.Namespace,
    chunk: Callable[[int, int], Any],
    schema: Any,
    log: Callable[[str], None],
) -> dict[str, Any]:
    conn = await asyncio.wait_for(
        fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": bootstrap})),
        ADMIN_TIMEOUT_S,
    )
    client = await FlussClient.connect(bootstrap, request_timeout=120.0)
    db = f"konsole_bench_find_{os.getpid()}"
    try:
        stats = any(info.fluss_1_0 for info in client.api_versions.values())
        await create(conn, db, args, chunk, schema, stats, log)
        out = await measure(conn, client, db, args)
        out["statistics"] = stats
        return out
    finally:
        await client.close()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(ADMIN_TIMEOUT_S):
                await conn.get_admin().drop_database(db, ignore_if_not_exists=True, cascade=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.close(), 30)
        await asyncio.sleep(0.3)

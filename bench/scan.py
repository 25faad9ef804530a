"""Benchmark table reads: fluss_proto.scan (preview) vs pyfluss, on the same tables, same run.

Usage::

    .venv/bin/python bench/scan.py                       # own 1 coordinator + 1 tablet server
    .venv/bin/python bench/scan.py --bootstrap 127.0.0.1:9123 [--log-rows 200000]
        [--pk-rows 1000000] [--buckets 4] [--reps 3] [--json]
    .venv/bin/python bench/scan.py --quick [--bootstrap B]   # smoke run, seconds

Tables (created with pyfluss in a fresh database ``konsole_bench_scan_<pid>``, dropped at
the end): a log table of ``--log-rows`` rows (ARROW format, default ZSTD, written with
``write_arrow``) and a primary-key table of ``--pk-rows`` rows (upserts), both with
``--buckets`` buckets and the columns id BIGINT, name STRING, amount DECIMAL(10,2),
ts TIMESTAMP(3), v DOUBLE. Creating the PK table stops early when ``--create-budget``
seconds are spent; the report then says how many rows it holds.

Measured (best of ``--reps`` after one warm-up; connections already open):

- log, ours FetchLog: ``preview_table(tail=True, limit=all rows)``: ListOffsets, then
  FetchLog per leader until the high watermark, Arrow decoding, one pyarrow.Table;
- log, ours LimitScan: ``preview_table(limit=all rows)``;
- log, pyfluss: ``create_record_batch_log_scanner()``, every bucket from EARLIEST,
  ``to_arrow()``;
- log, decode only: the FetchLog blobs fetched once, then parsed + decoded by our records
  package (no network), to show where the time goes;
- PK, ours LimitScan: ``preview_table(limit=all rows)`` (0.9.1 has no ScanKv);
- PK, pyfluss: ``new_scan().limit(n).create_bucket_batch_scanner(bucket).to_arrow()`` for
  every bucket at once (its LimitScan path; lookups are far slower);
- PK, decode only: the LimitScan value batches fetched once, then split
  (``read_value_batch``) and decoded (``decode_table``, the columnar path the preview uses);
- time to the first 500 rows of the PK table: ours ``preview_table(limit=500)`` (every
  bucket asked, fair share); pyfluss one bucket scanner with ``limit(500)``, and every
  bucket's scanner with ``limit(500)`` at once.

Ratios are ours / pyfluss in rows per second (higher is better for us).

Export (``konsole preview`` as a separate process on the PK table, all its rows; with
``--export-only`` nothing else is measured; ``--fluss-home DIR`` starts a 1.0-line server
instead of the published 0.9.1 jars, so primary-key rows come through ScanKv):

- scan alone: a process with the CLI's imports that streams every row
  (``stream_preview``, decoded) and writes nothing;
- the CLI writing each format to a file (``-o x.parquet`` ...) and JSON lines to stdout
  (a pipe drained to nowhere), best of ``--export-reps``, end to end (process start to
  exit), with each process's peak RSS (GNU ``time``'s ``%M``; needs ``/usr/bin/time``);
- time to first row on stdout: process start to the first complete line of
  ``--format jsonl`` (and of the default table format with ``--limit 100``), beside the
  time a process takes to start Python and import the modules a preview needs.

``--find`` measures only key lookups against pyfluss's and a filtered scan with and without
the filter sent to the server (bench/_find.py; with ``--fluss-home`` for the 1.0 line's
pushdown).

``--quick`` (bench/_quick.py): 2,000 log rows, 1,000 PK rows, 2 buckets, one rep and one
export rep; the same code paths, figures meaningless.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO, REPO / "bench"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import _find  # noqa: E402
import fluss  # noqa: E402
import pyarrow as pa  # noqa: E402
from _quick import add_quick, parse_args  # noqa: E402

from fluss_proto._gen import fluss_rpc_pb2 as pb  # noqa: E402
from fluss_proto.api_keys import ApiKey  # noqa: E402
from fluss_proto.client import FlussClient  # noqa: E402
from fluss_proto.records import (  # noqa: E402
    decode_arrow_batch,
    make_row_decoder,
    read_log_batches,
    read_value_batch,
    to_arrow_schema,
)
from fluss_proto.scan import preview_table  # noqa: E402

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("ts", pa.timestamp("ms")),
        pa.field("v", pa.float64()),
    ]
)
ADMIN_TIMEOUT_S = 60.0
WRITE_CHUNK = 50_000
FIRST_ROWS = 500


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def arrow_chunk(start: int, n: int) -> pa.Table:
    ids = range(start, start + n)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([f"name-{i:08d}" for i in ids]),
            "amount": pa.array([Decimal(i % 10_000_000) / 100 for i in ids], pa.decimal128(10, 2)),
            "ts": pa.array([1_700_000_000_000 + i for i in ids], pa.timestamp("ms")),
            "v": pa.array([i * 0.25 for i in ids], pa.float64()),
        },
        schema=SCHEMA,
    )


# =========================================================================== set-up


async def create_tables(
    conn: fluss.FlussConnection, db: str, args: argparse.Namespace
) -> dict[str, Any]:
    admin = conn.get_admin()
    started = time.monotonic()
    async with asyncio.timeout(ADMIN_TIMEOUT_S):
        await admin.create_database(db, ignore_if_exists=True)
        for name, pk in (("log", None), ("pk", ["id"])):
            descriptor = fluss.TableDescriptor(
                fluss.Schema(SCHEMA, primary_keys=pk),
                bucket_count=args.buckets,
                bucket_keys=["id"],
                properties={"table.replication.factor": "1"},
            )
            await admin.create_table(fluss.TablePath(db, name), descriptor, ignore_if_exists=False)
    log_table = await conn.get_table(fluss.TablePath(db, "log"))
    writer = log_table.new_append().create_writer()
    for start in range(0, args.log_rows, WRITE_CHUNK):
        writer.write_arrow(arrow_chunk(start, min(WRITE_CHUNK, args.log_rows - start)))
    await asyncio.wait_for(writer.flush(), 300)
    log_s = time.monotonic() - started
    log(f"log table: {args.log_rows} rows in {log_s:.1f}s")

    started = time.monotonic()
    pk_table = await conn.get_table(fluss.TablePath(db, "pk"))
    upsert = pk_table.new_upsert().create_writer()
    written = 0
    for start in range(0, args.pk_rows, WRITE_CHUNK):
        if time.monotonic() - started > args.create_budget:
            log(f"PK table: creation budget of {args.create_budget}s spent at {written} rows")
            break
        chunk = arrow_chunk(start, min(WRITE_CHUNK, args.pk_rows - start)).to_pylist()
        for row in chunk:
            upsert.upsert(row)
        written += len(chunk)
        await asyncio.wait_for(upsert.flush(), 300)
    pk_s = time.monotonic() - started
    log(f"PK table: {written} rows in {pk_s:.1f}s")
    return {
        "log_rows": args.log_rows,
        "log_create_s": log_s,
        "pk_rows": written,
        "pk_create_s": pk_s,
    }


# =========================================================================== measurements


async def best_of(reps: int, fn: Callable[[], Awaitable[int]], expect: int | None) -> dict:
    await fn()  # warm-up
    times = []
    rows = 0
    for _ in range(reps):
        t0 = time.perf_counter()
        rows = await fn()
        times.append(time.perf_counter() - t0)
        if expect is not None and rows != expect:
            raise RuntimeError(f"expected {expect} rows, got {rows}")
    best = min(times)
    return {
        "rows": rows,
        "best_s": best,
        "median_s": statistics.median(times),
        "rows_per_s": rows / best if best else 0.0,
    }


async def fetch_blobs(client: FlussClient, table_id: int, buckets: list[Any]) -> list[bytes]:
    """Every bucket's whole log as FetchLog blobs (complete batches), fetched once."""
    blobs = []
    for b in buckets:
        offset = 0
        for _ in range(100_000):
            req = pb.FetchLogRequest(follower_server_id=-1, max_bytes=16 << 20)
            t = req.tables_req.add(table_id=table_id, projection_pushdown_enabled=False)
            t.buckets_req.add(bucket_id=b.bucket_id, fetch_offset=offset, max_fetch_bytes=8 << 20)
            resp = await client.call(ApiKey.FETCH_LOG, req, node=b.leader_id)
            item = resp.tables_resp[0].buckets_resp[0]
            parsed = read_log_batches(item.records)
            if not parsed.batches:
                break
            blobs.append(item.records[: parsed.bytes_consumed])
            offset = parsed.next_offset
            if offset >= item.high_watermark:
                break
    return blobs


async def run(bootstrap: str, args: argparse.Namespace) -> dict[str, Any]:
    conn = await asyncio.wait_for(
        fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": bootstrap})),
        ADMIN_TIMEOUT_S,
    )
    db = f"konsole_bench_scan_{os.getpid()}"
    client: FlussClient | None = None
    out: dict[str, Any] = {"bootstrap": bootstrap, "buckets": args.buckets, "reps": args.reps}
    try:
        out["tables"] = sizes = await create_tables(conn, db, args)
        if args.export_only or args.export_reps:
            out["export"] = await asyncio.to_thread(
                measure_export, bootstrap, f"{db}.pk", sizes["pk_rows"], args.export_reps or 1
            )
        if args.export_only:
            return out
        client = await FlussClient.connect(bootstrap, request_timeout=120.0)
        log_path, pk_path = f"{db}.log", f"{db}.pk"
        n_log, n_pk = sizes["log_rows"], sizes["pk_rows"]
        log_table = await conn.get_table(fluss.TablePath(db, "log"))
        pk_table = await conn.get_table(fluss.TablePath(db, "pk"))
        table_id = pk_table.get_table_info().table_id
        results: dict[str, Any] = {}

        async def ours_tail() -> int:
            p = await preview_table(client, log_path, tail=True, limit=n_log, deadline_s=300)
            assert p.report.complete, p.report.summary_lines()
            return p.table.num_rows

        async def ours_limit_log() -> int:
            p = await preview_table(client, log_path, limit=n_log, deadline_s=300)
            assert p.report.complete, p.report.summary_lines()
            return p.table.num_rows

        async def pyfluss_log() -> int:
            scanner = await log_table.new_scan().create_record_batch_log_scanner()
            scanner.subscribe_buckets({b: fluss.EARLIEST_OFFSET for b in range(args.buckets)})
            return (await scanner.to_arrow()).num_rows

        log("measuring the log table ...")
        results["log_ours_fetchlog"] = await best_of(args.reps, ours_tail, n_log)
        results["log_ours_limitscan"] = await best_of(args.reps, ours_limit_log, n_log)
        results["log_pyfluss_record_batch_scanner"] = await best_of(args.reps, pyfluss_log, n_log)

        from fluss_proto.admin import FlussAdmin

        admin = FlussAdmin(client)
        log_info = await admin.table_info(log_path)
        log_buckets = await admin.bucket_metadata(log_path)
        blobs = await fetch_blobs(client, log_info.table_id, list(log_buckets))
        schema = to_arrow_schema(log_info.schema)

        async def decode_log_only() -> int:
            rows = 0
            for blob in blobs:
                for batch in read_log_batches(blob):
                    rows += decode_arrow_batch(batch, schema).num_rows
            return rows

        results["log_decode_only"] = await best_of(args.reps, decode_log_only, n_log)

        async def ours_pk() -> int:
            p = await preview_table(client, pk_path, limit=max(n_pk, 1), deadline_s=300)
            assert p.report.complete, p.report.summary_lines()
            return p.table.num_rows

        async def pyfluss_pk(limit: int, buckets: int) -> int:
            scanners = [
                pk_table.new_scan()
                .limit(limit)
                .create_bucket_batch_scanner(fluss.TableBucket(table_id, b))
                for b in range(buckets)
            ]
            tables = await asyncio.gather(*(s.to_arrow() for s in scanners))
            return sum(t.num_rows for t in tables)

        log("measuring the PK table ...")
        results["pk_ours_limitscan"] = await best_of(args.reps, ours_pk, n_pk)
        results["pk_pyfluss_batch_scanner"] = await best_of(
            args.reps, lambda: pyfluss_pk(max(n_pk, 1), args.buckets), n_pk
        )

        pk_info = await admin.table_info(pk_path)
        pk_buckets = await admin.bucket_metadata(pk_path)
        value_batches = []
        for b in pk_buckets:
            req = pb.LimitScanRequest(table_id=pk_info.table_id, bucket_id=b.bucket_id, limit=n_pk)
            resp = await client.call(ApiKey.LIMIT_SCAN, req, node=b.leader_id)
            value_batches.append(resp.records)
        decoder = make_row_decoder(pk_info.schema, str(pk_info.kv_format))

        async def decode_pk_only() -> int:
            rows = 0
            for records in value_batches:
                batch = read_value_batch(records)
                rows += decoder.decode_table(batch.buffer, batch.starts, batch.ends).num_rows
            return rows

        results["pk_decode_only"] = await best_of(args.reps, decode_pk_only, n_pk)

        async def ours_first() -> int:
            p = await preview_table(client, pk_path, limit=FIRST_ROWS, deadline_s=60)
            return p.table.num_rows

        first_expect = min(FIRST_ROWS, n_pk)
        results["first500_ours"] = await best_of(args.reps, ours_first, first_expect)
        results["first500_pyfluss_one_bucket"] = await best_of(
            args.reps, lambda: pyfluss_pk(FIRST_ROWS, 1), None
        )
        results["first500_pyfluss_all_buckets"] = await best_of(
            args.reps, lambda: pyfluss_pk(FIRST_ROWS, args.buckets), None
        )
        out["results"] = results

        def ratio(a: str, b: str) -> float:
            return results[a]["rows_per_s"] / results[b]["rows_per_s"]

        out["ratios"] = {
            "log fetchlog ours/pyfluss (rows/s)": ratio(
                "log_ours_fetchlog", "log_pyfluss_record_batch_scanner"
            ),
            "log limitscan ours/pyfluss (rows/s)": ratio(
                "log_ours_limitscan", "log_pyfluss_record_batch_scanner"
            ),
            "pk limitscan ours/pyfluss (rows/s)": ratio(
                "pk_ours_limitscan", "pk_pyfluss_batch_scanner"
            ),
            "first 500 rows pyfluss-one-bucket time / ours time": results[
                "first500_pyfluss_one_bucket"
            ]["best_s"]
            / results["first500_ours"]["best_s"],
            "first 500 rows pyfluss-all-buckets time / ours time": results[
                "first500_pyfluss_all_buckets"
            ]["best_s"]
            / results["first500_ours"]["best_s"],
        }
    finally:
        if client is not None:
            await client.close()
        if args.keep_tables:
            log(f"kept the tables in database {db}")
        with contextlib.suppress(Exception):
            if not args.keep_tables:
                await asyncio.wait_for(
                    conn.get_admin().drop_database(db, ignore_if_not_exists=True, cascade=True),
                    60,
                )
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.close(), 30)
        await asyncio.sleep(0.3)
    return out


# =========================================================================== export


EXPORT_FORMATS = ("parquet", "arrow", "csv", "jsonl", "json")


def _child(argv: list[str], *, first_line: bool = False) -> dict[str, float]:
    """Run a process to its end: wall seconds, peak RSS (MB), seconds to the first line.

    The peak RSS comes from GNU time (``%M``) wrapped around the process: a child forked
    straight from this (large) bench process would report this process's RSS as its own
    high-water mark.
    """
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        wrapped = ["/usr/bin/time", "-f", "%M", "-o", rss.name, *argv]
        t0 = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
        assert proc.stdout is not None and proc.stderr is not None
        first = float("nan")
        if first_line:
            proc.stdout.readline()
            first = time.perf_counter() - t0
        for _ in range(10_000_000):  # drain to the end (bounded)
            if not proc.stdout.read(1 << 20):
                break
        err = proc.stderr.read()
        proc.wait()
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{argv[3:6]} exited {proc.returncode}: {err.decode()[-500:]}")
        peak_kb = int(rss.read().split()[-1])
    return {"wall_s": wall, "peak_rss_mb": peak_kb / 1024, "first_line_s": first}


def _best(reps: int, argv: list[str], **kw: Any) -> dict[str, float]:
    runs = [_child(argv, **kw) for _ in range(max(1, reps))]
    best = min(runs, key=lambda r: r["wall_s"])
    return {
        "best_s": best["wall_s"],
        "median_s": statistics.median(r["wall_s"] for r in runs),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "first_line_s": min(r["first_line_s"] for r in runs),
    }


def measure_export(bootstrap: str, table: str, rows: int, reps: int) -> dict[str, Any]:
    import tempfile

    py = sys.executable
    cli = [py, "-m", "konsole.cli", "preview", table, "--bootstrap", bootstrap]
    big = ["--limit", str(rows), "--timeout", "600"]
    out: dict[str, Any] = {"rows": rows}
    log("measuring the export ...")
    scan = [py, str(Path(__file__).resolve()), "--scan-child", bootstrap, table, str(rows)]
    _child(scan)  # warm-up (page cache, server caches)
    out["scan_only"] = _best(reps, scan)
    # What no output format can beat: starting Python with the modules a preview needs.
    imports = (
        "import konsole.cli.main, fluss_proto.client, fluss_proto.scan, konsole.export.writers"
    )
    out["imports_only"] = _best(reps, [py, "-c", imports])
    with tempfile.TemporaryDirectory(prefix="konsole-bench-export-") as tmp:
        for fmt in EXPORT_FORMATS:
            path = Path(tmp) / f"rows.{fmt}"
            out[f"file_{fmt}"] = _best(reps, [*cli, *big, "-o", str(path)])
            out[f"file_{fmt}"]["bytes"] = path.stat().st_size
            path.unlink()
    out["stdout_jsonl"] = _best(reps, [*cli, *big, "--format", "jsonl"], first_line=True)
    out["stdout_csv"] = _best(reps, [*cli, *big, "--format", "csv"], first_line=True)
    out["first_row_table_limit_100"] = _best(reps, [*cli, "--limit", "100"], first_line=True)
    scan_s = out["scan_only"]["best_s"]
    out["ratios_to_scan"] = {
        k: v["best_s"] / scan_s
        for k, v in out.items()
        if isinstance(v, dict) and "best_s" in v and k not in ("scan_only", "imports_only")
    }
    return out


async def scan_child(bootstrap: str, table: str, rows: int) -> None:
    """The scan alone, in a process shaped like the CLI's (same imports): read and decode
    every row, write nothing."""
    import konsole.cli.main  # noqa: F401  # the CLI's import cost, for a fair comparison
    from fluss_proto.scan import stream_preview

    client = await FlussClient.connect(bootstrap, request_timeout=600.0)
    try:
        got = 0
        async with stream_preview(client, table, limit=rows, deadline_s=600) as stream:
            async for chunk in stream:
                got += chunk.num_rows
        if got != rows:
            raise RuntimeError(f"scan alone read {got} rows, expected {rows}")
    finally:
        await client.close()


def print_export(out: dict[str, Any]) -> None:
    print(f"export of the PK table, {out['rows']} rows (CLI processes, best of the reps):")
    for name, r in out.items():
        if not isinstance(r, dict) or "best_s" not in r:
            continue
        ratio = out["ratios_to_scan"].get(name)
        extra = f"  {ratio:5.2f}x scan" if ratio is not None else ""
        if r["first_line_s"] == r["first_line_s"]:  # not NaN
            extra += f"  first line {r['first_line_s'] * 1000:7.1f} ms"
        if "bytes" in r:
            extra += f"  {r['bytes'] / 1e6:8.1f} MB"
        print(
            f"  {name:<28} best {r['best_s']:7.2f} s  median {r['median_s']:7.2f} s  "
            f"peak RSS {r['peak_rss_mb']:7.1f} MB{extra}"
        )


def print_summary(out: dict[str, Any]) -> None:
    if "export" in out:
        print_export(out["export"])
    if "results" not in out:
        return
    t = out["tables"]
    print(
        f"tables: log {t['log_rows']} rows (written in {t['log_create_s']:.1f}s), "
        f"PK {t['pk_rows']} rows (written in {t['pk_create_s']:.1f}s), "
        f"{out['buckets']} buckets, best of {out['reps']}"
    )
    for name, r in out["results"].items():
        print(
            f"  {name:<36} {r['rows']:>9} rows  best {r['best_s'] * 1000:9.1f} ms  "
            f"median {r['median_s'] * 1000:9.1f} ms  {r['rows_per_s']:>12,.0f} rows/s"
        )
    print("ratios:")
    for name, value in out["ratios"].items():
        print(f"  {name:<56} {value:6.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--log-rows", type=int, default=200_000)
    parser.add_argument("--pk-rows", type=int, default=1_000_000)
    parser.add_argument("--buckets", type=int, default=4)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--create-budget", type=float, default=150.0)
    parser.add_argument("--tablet-servers", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--export-reps", type=int, default=2, help="0: skip the export")
    parser.add_argument("--export-only", action="store_true")
    parser.add_argument("--fluss-home", default=None, help="a 1.0-line distribution to start")
    parser.add_argument("--scan-child", nargs=3, metavar=("BOOTSTRAP", "TABLE", "ROWS"))
    parser.add_argument(
        "--export-table",
        nargs=2,
        metavar=("DB.TABLE", "ROWS"),
        help="measure the export of an existing table (with --bootstrap), create nothing",
    )
    parser.add_argument("--keep-tables", action="store_true", help="do not drop the database")
    _find.add_arguments(parser)
    add_quick(
        parser,
        {
            "log_rows": 2000,
            "pk_rows": 1000,
            "buckets": 2,
            "reps": 1,
            "export_reps": 1,
            "create_budget": 30.0,
            **_find.QUICK,
        },
    )
    args = parse_args(parser, argv)
    if args.export_table:
        if not args.bootstrap:
            parser.error("--export-table needs --bootstrap")
        table, rows = args.export_table
        out = {"export": measure_export(args.bootstrap, table, int(rows), args.export_reps or 1)}
        print(json.dumps(out, indent=2) if args.json else "", end="")
        if not args.json:
            print_export(out["export"])
        return 0
    if args.scan_child:
        bootstrap, table, rows = args.scan_child
        asyncio.run(scan_child(bootstrap, table, int(rows)))
        return 0
    from konsole.localcluster.cluster import temporary_cluster

    own = (
        contextlib.nullcontext(None)
        if args.bootstrap
        else temporary_cluster(
            tablet_servers=args.tablet_servers,
            prefix="konsole-bench-scan-",
            ready_timeout=180,
            **({"fluss_home": args.fluss_home} if args.fluss_home else {}),
        )
    )
    with own as desc:
        bootstrap = args.bootstrap or desc.bootstrap_servers
        if args.find:
            out = asyncio.run(_find.run_find(bootstrap, args, arrow_chunk, SCHEMA, log))
        else:
            out = asyncio.run(run(bootstrap, args))
    if args.json:
        print(json.dumps(out, indent=2))
    elif args.find:
        _find.print_find(out)
    else:
        print_summary(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

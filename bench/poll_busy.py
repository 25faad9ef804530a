"""A poll of a busy cluster: pyfluss writes into the tables while konsole polls.

Usage::

    .venv/bin/python bench/poll_busy.py                     # own 3-tablet-server cluster
    .venv/bin/python bench/poll_busy.py --bootstrap H:P [--seconds 60] [--json]
    .venv/bin/python bench/poll_busy.py --quick [--bootstrap H:P --drop]   # smoke run

The idle benchmark (``bench/poll.py``) measures a cluster where nothing changes. Here a
separate process (``bench/busy_writer.py``) appends rows to the first ``--written-tables``
bench tables for ``--seconds`` while this one alternates two ways of reading every bucket's
latest offset, bounded in count (``--reps``) and time:

- (a) ``gather_cluster(client, previous=<its last view>)``, as the poller does: latest
  offsets from one FetchLog per leader (the high watermark). A FetchLog reply carries up to
  one record batch (the server's minOneMessage rule), which on a busy cluster is real data;
- (l) ListOffsets LATEST only: one request per (leader, table, partition), what the poll
  would send without the FetchLog trick (offsets only; the catalog part is not repeated).

Per poll: latency, this process's CPU (the writer runs elsewhere, so this is ours alone),
requests, and the response bytes the poll made the servers send (every frame's body, as
read by our connections). Medians and p90 are printed; nothing is asserted.

``--quick`` (bench/_quick.py): 2 tables x 2 buckets, one written, the writer for 6 s, a
few polls; ``--drop`` drops the bench database at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from _quick import add_quick, parse_args  # noqa: E402
from poll import (  # noqa: E402  (poll.py puts the repository on sys.path)
    RUN_LIMIT_S,
    bench_cluster,
    cluster_options,
    ensure_tables,
    leaderless,
    load_gather,
    percentile,
    pyfluss_close,
    pyfluss_connect,
)

from fluss_proto._gen import fluss_rpc_pb2 as pb  # noqa: E402
from fluss_proto.api_keys import ApiKey  # noqa: E402
from fluss_proto.client import FlussClient  # noqa: E402
from fluss_proto.connection import Connection  # noqa: E402
from fluss_proto.model import ClusterView  # noqa: E402

FRAME_OVERHEAD = 4 + 8  # length prefix + response header (api key/version, request id)


@dataclass
class Traffic:
    requests: int = 0
    response_bytes: int = 0


@contextlib.contextmanager
def count_traffic(traffic: Traffic) -> Iterator[Traffic]:
    """Count requests and response bytes of every Connection while active."""
    single, many = Connection.request, Connection.request_many

    async def counted(self: Connection, *args: Any, **kw: Any) -> Any:
        traffic.requests += 1
        body = await single(self, *args, **kw)
        traffic.response_bytes += len(body) + FRAME_OVERHEAD
        return body

    async def counted_many(self: Connection, items: Any, **kw: Any) -> Any:
        traffic.requests += len(items)
        results = await many(self, items, **kw)
        traffic.response_bytes += sum(
            len(r) + FRAME_OVERHEAD for r in results if isinstance(r, bytes | bytearray)
        )
        return results

    Connection.request = counted  # type: ignore[method-assign]
    Connection.request_many = counted_many  # type: ignore[method-assign]
    try:
        yield traffic
    finally:
        Connection.request = single  # type: ignore[method-assign]
        Connection.request_many = many  # type: ignore[method-assign]


async def list_offsets_poll(client: FlussClient, view: ClusterView) -> int:
    """Every bucket's latest offset through ListOffsets only; returns the sum."""
    groups: dict[tuple[int, int, int | None], list[int]] = defaultdict(list)
    for table in view.tables:
        for b in table.buckets:
            if b.leader_id is not None:
                groups[(b.leader_id, table.table_id, b.partition_id)].append(b.bucket_id)

    async def one(leader: int, table_id: int, pid: int | None, buckets: list[int]) -> int:
        req = pb.ListOffsetsRequest(
            follower_server_id=-1, offset_type=1, table_id=table_id, bucket_id=buckets
        )
        if pid is not None:
            req.partition_id = pid
        resp = await client.call(ApiKey.LIST_OFFSETS, req, node=leader)
        return sum(b.offset for b in resp.buckets_resp if b.HasField("offset"))

    totals = await asyncio.gather(*(one(*key, ids) for key, ids in groups.items()))
    return sum(totals)


def start_writer(bootstrap: str, args: argparse.Namespace) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            str(BENCH / "busy_writer.py"),
            bootstrap,
            "--tables",
            str(args.written_tables),
            "--batch",
            str(args.batch),
            "--seconds",
            str(args.seconds),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


async def run(args: argparse.Namespace, bootstrap: str) -> dict[str, Any]:
    gather_cluster = load_gather()
    client = await FlussClient.connect(bootstrap)
    writer: subprocess.Popen[str] | None = None
    try:
        setup = await pyfluss_connect(bootstrap)
        try:
            names, _ = await ensure_tables(setup, client, args.tables, args.buckets, args.rf)
        finally:
            await pyfluss_close(setup)
        if missing := await leaderless(client, names):
            raise SystemExit(f"bench tables without bucket leaders: {missing[:5]}...")
        last = await gather_cluster(client)
        buckets = sum(len(t.buckets) for t in last.tables)
        writer = start_writer(bootstrap, args)
        await asyncio.sleep(args.ramp)  # let the writer connect and start
        times: dict[str, list[float]] = defaultdict(list)
        cpu: dict[str, list[float]] = defaultdict(list)
        sent: dict[str, list[int]] = defaultdict(list)
        received: dict[str, list[int]] = defaultdict(list)
        moved: list[int] = []
        started = time.monotonic()
        for _ in range(args.reps):
            if writer.poll() is not None or time.monotonic() - started > args.seconds - 1:
                break
            for key in ("a", "l"):
                traffic = Traffic()
                t0, c0 = time.perf_counter(), time.process_time()
                with count_traffic(traffic):
                    if key == "a":
                        before = sum(b.latest_offset or 0 for t in last.tables for b in t.buckets)
                        last = await gather_cluster(client, previous=last)
                        after = sum(b.latest_offset or 0 for t in last.tables for b in t.buckets)
                        moved.append(after - before)
                    else:
                        await list_offsets_poll(client, last)
                times[key].append(time.perf_counter() - t0)
                cpu[key].append(time.process_time() - c0)
                sent[key].append(traffic.requests)
                received[key].append(traffic.response_bytes)
            await asyncio.sleep(args.interval)
        wrote: dict[str, Any] = {}
        if writer.poll() is None:
            writer.send_signal(signal.SIGTERM)
        out, _ = writer.communicate(timeout=60)
        with contextlib.suppress(ValueError):
            wrote = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        labels = {"a": "(a) gather_cluster, guided", "l": "(l) ListOffsets LATEST only"}
        return {
            "bootstrap": bootstrap,
            "tables": len(last.tables),
            "buckets": buckets,
            "polls": len(times["a"]),
            "writer": wrote,
            "rows_seen_per_poll_median": statistics.median(moved) if moved else 0,
            "methods": {
                key: {
                    "label": labels[key],
                    "median_ms": statistics.median(v) * 1000,
                    "p90_ms": percentile(v, 0.9) * 1000,
                    "cpu_ms": statistics.median(cpu[key]) * 1000,
                    "requests": statistics.median(sent[key]),
                    "response_kb_median": statistics.median(received[key]) / 1024,
                    "response_kb_p90": percentile([float(x) for x in received[key]], 0.9) / 1024,
                }
                for key, v in times.items()
            },
        }
    finally:
        if writer is not None and writer.poll() is None:
            writer.kill()
            writer.wait(timeout=30)
        await client.close()


def print_table(s: dict[str, Any]) -> None:
    w = s["writer"]
    print(
        f"busy poll of {s['tables']} tables, {s['buckets']} buckets; {s['polls']} polls while "
        f"pyfluss wrote {w.get('rows', '?')} rows ({w.get('rows_per_s', 0):.0f} rows/s); "
        f"median {s['rows_seen_per_poll_median']:.0f} new rows seen per poll"
    )
    print(
        f"{'method':30} {'requests':>9} {'median ms':>10} {'p90 ms':>8} {'CPU ms':>8} "
        f"{'resp KiB med':>13} {'resp KiB p90':>13}"
    )
    for m in s["methods"].values():
        print(
            f"{m['label']:30} {m['requests']:>9.0f} {m['median_ms']:>10.1f} {m['p90_ms']:>8.1f} "
            f"{m['cpu_ms']:>8.1f} {m['response_kb_median']:>13.1f} {m['response_kb_p90']:>13.1f}"
        )


async def bounded(coro: Any) -> dict[str, Any]:
    async with asyncio.timeout(RUN_LIMIT_S):
        return await coro  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    cluster_options(parser)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--buckets", type=int, default=8)
    parser.add_argument("--rf", type=int, default=1)
    parser.add_argument("--written-tables", type=int, default=20)
    parser.add_argument("--batch", type=int, default=200, help="rows per table per flush")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the writer runs")
    parser.add_argument("--ramp", type=float, default=3.0, help="seconds before measuring")
    parser.add_argument("--interval", type=float, default=0.5, help="pause between polls")
    parser.add_argument("--reps", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    add_quick(
        parser,
        {
            "tables": 2,
            "buckets": 2,
            "written_tables": 1,
            "batch": 20,
            "seconds": 6.0,
            "ramp": 2.0,
            "interval": 0.3,
            "reps": 6,
        },
    )
    args = parse_args(parser, argv)
    if min(args.tables, args.buckets, args.rf, args.reps, args.written_tables) < 1:
        parser.error("counts must be >= 1")
    if args.written_tables > args.tables:
        parser.error("--written-tables cannot exceed --tables")

    with bench_cluster(args) as (bootstrap, _):
        summary = asyncio.run(bounded(run(args, bootstrap)))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_table(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

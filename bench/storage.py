"""Benchmark what the storage poll adds to polling: requests, bytes and client CPU.

Usage::

    .venv/bin/python bench/storage.py --fluss-home ../shared/fluss/fluss-1.0-SNAPSHOT
    .venv/bin/python bench/storage.py --bootstrap 127.0.0.1:9123 [--tables 200 --buckets 8]
    .venv/bin/python bench/storage.py --quick [--bootstrap B --drop]   # smoke run, seconds

Two methods on one connected FlussClient, interleaved, ``--reps`` each after a warm-up:

- (a) a guided poll as konsole's poller makes it: ``gather_cluster(client, previous=...)``;
- (st) one storage poll: ``konsole.collect.cluster.storage.poll_storage(client, view)`` over (a)'s
  view (ListRemoteLogManifests per table on the 1.0 line, GetLatestKvSnapshots per PK
  table, GetTableStats per leader; what the servers advertise only).

Requests and request bytes are counted on the wire (every frame a Connection sends and the
bytes of every answer), CPU is this process's. The storage poll runs every
``--storage-interval`` seconds (30) while polls run every ``--poll-interval`` (5), so its
cost per poll cycle is (st) x poll / storage interval; the figure reported is that against
(a), goal under 25 %. Tables are the log tables of bench/poll.py (``konsole_bench``), the
own cluster is bench/poll.py's (1 coordinator, 3 tablet servers).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO, REPO / "bench"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from _quick import add_quick, parse_args  # noqa: E402
from poll import (  # noqa: E402
    bench_cluster,
    cluster_options,
    ensure_tables,
    log,
    pyfluss_close,
    pyfluss_connect,
)

from fluss_proto.client import FlussClient  # noqa: E402
from fluss_proto.connection import Connection  # noqa: E402
from fluss_proto.gather import gather_cluster  # noqa: E402
from konsole.collect.cluster.storage import poll_storage  # noqa: E402

BUDGET_S = 240.0


class Wire:
    """Counts the frames and bytes every Connection sends and receives while active."""

    def __init__(self) -> None:
        self.requests = 0
        self.sent = 0
        self.received = 0

    @contextlib.contextmanager
    def tap(self) -> Iterator[Wire]:
        single, many = Connection.request, Connection.request_many
        wire = self

        async def tapped(self: Connection, api_key: int, version: int, body: bytes, **kw: Any):
            wire.requests += 1
            wire.sent += len(body)
            answer = await single(self, api_key, version, body, **kw)
            wire.received += len(answer) if isinstance(answer, bytes | bytearray) else 0
            return answer

        async def tapped_many(self: Connection, items: Any, **kw: Any):
            items = list(items)
            wire.requests += len(items)
            wire.sent += sum(len(item[2]) for item in items)
            answers = await many(self, items, **kw)
            wire.received += sum(len(a) for a in answers if isinstance(a, bytes | bytearray))
            return answers

        Connection.request = tapped  # type: ignore[method-assign]
        Connection.request_many = tapped_many  # type: ignore[method-assign]
        try:
            yield self
        finally:
            Connection.request = single  # type: ignore[method-assign]
            Connection.request_many = many  # type: ignore[method-assign]


async def measure(args: argparse.Namespace, bootstrap: str) -> dict[str, Any]:
    conn = await pyfluss_connect(bootstrap)
    client = await FlussClient.connect(bootstrap)
    try:
        await ensure_tables(conn, client, args.tables, args.buckets, 1)
        view = await gather_cluster(client)
        samples: dict[str, list[dict[str, float]]] = {"a": [], "st": []}
        deadline = time.monotonic() + BUDGET_S
        for rep in range(args.warmup + args.reps):
            for method in ("a", "st"):
                wire = Wire()
                cpu0, t0 = time.process_time(), time.perf_counter()
                with wire.tap():
                    if method == "a":
                        view = await gather_cluster(client, previous=view)
                    else:
                        part = await poll_storage(client, view)
                cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
                if rep >= args.warmup:
                    samples[method].append(
                        {
                            "cpu_s": cpu,
                            "wall_s": wall,
                            "requests": wire.requests,
                            "bytes_sent": wire.sent,
                            "bytes_received": wire.received,
                        }
                    )
            if time.monotonic() > deadline:
                log(f"budget spent after {rep + 1} rounds")
                break
        caps = part.capabilities.as_dict()
        errors = len(part.errors)
    finally:
        await client.close()
        await pyfluss_close(conn)
    med = {m: {k: statistics.median(s[k] for s in v) for k in v[0]} for m, v in samples.items()}
    share = args.poll_interval / args.storage_interval
    return {
        "tables": args.tables,
        "buckets": args.buckets,
        "reps": len(samples["a"]),
        "poll_interval_s": args.poll_interval,
        "storage_interval_s": args.storage_interval,
        "capabilities": caps,
        "storage_errors": errors,
        "median": med,
        "per_cycle": {k: med["st"][k] * share for k in med["st"]},
        "ratio_cpu_amortised": med["st"]["cpu_s"] * share / med["a"]["cpu_s"],
        "ratio_requests_amortised": med["st"]["requests"] * share / max(1, med["a"]["requests"]),
        "ratio_bytes_amortised": (med["st"]["bytes_sent"] + med["st"]["bytes_received"])
        * share
        / max(1, med["a"]["bytes_sent"] + med["a"]["bytes_received"]),
    }


def print_summary(s: dict[str, Any]) -> None:
    print(f"{s['tables']} tables x {s['buckets']} buckets, {s['reps']} reps, {s['capabilities']}")
    for method, label in (("a", "guided poll (a)"), ("st", "storage poll (st)")):
        m = s["median"][method]
        print(
            f"  {label:<18} cpu {m['cpu_s'] * 1000:7.1f} ms  wall {m['wall_s'] * 1000:7.1f} ms  "
            f"requests {m['requests']:5.0f}  sent {m['bytes_sent']:8.0f} B  "
            f"received {m['bytes_received']:9.0f} B"
        )
    print(
        f"  amortised over {s['storage_interval_s']:g}s / {s['poll_interval_s']:g}s: storage adds "
        f"{s['ratio_cpu_amortised']:.1%} CPU, {s['ratio_requests_amortised']:.1%} requests, "
        f"{s['ratio_bytes_amortised']:.1%} bytes per poll (goal: CPU under 25%)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cluster_options(parser)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--buckets", type=int, default=8)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--poll-interval", type=float, default=5.0)
    parser.add_argument("--storage-interval", type=float, default=30.0)
    parser.add_argument("--json", action="store_true")
    add_quick(parser, {"tables": 3, "buckets": 2, "reps": 2, "warmup": 1})
    args = parse_args(parser, argv)
    with bench_cluster(args) as (bootstrap, _):
        summary = asyncio.run(measure(args, bootstrap))
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print_summary(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark one `konsole check` process against a pyfluss script reading the same facts.

Usage::

    .venv/bin/python bench/check.py                      # own 3-tablet-server cluster
    .venv/bin/python bench/check.py --bootstrap 127.0.0.1:9123 [--reps 7] [--json]
    .venv/bin/python bench/check.py --quick [--bootstrap B --run-dir D --drop]  # smoke run

What is timed: the wall time of a whole process, from spawn to exit, as a scheduler or a
monitoring system runs it (interpreter start-up and imports included):

- (a) ``konsole check --bootstrap B --format json``: servers, coordinator probe, every
  table, every bucket's leader, replicas and latest offset, health rules, JSON out;
- (a+) with our own cluster also ``konsole check --local``: the same plus a Prometheus
  scrape of every server and a probe of every configured coordinator (what the check
  reads in practice; pyfluss has no equivalent);
- (b) a Python script with pyfluss (the official client) reading the same facts the best
  way it can: server nodes and databases, then the tables, then per table its info and
  the latest offsets of all its buckets, every call of a stage issued at once.

Set-up as in bench/poll.py (its ``ensure_tables``): without ``--bootstrap`` a LocalCluster
with 1 coordinator and 3 tablet servers in a temporary run dir, stopped at the end; tables
``konsole_bench.bench_000`` .. (``--tables`` x ``--buckets``, RF ``--rf``), reused when they
exist. Then ``--reps`` runs of each process, interleaved; median and p90 wall time, median
CPU time (user + system of the process, all its threads), the ratios check / pyfluss (goal
for the wall time: <= 0.5) and the load average (other work on the machine shows there).
With ``--bootstrap``, ``--run-dir DIR`` (a local cluster's directory) times (a+) too.

Our packages are compiled to bytecode before the runs, as an installed wheel has them
(``installed_bytecode``, bench/_bytecode.py).

``--quick`` (bench/_quick.py): 2 tables x 2 buckets, one run of each process; ``--drop``
drops the bench database at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
for path in (REPO, REPO / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _bytecode import installed_bytecode  # noqa: E402
from _quick import add_quick, parse_args  # noqa: E402
from poll import (  # noqa: E402  (bench/poll.py: the table set-up is shared)
    bench_cluster,
    cluster_options,
    ensure_tables,
    leaderless,
    percentile,
    pyfluss_close,
    pyfluss_connect,
)

from fluss_proto.client import FlussClient  # noqa: E402

PROCESS_LIMIT_S = 120.0
CHECK_TIMEOUT_S = 60

# The peer: pyfluss only, nothing of konsole imported (its start-up is part of its time).
PYFLUSS_SCRIPT = r"""
import asyncio, json, sys
import fluss

async def main(bootstrap):
    conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": bootstrap}))
    try:
        admin = conn.get_admin()
        nodes, databases = await asyncio.gather(admin.get_server_nodes(), admin.list_databases())
        listed = await asyncio.gather(*(admin.list_tables(db) for db in databases))
        paths = [fluss.TablePath(db, t) for db, names in zip(databases, listed) for t in names]
        latest = fluss.OffsetSpec.latest()

        async def table(path):
            info = await admin.get_table_info(path)
            ids = list(range(info.num_buckets))
            if info.is_partitioned():
                total = 0
                for part in await admin.list_partition_infos(path):
                    got = await admin.list_partition_offsets(path, part.partition_name, ids, latest)
                    total += len(got)
                return total
            return len(await admin.list_offsets(path, ids, latest))

        buckets = sum(await asyncio.gather(*(table(p) for p in paths)))
        print(json.dumps({"servers": len(nodes), "tables": len(paths), "buckets": buckets}))
    finally:
        await conn.close()
        await asyncio.sleep(0.3)  # pyfluss's threads settle, or the interpreter may abort

asyncio.run(main(sys.argv[1]))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """Wall time and CPU time (user + system, all threads) of one process."""
    t0, c0 = time.perf_counter(), _children_cpu()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=PROCESS_LIMIT_S
    )
    return time.perf_counter() - t0, _children_cpu() - c0, proc.returncode, proc.stdout


async def prepare(args: argparse.Namespace, bootstrap: str) -> None:
    client = await FlussClient.connect(bootstrap)
    try:
        setup = await pyfluss_connect(bootstrap)
        try:
            names, _ = await ensure_tables(setup, client, args.tables, args.buckets, args.rf)
        finally:
            await pyfluss_close(setup)
        missing = await leaderless(client, names)
        if missing:
            raise SystemExit(f"bench tables without bucket leaders: {missing[:5]}...")
    finally:
        await client.close()


def run(args: argparse.Namespace, bootstrap: str, run_dir: str | None) -> dict[str, Any]:
    asyncio.run(prepare(args, bootstrap))
    installed_bytecode()
    env = {k: v for k, v in os.environ.items() if k not in ("FLUSS_BOOTSTRAP",)}
    env["KONSOLE_CONFIG"] = "/nonexistent/konsole-bench.toml"
    check = [sys.executable, "-m", "konsole.cli", "check", "-t", str(CHECK_TIMEOUT_S)]
    methods: dict[str, list[str]] = {
        "a": [*check, "--bootstrap", bootstrap, "--format", "json"],
        "b": [sys.executable, "-c", PYFLUSS_SCRIPT, bootstrap],
    }
    if run_dir is not None:
        methods["a+"] = [*check, "--local", "--run-dir", run_dir, "--format", "json"]
    facts: dict[str, Any] = {}
    times: dict[str, list[float]] = {k: [] for k in methods}
    cpus: dict[str, list[float]] = {k: [] for k in methods}
    codes: dict[str, set[int]] = {k: set() for k in methods}
    for rep in range(args.warmup + args.reps):
        for key, cmd in methods.items():
            wall, cpu, code, out = timed(cmd, env)
            if rep >= args.warmup:
                times[key].append(wall)
                cpus[key].append(cpu)
                codes[key].add(code)
            if key == "b" and code == 0:
                facts["pyfluss"] = json.loads(out.strip().splitlines()[-1])
            elif key == "a" and out.startswith("{"):
                d = json.loads(out)
                m = d["measures"]
                facts["check"] = {
                    "status": d["status"],
                    "tablet_servers": m["tablet_servers"]["value"],
                    "poll_latency_s": m["poll_latency"]["value"],
                }
    labels = {
        "a": "(a) konsole check --bootstrap",
        "a+": "(a+) konsole check --local (+ metrics)",
        "b": "(b) pyfluss script",
    }
    summary: dict[str, Any] = {
        "bootstrap": bootstrap,
        "bench_tables": args.tables,
        "buckets_per_table": args.buckets,
        "reps": args.reps,
        "facts": facts,
        "methods": {
            k: {
                "label": labels[k],
                "median_s": statistics.median(v),
                "p90_s": percentile(v, 0.9),
                "cpu_s": statistics.median(cpus[k]),
                "exit_codes": sorted(codes[k]),
            }
            for k, v in times.items()
        },
    }
    med = {k: v["median_s"] for k, v in summary["methods"].items()}
    summary["ratios"] = {f"{k}/b": med[k] / med["b"] for k in med if k != "b"}
    cpu = {k: v["cpu_s"] for k, v in summary["methods"].items()}
    summary["cpu_ratios"] = {f"{k}/b": cpu[k] / cpu["b"] for k in cpu if k != "b"}
    summary["load_average"] = os.getloadavg()
    return summary


def print_table(s: dict[str, Any]) -> None:
    print(
        f"{s['bench_tables']} bench tables x {s['buckets_per_table']} buckets; "
        f"{s['reps']} reps; facts: {s['facts']}"
    )
    print(f"{'process':42} {'median s':>9} {'p90 s':>7} {'CPU s':>7} {'exit codes':>11}")
    for m in s["methods"].values():
        codes = ",".join(str(c) for c in m["exit_codes"])
        print(
            f"{m['label']:42} {m['median_s']:>9.3f} {m['p90_s']:>7.3f} {m['cpu_s']:>7.3f} "
            f"{codes:>11}"
        )
    ratios = "  ".join(f"{k} = {v:.2f}" for k, v in s["ratios"].items())
    cpu = "  ".join(f"{k} = {v:.2f}" for k, v in s["cpu_ratios"].items())
    load = ", ".join(f"{x:.1f}" for x in s["load_average"])
    print(f"wall-time ratios (goal a/b <= 0.5): {ratios}; CPU ratios: {cpu}; load {load}")


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    cluster_options(parser)
    parser.add_argument("--run-dir", help="with --bootstrap: its local cluster's dir, for (a+)")
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--buckets", type=int, default=8)
    parser.add_argument("--rf", type=int, default=1)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    add_quick(parser, {"tables": 2, "buckets": 2, "reps": 1, "warmup": 0})
    args = parse_args(parser, argv)
    if min(args.tables, args.buckets, args.rf, args.reps) < 1 or args.warmup < 0:
        parser.error("--tables, --buckets, --rf and --reps must be >= 1, --warmup >= 0")
    if args.run_dir and not args.bootstrap:
        parser.error("--run-dir goes with --bootstrap (the own cluster's dir is known)")

    with bench_cluster(args) as (bootstrap, desc):
        summary = run(args, bootstrap, desc.run_dir if desc is not None else args.run_dir)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_table(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

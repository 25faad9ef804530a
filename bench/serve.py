"""`konsole serve`'s own cost: CPU per cluster per poll, and the time of a scrape.

Simulated part (no cluster): 20 clusters of 200 tables x 8 buckets (1,600 buckets each,
``ui.py``'s snapshot of a healthy 3-tablet-server cluster, offsets advancing every poll)
fed to what serve does after a poll's I/O, in one process: each cluster's
:class:`~konsole.collect.history.recorder.Recorder` (events, health, one SQLite transaction into
its own history file) and the :class:`~konsole.serve.exposition.Exposition` (the
cluster's series). Then ``/metrics`` of the 20 clusters is scraped over loopback HTTP
(the real :class:`~konsole.serve.exposition.MetricsServer`, text format) ``--scrapes``
times. Prints the CPU per cluster per poll (median / p90, split record / exposition), the
scrape's wall time (median / p90) and size, and the estimate of the process's CPU at
``--interval`` polls and ``--scrape-interval`` scrapes. Goals (issue 19): a scrape of 20
clusters < 100 ms, the process < 10 % of a core at 10 s intervals.

Real part (``--bootstrap HOST:PORT``, optional): the I/O path of one real cluster, the
live poller of ``konsole serve`` (gather, coordinator probe), ``--real-polls`` polls, each
then recorded and exported: CPU per poll (process time, the network wait excluded) and
wall time. ``--real-tables N`` creates ``bench/poll.py``'s N x 8-bucket tables first (``--drop``
drops them at the end).

    python bench/serve.py [--clusters 20] [--polls 10] [--scrapes 30] [--json]
        [--bootstrap HOST:PORT [--real-tables 200] [--drop] [--real-polls 10]]
    python bench/serve.py --quick     # smoke run: 3 clusters, 2 polls, 3 scrapes
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _quick import add_quick, parse_args  # noqa: E402  (bench/ is the script's dir)

from konsole.serve.exposition import DEFAULT_MAX_TABLES  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def figures(values: list[float]) -> dict[str, float]:
    return {
        "median": statistics.median(values),
        "p90": percentile(values, 0.9),
        "max": max(values),
    }


def snapshots(polls: int, tables: int, buckets: int, interval: float) -> list[Any]:
    """The polls every simulated cluster makes (offsets advance each poll)."""
    from ui import large_state

    now = time.time() - polls * interval
    return [
        large_state(now + k * interval, tables=tables, buckets=buckets, seq=k + 2).snapshot
        for k in range(polls)
    ]


async def simulated(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from konsole.collect.history.recorder import Recorder
    from konsole.collect.recording import Recording
    from konsole.serve.exposition import Exposition, MetricsServer

    polls = snapshots(args.polls, args.tables, args.buckets, args.interval)
    names = [f"cluster{i:02d}" for i in range(args.clusters)]
    exposition = Exposition(names, max_tables=args.max_tables)
    recorders = {n: Recorder(work / f"{n}.sqlite", say=lambda _: None) for n in names}
    for recorder in recorders.values():
        recorder.open()
    recordings = {n: Recording(r) for n, r in recorders.items()}
    record_cpu: list[float] = []
    export_cpu: list[float] = []
    for snapshot in polls:
        for name in names:
            t0 = time.process_time()
            judged = recordings[name].take(snapshot)
            t1 = time.process_time()
            await exposition.on_poll(name, judged)
            t2 = time.process_time()
            record_cpu.append(t1 - t0)
            export_cpu.append(t2 - t1)
    for recorder in recorders.values():
        recorder.close()
    server = MetricsServer(exposition.registry, "127.0.0.1", 0, lambda: (True, {}))
    server.start()
    try:
        c0 = time.process_time()
        scraped = scrape_from_another_process(f"http://127.0.0.1:{server.port}/metrics", args)
        # The server's CPU for every scrape (the scraper is another process).
        scrape_cpu = (time.process_time() - c0) / args.scrapes
    finally:
        server.close()
    per_poll = [r + e for r, e in zip(record_cpu, export_cpu, strict=True)]
    # One core-second per second is 100 %.
    cpu_share = (
        statistics.median(per_poll) * args.clusters / args.interval
        + scrape_cpu / args.scrape_interval
    )
    return {
        "clusters": args.clusters,
        "buckets_per_cluster": args.tables * args.buckets,
        "polls_per_cluster": args.polls,
        "cpu_per_cluster_poll_s": figures(per_poll),
        "record_cpu_s": figures(record_cpu),
        "exposition_cpu_s": figures(export_cpu),
        "max_tables": args.max_tables,
        "scrape_s": figures(scraped["wall"]),
        "scrape_cpu_s": scrape_cpu,
        "scrape_bytes": scraped["bytes"],
        "scrape_gzip_bytes": scraped["gzip_bytes"],
        "scrape_series": scraped["series"],
        "interval_s": args.interval,
        "scrape_interval_s": args.scrape_interval,
        "process_cpu_percent": 100 * cpu_share,
        "load_average": os.getloadavg()[0],
        # Peak resident memory of the process: 20 clusters' last snapshots, samples, SQLite.
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


#: The scraper: another process, asking as Prometheus 2.x asks (OpenMetrics, gzip).
SCRAPER = """
import json, sys, time, httpx
url, n = sys.argv[1], int(sys.argv[2])
accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
walls = []
with httpx.Client(timeout=30, headers={"Accept": accept, "Accept-Encoding": "gzip"}) as c:
    for _ in range(n):
        t0 = time.perf_counter()
        r = c.get(url)
        r.read()
        walls.append(time.perf_counter() - t0)
series = sum(1 for ln in r.text.splitlines() if ln and not ln.startswith("#"))
print(json.dumps({"wall": walls, "bytes": len(r.content), "series": series,
                  "gzip_bytes": int(r.headers.get("content-length", 0))}))
"""


def scrape_from_another_process(url: str, args: argparse.Namespace) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", SCRAPER, url, str(args.scrapes)],
        capture_output=True,
        text=True,
        timeout=60 + 10 * args.scrapes,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


async def real(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """The live poller of one real cluster, each poll recorded and exported."""
    from konsole.collect.cluster.connect import build_poller
    from konsole.collect.history.recorder import Recorder
    from konsole.collect.profiles import resolve_profile
    from konsole.serve.exposition import Exposition

    if args.real_tables:
        await create_tables(args.bootstrap, args.real_tables)
    profile = resolve_profile(bootstrap=args.bootstrap)
    poller, release = build_poller(profile, None)
    exposition = Exposition(["real"])
    from konsole.collect.recording import Recording

    recorder = Recorder(work / "real.sqlite", say=lambda _: None)
    recorder.open()
    recording = Recording(recorder)
    poll_cpu: list[float] = []
    poll_wall: list[float] = []
    buckets = 0
    try:
        for _ in range(args.real_polls):
            c0, t0 = time.process_time(), time.perf_counter()
            snapshot = await poller.poll()
            judged = recording.take(snapshot)
            await exposition.on_poll("real", judged)
            poll_cpu.append(time.process_time() - c0)
            poll_wall.append(time.perf_counter() - t0)
            buckets = len(snapshot.view.buckets) if snapshot.view is not None else buckets
    finally:
        await release()
        recorder.close()
    return {"buckets": buckets, "cpu_per_poll_s": figures(poll_cpu), "wall_s": figures(poll_wall)}


async def create_tables(bootstrap: str, count: int) -> None:
    from poll import ensure_tables, pyfluss_close, pyfluss_connect

    from fluss_proto.client import FlussClient

    conn = await pyfluss_connect(bootstrap)
    client = await FlussClient.connect([bootstrap])
    try:
        await ensure_tables(conn, client, count, 8, 1)
    finally:
        await client.close()
        await pyfluss_close(conn)


def print_summary(s: dict[str, Any]) -> None:
    sim = s["simulated"]

    def ms(f: dict[str, float]) -> str:
        return f"median {f['median'] * 1000:.1f} ms, p90 {f['p90'] * 1000:.1f} ms"

    print(
        f"{sim['clusters']} clusters x {sim['buckets_per_cluster']} buckets, "
        f"{sim['polls_per_cluster']} polls each"
    )
    print(f"  CPU per cluster per poll:  {ms(sim['cpu_per_cluster_poll_s'])}")
    print(f"    record (events, health, SQLite): {ms(sim['record_cpu_s'])}")
    print(f"    exposition (series):             {ms(sim['exposition_cpu_s'])}")
    print(
        f"  scrape of /metrics:        {ms(sim['scrape_s'])}  goal < 100 ms\n"
        f"    {sim['scrape_series']:,} series (--max-tables {sim['max_tables']}), "
        f"{sim['scrape_bytes']:,} bytes, {sim['scrape_gzip_bytes']:,} gzipped; "
        f"server CPU {sim['scrape_cpu_s'] * 1000:.1f} ms per scrape"
    )
    print(
        f"  process CPU at {sim['interval_s']:g} s polls, {sim['scrape_interval_s']:g} s "
        f"scrapes: {sim['process_cpu_percent']:.2f} % of a core (I/O path not included)  "
        "goal < 10 %"
    )
    print(f"  peak memory of the process: {sim['max_rss_mb']:.0f} MB")
    print(f"  load average (1 min) at the end: {sim['load_average']:.2f}")
    if "real" in s:
        r = s["real"]
        print(
            f"real cluster ({r['buckets']} buckets), one poll recorded and exported: "
            f"CPU {ms(r['cpu_per_poll_s'])}; wall {ms(r['wall_s'])}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--tables", type=int, default=200, help="tables per simulated cluster")
    parser.add_argument("--buckets", type=int, default=8)
    parser.add_argument("--polls", type=int, default=10, help="polls per simulated cluster")
    parser.add_argument("--scrapes", type=int, default=30)
    parser.add_argument(
        "--max-tables",
        type=int,
        default=DEFAULT_MAX_TABLES,
        help="serve's --max-tables (default: its own)",
    )
    parser.add_argument("--interval", type=float, default=10.0, help="seconds between polls")
    parser.add_argument("--scrape-interval", type=float, default=15.0)
    parser.add_argument("--bootstrap", help="also measure this real cluster's I/O path")
    parser.add_argument("--real-polls", type=int, default=10)
    parser.add_argument(
        "--real-tables", type=int, default=0, help="create this many 8-bucket bench tables"
    )
    parser.add_argument("--drop", action="store_true", help="drop the bench tables at the end")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_quick(parser, {"clusters": 3, "tables": 20, "polls": 2, "scrapes": 3, "real_polls": 2})
    args = parse_args(parser, argv)
    if min(args.clusters, args.tables, args.buckets, args.polls, args.scrapes) < 1:
        parser.error("--clusters, --tables, --buckets, --polls, --scrapes must be >= 1")
    with tempfile.TemporaryDirectory(prefix="konsole-bench-serve-") as tmp:
        summary: dict[str, Any] = {"simulated": asyncio.run(simulated(args, Path(tmp)))}
        if args.bootstrap:
            try:
                summary["real"] = asyncio.run(real(args, Path(tmp)))
            finally:
                if args.drop:
                    from poll import drop_bench_database

                    asyncio.run(drop_bench_database(args.bootstrap))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_summary(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

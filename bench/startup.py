"""Start-up: what each command costs from spawn, against peers measured in the same run.

Usage::

    .venv/bin/python bench/startup.py               # own cluster: 3 tablet servers, 1,600 buckets
    .venv/bin/python bench/startup.py --quick       # fewer runs of everything (a smoke run)
    .venv/bin/python bench/startup.py --bootstrap 127.0.0.1:9123 [--metrics URL ...]
    .venv/bin/python bench/startup.py --no-cluster  # only what needs no server
    .venv/bin/python bench/startup.py --imports     # also each command's -X importtime profile
    .venv/bin/python bench/startup.py --json
    .venv/bin/python bench/startup.py --bootstrap B --preview-only --baseline DIR
        # the preview alone, and the same preview from an older checkout DIR (PYTHONPATH)
        # interleaved with it: first row, exit and CPU of each process

Every figure is a whole process, from spawn to exit (or to its first row), interpreter
start-up and imports included, as cron, a monitoring system or an operator's shell runs it;
the median of ``--reps`` runs, konsole and its peer interleaved so both see the same machine,
with the load average beside each figure (the machine may be shared). No assertions: the
goals of issue 22 are printed beside the ratios.

1. ``konsole --version`` and ``konsole check --help`` against ``python -c "import click"``
   (goal: within 1.5x);
2. ``konsole check --bootstrap B --format json`` on a 200-table x 8-bucket cluster against
   the pyfluss script of ``bench/check.py`` reading the same facts (goal: <= 0.3x quiet,
   <= 0.5x at a load of 2 per core); with its own cluster also ``check --local`` (metrics
   scraped and parsed too);
3. ``konsole preview konsole_bench.bench_000 --limit 20 --format jsonl``: spawn to its first
   row on stdout, against a pyfluss script's spawn to its first row of the same table
   (goal: < 0.3 s quiet and <= 1.0x pyfluss); the CPU of each process beside it, and with
   ``--baseline DIR`` the same command run from the checkout DIR, interleaved; and the
   library floor: a process that only imports click, asyncio and our protobuf messages
   (what any preview through our one client imports before its first request);
   and the lean imports: what a path without those three would import of ours;
4. the metrics parse of each tablet server's real scrape (CPU per parse, in this process,
   against prometheus_client's parser on the whole text) (goal: < 1 ms);
5. the console's first paint against a bare Textual app (``bench/ui.py``'s children;
   goal: <= 1.2x).

Our packages are compiled to bytecode first (``installed_bytecode`` in bench/_bytecode.py),
as an installed wheel has them, so no figure includes compiling our sources.

The cluster set-up is ``bench/check.py``'s (``bench/poll.py``'s ``ensure_tables``): tables
``konsole_bench.bench_000`` ..., reused when they exist; 100 rows are appended to
``bench_000`` for the preview.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import select
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
for path in (REPO, REPO / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

PROCESS_LIMIT_S = 120.0
PREVIEW_TABLE = ("konsole_bench", "bench_000")
PREVIEW_ROWS = 100

# The floor of any preview through our one client: the libraries DESIGN.md chooses for it
# (click for the command line, an asyncio client, the protobuf runtime with our messages),
# imported and nothing done. A preview cannot start its first request sooner than this.
LIBRARY_FLOOR = "import click, asyncio, fluss_proto._gen.fluss_rpc_pb2"
# What a preview path without those three would still import of ours, as the packages stand
# (a blocking socket, our frame codec, our Arrow reader, the plain renderer): how near such
# a second path could come to pyfluss's first row before its own round trips.
LEAN_IMPORTS = (
    "import socket, json, struct, zstandard, fluss_proto.frame, "
    "fluss_proto.records.arrow_ipc, konsole.render.plain"
)

# The peer of the preview: pyfluss only, to its first row of the same table, printed as a
# JSON line (its start-up and imports are part of its time, as ours are of ours).
PYFLUSS_FIRST_ROW = r"""
import asyncio, json, sys
import fluss

async def main(bootstrap, database, name, limit):
    conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": bootstrap}))
    try:
        table = await conn.get_table(fluss.TablePath(database, name))
        buckets = table.get_table_info().num_buckets
        scanner = await table.new_scan().create_log_scanner()
        scanner.subscribe_buckets({b: fluss.EARLIEST_OFFSET for b in range(buckets)})
        printed = 0
        for _ in range(200):  # bounded: 200 polls of at most 100 ms
            for record in await scanner.poll(100):
                print(json.dumps(record.row, default=str), flush=True)
                printed += 1
                if printed >= limit:
                    return
    finally:
        await conn.close()
        await asyncio.sleep(0.3)  # pyfluss's threads settle, or the interpreter may abort

asyncio.run(main(*sys.argv[1:4], int(sys.argv[4])))
"""


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def load() -> float:
    return os.getloadavg()[0]


def konsole_cmd() -> list[str]:
    """The installed ``konsole`` script (what users run), else ``python -m konsole.cli``."""
    script = Path(sys.executable).parent / "konsole"
    return [str(script)] if script.exists() else [sys.executable, "-m", "konsole.cli"]


def bench_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "FLUSS_BOOTSTRAP"}
    env["KONSOLE_CONFIG"] = "/nonexistent/konsole-bench.toml"
    return env


# =========================================================================== one process


def wall(cmd: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Spawn to exit: seconds, exit code, stdout."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=PROCESS_LIMIT_S
    )
    return time.perf_counter() - t0, proc.returncode, proc.stdout


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


#: CPU seconds (user + system) of the last process first_line waited for.
LAST_CPU: list[float] = [float("nan")]


def first_line(cmd: list[str], env: dict[str, str], cwd: Path = REPO) -> tuple[float, float, str]:
    """Spawn to the first complete line on stdout, and to exit: seconds, seconds, the line.
    The process's CPU time is left in ``LAST_CPU``."""
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=env
    )
    assert proc.stdout is not None
    fd, got, first = proc.stdout.fileno(), b"", float("nan")
    deadline = t0 + PROCESS_LIMIT_S
    for _ in range(100_000):  # bounded: each turn reads or waits on a deadline
        left = deadline - time.perf_counter()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        got += chunk
        if b"\n" in got:
            first = time.perf_counter() - t0
            break
    for _ in range(100_000):  # drain to the end (bounded)
        if not os.read(fd, 1 << 16):
            break
    proc.wait(timeout=PROCESS_LIMIT_S)
    LAST_CPU[0] = _children_cpu() - cpu0
    return first, time.perf_counter() - t0, got.split(b"\n", 1)[0].decode(errors="replace")


def _stats(values: list[float], loads: list[float]) -> dict[str, Any]:
    ordered = sorted(v for v in values if v == v)  # NaN: no first row
    return {
        "median_s": statistics.median(ordered) if ordered else float("nan"),
        "p90_s": ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))] if ordered else None,
        "runs": len(values),
        "failed": len(values) - len(ordered),
        "load": (min(loads), max(loads)),
    }


def interleaved(reps: int, warmup: int, runs: dict[str, Callable[[], float]]) -> dict[str, Any]:
    """Each run of ``runs`` once per round, ``warmup`` + ``reps`` rounds; stats per key."""
    times: dict[str, list[float]] = {k: [] for k in runs}
    loads: dict[str, list[float]] = {k: [] for k in runs}
    for rnd in range(warmup + reps):
        for key, run in runs.items():
            before = load()
            seconds = run()
            if rnd >= warmup:
                times[key].append(seconds)
                loads[key].append(max(before, load()))
    return {k: _stats(times[k], loads[k]) for k in runs}


# =========================================================================== measurements


def measure_light(reps: int) -> dict[str, Any]:
    """``--version`` and ``check --help`` against ``import click`` (and a bare interpreter)."""
    env, ours = bench_env(), konsole_cmd()
    log("measuring --version, check --help, import click ...")
    return interleaved(
        reps,
        2,
        {
            "python": lambda: wall([sys.executable, "-c", "pass"], env)[0],
            "import_click": lambda: wall([sys.executable, "-c", "import click"], env)[0],
            "version": lambda: wall([*ours, "--version"], env)[0],
            "check_help": lambda: wall([*ours, "check", "--help"], env)[0],
        },
    )


def measure_check(reps: int, bootstrap: str, run_dir: str | None) -> dict[str, Any]:
    from check import PYFLUSS_SCRIPT  # bench/check.py: the same peer

    env, ours = bench_env(), konsole_cmd()
    check = [*ours, "check", "-t", "60", "--format", "json"]
    runs: dict[str, Callable[[], float]] = {
        "check": lambda: _ok(wall([*check, "--bootstrap", bootstrap], env), (0, 1)),
        "pyfluss": lambda: _ok(wall([sys.executable, "-c", PYFLUSS_SCRIPT, bootstrap], env), (0,)),
    }
    if run_dir is not None:
        local = [*check, "--local", "--run-dir", run_dir]
        runs["check_local"] = lambda: _ok(wall(local, env), (0, 1))
    log("measuring konsole check against the pyfluss script ...")
    return interleaved(reps, 1, runs)


def _ok(result: tuple[float, int, str], codes: tuple[int, ...]) -> float:
    seconds, code, out = result
    if code not in codes:
        log(f"  exit {code}: {out[:300]}")
        return float("nan")
    return seconds


def measure_preview(reps: int, bootstrap: str, baseline: str | None = None) -> dict[str, Any]:
    env, ours = bench_env(), konsole_cmd()
    db, name = PREVIEW_TABLE
    args = ["preview", f"{db}.{name}", "--limit", "20", "--format", "jsonl"]
    preview = [*ours, *args]
    pyfluss = [sys.executable, "-c", PYFLUSS_FIRST_ROW, bootstrap, db, name, "20"]
    totals: dict[str, list[float]] = {"preview": [], "pyfluss": [], "baseline": []}
    cpus: dict[str, list[float]] = {k: [] for k in totals}

    def first(
        key: str, cmd: list[str], env: dict[str, str] = env, cwd: Path = REPO
    ) -> Callable[[], float]:
        def run() -> float:
            seconds, total, line = first_line(cmd, env, cwd)
            totals[key].append(total)
            cpus[key].append(LAST_CPU[0])
            if not line.strip():
                log(f"  {key}: no row")
                return float("nan")
            return seconds

        return run

    log("measuring the preview's first row against pyfluss's ...")
    runs = {
        "preview": first("preview", [*preview, "--bootstrap", bootstrap]),
        "pyfluss": first("pyfluss", pyfluss),
        "floor": lambda: wall([sys.executable, "-c", LIBRARY_FLOOR], env)[0],
        "lean": lambda: wall([sys.executable, "-c", LEAN_IMPORTS], env)[0],
    }
    if baseline is not None:  # the same command from an older checkout (before a change)
        # its own venv when it has one (an editable install wins over PYTHONPATH), run in
        # its directory (``-m`` puts the working directory first on the path)
        where = Path(baseline).resolve()
        python = where / ".venv" / "bin" / "python"
        old = {**env, "PYTHONPATH": str(where)}
        cmd = [str(python) if python.exists() else sys.executable, "-m", "konsole.cli"]
        runs["baseline"] = first("baseline", [*cmd, *args, "--bootstrap", bootstrap], old, where)
    out = interleaved(reps, 1, runs)
    for key, values in totals.items():
        if values:
            out[key]["exit_median_s"] = statistics.median(values)
            out[key]["cpu_median_s"] = statistics.median(cpus[key][-len(values) :])
    return out


def measure_metrics(urls: list[str], parses: int) -> dict[str, Any]:
    """CPU per parse of each tablet server's real scrape (this process, after a warm-up)."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families

    from konsole.collect.cluster.metrics import parse_metrics

    log("measuring the metrics parse ...")
    out: dict[str, Any] = {}
    with httpx.Client(timeout=10.0, trust_env=False) as http:
        texts = [(u, http.get(u).text) for u in urls]
    for url, text in texts:
        if "fluss_tabletserver_" not in text:
            continue  # coordinators: a few kB

        def ours(text: str = text, url: str = url) -> None:
            parse_metrics(text, url=url, scraped_at=0.0)

        def whole(text: str = text) -> None:
            for family in text_string_to_metric_families(text):
                for _ in family.samples:
                    pass

        out[url] = {
            "bytes": len(text.encode()),
            "lines": text.count("\n"),
            "ours_cpu_ms": _cpu_ms(ours, parses),
            "prometheus_client_whole_cpu_ms": _cpu_ms(whole, max(3, parses // 20)),
            "load": load(),
        }
    return out


def _cpu_ms(fn: Callable[[], None], n: int) -> float:
    fn()
    samples = []
    for _ in range(n):
        c0 = time.process_time()
        fn()
        samples.append((time.process_time() - c0) * 1000)
    return statistics.median(samples)


def measure_ui(reps: int) -> dict[str, Any]:
    import ui as ui_bench  # bench/ui.py: its children and its first-paint timer

    story = ui_bench._story_file()
    log("measuring the console's first paint against a bare Textual app ...")
    return interleaved(
        reps,
        1,
        {
            "bare": lambda: ui_bench.first_paint("bare", story),
            "console": lambda: ui_bench.first_paint("konsole-connecting", story),
        },
    )


# =========================================================================== import sets

#: Packages reported on their own in the import profile; the rest is "other".
PACKAGES = (
    "konsole",
    "fluss_proto",
    "store",
    "click",
    "httpx",
    "httpcore",
    "anyio",
    "google",
    "pyarrow",
    "numpy",
    "textual",
    "rich",
    "pygments",
    "asyncio",
    "platformdirs",
)


def import_profile(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """``python -X importtime -m konsole.cli ARGS``: modules imported, and milliseconds of
    import per top-level package (each module's own time, without what it imports)."""
    cmd = [sys.executable, "-X", "importtime", "-m", "konsole.cli", *args]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=PROCESS_LIMIT_S
    )
    by_package: dict[str, float] = {}
    modules = 0
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = line.split("|")
        if not parts[1].strip().isdigit():
            continue  # the header line
        modules += 1
        top = parts[2].strip().split(".")[0]
        key = top if top in PACKAGES else "other"
        self_us = int(parts[0].removeprefix("import time:").strip())
        by_package[key] = by_package.get(key, 0.0) + self_us / 1000
    return {"modules": modules, "ms": sum(by_package.values()), "by_package": by_package}


def measure_imports(bootstrap: str | None) -> dict[str, Any]:
    """The import profile of each command (the median of 3 by total time)."""
    import socket

    env = bench_env()
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{s.getsockname()[1]}"
    db, name = PREVIEW_TABLE
    commands = {
        "--version": ["--version"],
        "check --help": ["check", "--help"],
        "check (unreachable)": ["check", "--bootstrap", closed, "-t", "5"],
        "preview --help": ["preview", "--help"],
        "watch --help": ["watch", "--help"],
        "history --help": ["history", "--help"],
        "profiles": ["profiles"],
    }
    if bootstrap is not None:
        commands["check (1,600 buckets)"] = ["check", "--bootstrap", bootstrap, "-t", "60"]
        commands["preview --limit 20 --format jsonl"] = [
            "preview",
            f"{db}.{name}",
            "--bootstrap",
            bootstrap,
            "--limit",
            "20",
            "--format",
            "jsonl",
        ]
    log("profiling each command's imports ...")
    out: dict[str, Any] = {}
    for label, argv in commands.items():
        runs = sorted((import_profile(argv, env) for _ in range(3)), key=lambda r: r["ms"])
        out[label] = {**runs[1], "load": load()}
    return out


# =========================================================================== the cluster


async def prepare(args: argparse.Namespace, bootstrap: str) -> None:
    """bench/check.py's tables, and rows in the preview's table."""
    from check import prepare as check_prepare
    from poll import pyfluss_close, pyfluss_connect, write_rows

    await check_prepare(args, bootstrap)
    conn = await pyfluss_connect(bootstrap)
    try:
        await write_rows(conn, [PREVIEW_TABLE[1]], PREVIEW_ROWS)
    finally:
        await pyfluss_close(conn)


SPIN_CHILD = "import time\nend = time.monotonic() + {s}\nwhile time.monotonic() < end: pass"


@contextlib.contextmanager
def spinning(count: int, settle_s: float, limit_s: float = 1800.0) -> Iterator[None]:
    """``count`` processes spinning on a core each (a controlled load: ``--spin 4`` on 2
    cores is a load of 2 per core), ``settle_s`` for the load average to rise; each ends
    itself after ``limit_s`` even if this process is killed."""
    procs = [
        subprocess.Popen([sys.executable, "-c", SPIN_CHILD.format(s=limit_s)]) for _ in range(count)
    ]
    try:
        if procs:
            log(f"{count} spinning processes; waiting {settle_s:.0f} s for the load ...")
            time.sleep(settle_s)
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=10)


def run(args: argparse.Namespace) -> dict[str, Any]:
    with spinning(args.spin, 5.0 if args.quick else 60.0):
        return _run(args)


def _run(args: argparse.Namespace) -> dict[str, Any]:
    reps = 5 if args.quick else args.reps
    summary: dict[str, Any] = {"reps": reps, "cpus": os.cpu_count(), "load_start": load()}
    from _bytecode import installed_bytecode  # ours from bytecode, as installed

    summary["bytecode"] = installed_bytecode()
    summary["light"] = measure_light(reps if args.quick else 3 * reps)
    if not args.no_cluster:
        from poll import bench_cluster  # bench/poll.py: the benches' one cluster

        with bench_cluster(args) as (bootstrap, desc):
            if desc is not None:
                summary["fluss_version"] = desc.version
            asyncio.run(prepare(args, bootstrap))
            run_dir = None if desc is None else desc.run_dir
            if not args.preview_only:
                summary["check"] = measure_check(reps, bootstrap, run_dir)
            summary["preview"] = measure_preview(reps, bootstrap, args.baseline)
            urls = list(args.metrics) or (
                [p.metrics_url for p in desc.processes if p.metrics_url] if desc else []
            )
            if urls and not args.preview_only:
                summary["metrics"] = measure_metrics(urls, 20 if args.quick else 200)
            if args.imports:
                summary["imports"] = measure_imports(bootstrap)
    elif args.imports:
        summary["imports"] = measure_imports(None)
    if not args.preview_only:
        summary["ui"] = measure_ui(3 if args.quick else max(3, reps // 2))
    summary["load_end"] = load()
    summary["ratios"] = ratios(summary)
    return summary


def ratios(s: dict[str, Any]) -> dict[str, float]:
    def med(part: str, key: str) -> float:
        return float(s[part][key]["median_s"])

    out = {
        "version / import click": med("light", "version") / med("light", "import_click"),
        "check --help / import click": med("light", "check_help") / med("light", "import_click"),
    }
    if "ui" in s:
        out["console first paint / bare Textual"] = med("ui", "console") / med("ui", "bare")
    if "check" in s:
        out["check / pyfluss"] = med("check", "check") / med("check", "pyfluss")
        if "check_local" in s["check"]:
            out["check --local / pyfluss"] = med("check", "check_local") / med("check", "pyfluss")
    if "preview" in s:
        out["preview first row / pyfluss first row"] = med("preview", "preview") / med(
            "preview", "pyfluss"
        )
        out["library floor / pyfluss first row"] = med("preview", "floor") / med(
            "preview", "pyfluss"
        )
        out["lean imports / pyfluss first row"] = med("preview", "lean") / med("preview", "pyfluss")
        if "baseline" in s["preview"]:
            out["preview first row / baseline's"] = med("preview", "preview") / med(
                "preview", "baseline"
            )
    return out


# =========================================================================== output

GOALS = {
    "version / import click": "<= 1.5",
    "check --help / import click": "<= 1.5",
    "check / pyfluss": "<= 0.3 quiet, <= 0.5 at load 2/core",
    "check --local / pyfluss": "(metrics too; no peer)",
    "preview first row / pyfluss first row": "<= 1.0 (and < 0.3 s quiet)",
    "console first paint / bare Textual": "<= 1.2",
    "preview first row / baseline's": "(before / after a change)",
    "library floor / pyfluss first row": "(imports alone; the preview's floor)",
    "lean imports / pyfluss first row": "(a path without click, asyncio, protobuf)",
}


def print_summary(s: dict[str, Any]) -> None:
    print(
        f"{s['cpus']} CPUs; {s['reps']} runs per figure (medians); load average "
        f"{s['load_start']:.1f} at the start, {s['load_end']:.1f} at the end"
    )
    print(f"{'process (spawn to exit, or to the first row)':52} {'median':>8} {'p90':>8}  load")
    labels = {
        ("light", "python"): 'python -c "pass"',
        ("light", "import_click"): 'python -c "import click"',
        ("light", "version"): "konsole --version",
        ("light", "check_help"): "konsole check --help",
        ("check", "check"): "konsole check --bootstrap (1,600 buckets)",
        ("check", "check_local"): "konsole check --local (+ metrics scrape)",
        ("check", "pyfluss"): "pyfluss script (bench/check.py)",
        ("preview", "preview"): "konsole preview --limit 20 --format jsonl: 1st row",
        ("preview", "pyfluss"): "pyfluss log scanner: 1st row",
        ("preview", "baseline"): "the same preview from --baseline: 1st row",
        ("preview", "floor"): "import click, asyncio, our protobuf messages",
        ("preview", "lean"): "import socket, json, our frame + Arrow reader",
        ("ui", "bare"): "bare Textual app: first paint",
        ("ui", "console"): "konsole console: first paint",
    }
    for (part, key), label in labels.items():
        if part in s and key in s[part]:
            m = s[part][key]
            p90 = f"{m['p90_s'] * 1000:>6.0f}ms" if m["p90_s"] is not None else "       -"
            fails = f"  ({m['failed']} failed)" if m["failed"] else ""
            lo, hi = m["load"]
            cpu = f"  CPU {m['cpu_median_s'] * 1000:.0f}ms" if "cpu_median_s" in m else ""
            print(f"{label:52} {m['median_s'] * 1000:>6.0f}ms {p90}  {lo:.1f}-{hi:.1f}{fails}{cpu}")
    for url, m in s.get("metrics", {}).items():
        print(
            f"metrics parse {url}: {m['bytes'] / 1e6:.2f} MB, {m['lines']} lines: "
            f"{m['ours_cpu_ms']:.2f} ms CPU (goal < 1 ms; prometheus_client on the whole "
            f"text {m['prometheus_client_whole_cpu_ms']:.1f} ms); load {m['load']:.1f}"
        )
    for label, m in s.get("imports", {}).items():
        top = sorted(m["by_package"].items(), key=lambda kv: -kv[1])[:5]
        parts = ", ".join(f"{k} {v:.0f}" for k, v in top)
        print(
            f"imports of {label}: {m['modules']} modules, {m['ms']:.0f} ms ({parts}); "
            f"load {m['load']:.1f}"
        )
    for name, value in s["ratios"].items():
        print(f"ratio {name}: {value:.2f}  (goal {GOALS[name]})")


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 runs per figure, 3 paints")
    parser.add_argument("--reps", type=int, default=11)
    parser.add_argument("--no-cluster", action="store_true", help="only what needs no server")
    parser.add_argument("--bootstrap", help="use this cluster instead of starting one")
    parser.add_argument("--metrics", action="append", default=[], help="a server's metrics URL")
    parser.add_argument("--version", default=None, help="Fluss version of the own cluster")
    parser.add_argument("--fluss-home", default=None, help="own cluster from a distribution")
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--buckets", type=int, default=8)
    parser.add_argument("--rf", type=int, default=1)
    parser.add_argument(
        "--imports", action="store_true", help="also each command's -X importtime profile"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--spin", type=int, default=0, help="N spinning processes beside the runs (a load)"
    )
    parser.add_argument(
        "--preview-only", action="store_true", help="of the cluster figures, the preview only"
    )
    parser.add_argument(
        "--baseline", default=None, help="a checkout to run the same preview from (before)"
    )
    args = parser.parse_args(argv)
    if min(args.reps, args.tables, args.buckets, args.rf) < 1:
        parser.error("--reps, --tables, --buckets and --rf must be >= 1")
    summary = run(args)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_summary(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

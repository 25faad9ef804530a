"""Smoke runs of the benchmarks that need a cluster: each bench's ``--quick`` against the
session cluster (both generations), so a change that breaks a bench breaks the build.

No figure is asserted (a quick run's numbers mean nothing): only that the bench ran to the
end, measured every method it names and printed a whole summary, and that the session
cluster is left as it was (``--drop``: the bench database is gone again). Each run is a
subprocess bounded in time.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests._testutil import pyfluss_data as pf
from tests._testutil.bench import run_bench

pytestmark = pytest.mark.slow

#: Far above a quick run (seconds); only a safety net against a hung bench.
BENCH_LIMIT_S = 240


def bench(script: str, *args: str) -> dict[str, Any]:
    out = run_bench(script, "--quick", "--json", *args, limit=BENCH_LIMIT_S)
    summary: dict[str, Any] = json.loads(out)
    return summary


def databases(bootstrap: str) -> list[str]:
    async def names() -> list[str]:
        conn = await pf.connect(bootstrap)
        try:
            return list(await conn.get_admin().list_databases())
        finally:
            await pf.close_connection(conn)

    return asyncio.run(names())


def test_poll_bench_quick(fluss_cluster: dict[str, Any], bootstrap: str) -> None:
    urls = [p["metrics_url"] for p in fluss_cluster["processes"] if p.get("metrics_url")]
    metrics = [arg for url in urls for arg in ("--metrics", url)]
    s = bench("poll.py", "--bootstrap", bootstrap, "--drop", *metrics)
    assert set(s["methods"]) == {"a", "a0", "b", "c", "c0", "s", "m", "k", "kc"}
    assert s["added_cpu"]["capacity/guided"] > 0
    assert s["reps"] >= 1 and s["bench_tables"] == 3
    assert s["metrics_endpoints"] == len(urls) and s["gather_errors"] == 0
    assert set(s["ratios"]) == {"ours/pyfluss", "ours/floor", "first/pyfluss", "first/floor"}
    assert "konsole_bench" not in databases(bootstrap)


def test_poll_busy_bench_quick(bootstrap: str) -> None:
    s = bench("poll_busy.py", "--bootstrap", bootstrap, "--drop")
    assert s["polls"] >= 1 and set(s["methods"]) == {"a", "l"}
    assert s["writer"], "the busy writer reported nothing"
    assert "konsole_bench" not in databases(bootstrap)


def test_check_bench_quick(fluss_cluster: dict[str, Any], bootstrap: str) -> None:
    run_dir = str(fluss_cluster["run_dir"])
    s = bench("check.py", "--bootstrap", bootstrap, "--run-dir", run_dir, "--drop")
    assert set(s["methods"]) == {"a", "a+", "b"}
    assert s["facts"]["check"]["tablet_servers"] == 3
    for key in ("a", "a+"):  # a look, never a failure (the pyfluss peer may fail a rep)
        assert set(s["methods"][key]["exit_codes"]) <= {0, 1}, s["methods"][key]
    assert "konsole_bench" not in databases(bootstrap)


def test_scan_bench_quick(bootstrap: str) -> None:
    s = bench("scan.py", "--bootstrap", bootstrap)
    assert s["tables"]["log_rows"] == 2000 and s["tables"]["pk_rows"] > 0
    assert s["results"] and s["ratios"] and s["export"]
    assert not [d for d in databases(bootstrap) if d.startswith("konsole_bench_scan_")]


def test_scan_find_bench_quick(bootstrap: str) -> None:
    """bench/scan.py --find (bench/_find.py): lookups against pyfluss's, a filtered scan."""
    s = bench("scan.py", "--find", "--bootstrap", bootstrap)
    assert s["ours_one"]["per_key_ms"] > 0 and s["pyfluss_one"]["per_key_ms"] > 0
    assert s["filter"]["pushdown"]["rows_matched"] == s["filter"]["no_pushdown"]["rows_matched"]
    assert not [d for d in databases(bootstrap) if d.startswith("konsole_bench_find_")]


def test_serve_bench_quick(bootstrap: str) -> None:
    """bench/serve.py's real part: the live poller's I/O path on the session cluster."""
    s = bench("serve.py", "--bootstrap", bootstrap)
    assert s["simulated"]["clusters"] == 3
    assert set(s["real"]["cpu_per_poll_s"]) == {"median", "p90", "max"}
    assert s["real"]["wall_s"]["median"] > 0


def test_storage_bench_quick(bootstrap: str) -> None:
    s = bench("storage.py", "--bootstrap", bootstrap, "--drop")
    assert s["reps"] >= 1 and set(s["median"]) == {"a", "st"}
    assert s["median"]["st"]["requests"] >= 1 and s["storage_errors"] == 0
    assert s["ratio_cpu_amortised"] > 0
    assert "konsole_bench" not in databases(bootstrap)

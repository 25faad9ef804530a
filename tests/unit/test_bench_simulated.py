"""Every benchmark has a quick mode the suite runs: the simulated ones here, the ones that
need a cluster in tests/live/test_bench_quick.py, bench/history.py in test_bench_history.py.

No figure is asserted (benchmarks are not timed tests): only that the quick run goes to the
end and prints a whole summary. A new ``bench/*.py`` fails
:func:`test_every_bench_is_smoke_run_somewhere` until it is given a smoke run.
"""

from __future__ import annotations

import json

import pytest

from tests._testutil.bench import REPO, run_bench

#: Smoke-run against the session cluster (tests/live/test_bench_quick.py).
NEEDS_CLUSTER = {"poll.py", "poll_busy.py", "check.py", "scan.py", "storage.py"}
#: Smoke-run here (history.py in test_bench_history.py).
SIMULATED = {
    "forecast.py",
    "history.py",
    "history_inserts.py",
    "serve.py",
    "startup.py",
    "ui.py",
}
#: Not benchmarks: poll_busy.py's load process (run by its quick mode), the --quick and
#: bytecode helpers.
HELPERS = {"busy_writer.py", "_quick.py", "_bytecode.py", "_find.py"}


def run(script: str, *args: str, limit: float = 120) -> str:
    return run_bench(script, *args, limit=limit)


def test_every_bench_is_smoke_run_somewhere() -> None:
    found = {p.name for p in (REPO / "bench").glob("*.py")}
    assert found == NEEDS_CLUSTER | SIMULATED | HELPERS


@pytest.mark.parametrize("script", sorted(NEEDS_CLUSTER | SIMULATED))
def test_every_bench_takes_quick(script: str) -> None:
    """Each bench imports and parses its options (no cluster needed for --help)."""
    assert "--quick" in run(script, "--help", limit=60)


def test_history_inserts_quick() -> None:
    out = run("history_inserts.py", "--quick")
    assert "importing sqlite-utils (beyond sqlite3), best of 1:" in out
    assert "plain sqlite3 (the writer's way): per poll" in out
    assert "sqlite-utils Table.insert: per poll" in out
    assert "over 100 polls" in out


def test_startup_quick_without_a_cluster() -> None:
    """The start-up figures that need no server (its cluster part is the check's and the
    preview's, run by their own smoke tests)."""
    summary = json.loads(run("startup.py", "--quick", "--no-cluster", "--json", limit=180))
    assert set(summary["light"]) == {"python", "import_click", "version", "check_help"}
    assert summary["ui"] and summary["ratios"]


def test_ui_quick() -> None:
    summary = json.loads(run("ui.py", "--quick", "--json", limit=180))
    for key in (
        "first_paint_bare_s",
        "first_paint_konsole_s",
        "first_paint_with_data_s",
        "refresh_1600_buckets_cpu_s",
    ):
        assert set(summary[key]) == {"median", "p90", "min"}, key
    assert summary["idle_seconds"] > 0
    assert summary["idle_cpu_percent"] >= 0 and summary["idle_overview_cpu_percent"] >= 0


def test_serve_quick() -> None:
    """The simulated part (no --bootstrap): polls recorded and exported, scrapes over HTTP."""
    summary = json.loads(run("serve.py", "--quick", "--json", limit=180))["simulated"]
    assert summary["clusters"] == 3 and summary["polls_per_cluster"] == 2
    for key in ("cpu_per_cluster_poll_s", "record_cpu_s", "exposition_cpu_s", "scrape_s"):
        assert set(summary[key]) == {"median", "p90", "max"}, key
    assert summary["scrape_series"] > 0 and summary["process_cpu_percent"] > 0


def test_forecast_quick_prints_each_series_and_the_bar() -> None:
    out = run("forecast.py", "--quick")
    assert "flat then rising" in out and "rising then faster" in out
    assert "bar: follow <= 10 polls" in out

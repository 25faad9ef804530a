"""Smoke run of bench/history.py (``--quick``: 3 hours through the real recorder).

No figure is asserted (benchmarks are not timed tests): only that every poll went through
the recorder, every resolution level was reached and the summary is whole.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_history_bench_quick_mode_runs_through_every_level() -> None:
    out = subprocess.run(
        [sys.executable, "bench/history.py", "--quick", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["polls_written"] == 3 * 360
    assert 0 < summary["polls_kept"] < summary["polls_written"]  # retention downsampled
    assert set(summary["offsets_by_level"]) == {"level 0", "level 1", "level 2"}
    assert summary["events_written"] > 0 and summary["events_kept"] == summary["events_written"]
    assert summary["file_bytes"] > 0 and 0 < summary["ratio_file_to_naive"] < 1

"""Running a benchmark script's quick mode as a subprocess (the smoke tests of bench/)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["REPO", "run_bench"]

REPO = Path(__file__).resolve().parents[2]


def run_bench(script: str, *args: str, limit: float) -> str:
    """``bench/<script> args`` from the repository root, bounded by ``limit`` seconds; its
    stdout. A non-zero exit fails the test with the end of its stderr. ``FLUSS_BOOTSTRAP``
    is not passed on: a bench names its cluster itself."""
    env = {k: v for k, v in os.environ.items() if k != "FLUSS_BOOTSTRAP"}
    out = subprocess.run(
        [sys.executable, f"bench/{script}", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=limit,
        env=env,
        check=False,
    )
    assert out.returncode == 0, f"{script} {args}: exit {out.returncode}\n{out.stderr[-3000:]}"
    print(out.stderr[-2000:])  # the bench's own log, shown with -rP
    return out.stdout

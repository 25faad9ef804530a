"""The konsole command line run as users run it: a subprocess of this interpreter,
``python -m konsole.cli ARGS``, its output captured as text, bounded in time."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["REPO", "run_konsole"]

REPO = Path(__file__).resolve().parents[2]


def run_konsole(
    *args: str,
    timeout: float = 120,
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO,
) -> subprocess.CompletedProcess[str]:
    """``konsole ARGS`` to its end (or ``timeout``, which raises); never checked: the
    caller reads the exit code."""
    return subprocess.run(
        [sys.executable, "-m", "konsole.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=None if env is None else dict(env),
        timeout=timeout,
        check=False,
    )

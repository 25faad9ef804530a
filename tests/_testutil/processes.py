"""Ending a child process a test started: SIGTERM, a bounded wait, then SIGKILL."""

from __future__ import annotations

import subprocess
from typing import Any

__all__ = ["terminate"]


def terminate(proc: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """Ask ``proc`` to stop, and kill it if it has not within ``grace`` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)

"""A console following `konsole record`'s history takes the file over when the recorder is
killed, against the session cluster of each server generation.

`konsole record` (a subprocess) records the cluster into a history file; the console (the
app, headless) opens the same file, finds the writer lock held and follows it. The recorder
is killed with SIGKILL (the kernel drops its lock): within a bounded time the console takes
the lock, says "recorder gone: polling here" in its status bar, writes a
``history_taken_over`` event with its own pid, and its own successful polls of the real
cluster land in the file. Every wait is bounded; everything listens on loopback only.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from konsole.collect.history.takeover import TAKEN_OVER
from konsole.collect.profiles import resolve_profile
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import LiveFeed
from konsole.ui.state import HistoryMode
from konsole.ui.widgets.status_bar import StatusBar
from store import lock_holder
from tests._testutil.console import until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.timeout(180),
]

KONSOLE = [str(Path(sys.executable).parent / "konsole")]


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _polls(path: Path, *, after_ms: int = 0) -> int:
    """Successful polls recorded after ``after_ms`` (epoch ms); 0 before the schema is."""
    try:
        found = _rows(path, f"SELECT count(*) FROM polls WHERE ok = 1 AND at_ms > {int(after_ms)}")
    except sqlite3.OperationalError:  # no polls table yet: the recorder is starting
        return 0
    return int(found[0][0])  # type: ignore[call-overload]


async def test_the_console_takes_over_when_the_recorder_is_killed(
    bootstrap: str, tmp_path: Path
) -> None:
    path = tmp_path / "history.sqlite"
    record = subprocess.Popen(
        [*KONSOLE, "record", "--bootstrap", bootstrap, "--history", str(path), "--interval", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The recorder first: a console that finds the file free records it itself.
        for _ in range(600):  # bounded: 60 s
            if path.exists() and lock_holder(path) == record.pid and _polls(path) >= 1:
                break
            assert record.poll() is None, record.stderr.read() if record.stderr else ""
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("konsole record did not record a poll within 60 s")
        app = KonsoleApp(LiveFeed(resolve_profile(bootstrap=bootstrap), path, interval=1.0))
        async with app.run_test(size=(160, 40)) as pilot:

            def following() -> bool:
                state = app.live_state
                return (
                    state is not None
                    and state.history.mode is HistoryMode.FOLLOWING
                    and state.last_ok is not None
                )

            await until(pilot, "the console follows the recorder", following, 60)
            record.send_signal(signal.SIGKILL)
            record.wait(timeout=30)
            killed_ms = int(_rows(path, "SELECT max(at_ms) FROM polls")[0][0])  # type: ignore[call-overload]

            def taken() -> bool:
                state = app.live_state
                return state is not None and state.history.note == TAKEN_OVER

            await until(pilot, "the console takes the file", taken, 30)
            state = app.live_state
            assert state is not None and state.history.mode is HistoryMode.RECORDING
            assert lock_holder(path) == os.getpid()
            await pilot.pause()
            bar = str(app.screen.query_one(StatusBar).render())
            assert f"recording · {TAKEN_OVER}" in bar, bar
            await until(
                pilot,
                "the console's own polls in the file",
                lambda: _polls(path, after_ms=killed_ms) >= 2,
                30,
            )
    finally:
        if record.poll() is None:
            record.kill()
            record.wait(timeout=30)
    rows = _rows(path, "SELECT details FROM events WHERE kind = 'history_taken_over'")
    assert len(rows) == 1
    details = json.loads(str(rows[0][0]))
    assert details["details"]["pid"] == os.getpid()
    assert str(record.pid) in details["details"]["followed"]

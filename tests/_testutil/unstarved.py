"""Elapsed time that a test run starved of CPU can honestly bound.

The tests without a server run at nice 19 beside the live shards (load 15-30 on 2 cores):
a thread there can wait seconds for a slice, so a wall-clock bound on "answered at once"
or "timed out after 0.3 s" fails for the machine's sake, not the code's. The kernel counts
that wait: the run delay in ``/proc/thread-self/schedstat`` (time runnable but not
running). :class:`Stopwatch` gives wall time minus the run delay of the thread that reads
it. Time blocked on a socket, a FIFO or a timer is not run delay, so a hang still counts in
full. The code measured must run on this thread (CliRunner; asyncio fakes on this loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import IO, TypeVar

_SCHEDSTAT = Path("/proc/thread-self/schedstat")
T = TypeVar("T")


def run_delay() -> float:
    """Seconds this thread has waited for a CPU since it started (0.0 without schedstat)."""
    try:
        return int(_SCHEDSTAT.read_text().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


class Stopwatch:
    """Started when made; :meth:`elapsed` is the wall time since, less this thread's wait
    for a CPU in that time."""

    def __init__(self) -> None:
        self._wall = time.monotonic()
        self._delay = run_delay()

    def wall(self) -> float:
        return time.monotonic() - self._wall

    def elapsed(self) -> float:
        return self.wall() - (run_delay() - self._delay)


#: The bound on a child process a test runs (subprocess ``timeout=``): it only has to
#: catch a child that never ends. At nice 19 beside the live tests a child Python took
#: over 5 s just to start and import (issue 40), so bounds of 10-30 s could be missed; the
#: suite's own bound per test (300 s) stays above.
CHILD_SAFETY_NET_S = 240.0


def run_child(
    args: list[str], *, timeout: float, **popen: object
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``args`` to its end (text output captured) and return it with its main thread's
    wait for a CPU in seconds, read from the ended child's ``/proc/PID/schedstat`` before
    it is reaped (a zombie keeps it). A child started on a starved machine waits for a
    slice from its fork on, before it can answer anything: a bound on its wall time less
    that wait is what its own code is responsible for. ``timeout``: the safety net."""
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,  # type: ignore[call-overload]
    )
    out: dict[str, str] = {}

    def drain(name: str, stream: IO[str]) -> None:
        out[name] = stream.read()

    readers = [
        threading.Thread(target=drain, args=(name, stream), daemon=True)
        for name, stream in (("stdout", proc.stdout), ("stderr", proc.stderr))
    ]
    for reader in readers:
        reader.start()
    delay = 0.0
    try:
        _wait_unreaped(proc.pid, timeout)
        with contextlib.suppress(OSError, ValueError, IndexError):
            delay = int(Path(f"/proc/{proc.pid}/schedstat").read_text().split()[1]) / 1e9
    finally:
        if proc.poll() is None and not _ended(proc.pid):
            proc.kill()
        proc.wait()
        for reader in readers:
            reader.join(timeout=10)
    done = subprocess.CompletedProcess(
        args, proc.returncode, out.get("stdout", ""), out.get("stderr", "")
    )
    return done, delay


def _ended(pid: int) -> bool:
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None


def _wait_unreaped(pid: int, timeout: float) -> None:
    """Wait (at most ``timeout`` s, in bounded steps) until ``pid`` has ended, leaving it
    unreaped; raises TimeoutError past the bound."""
    deadline = time.monotonic() + timeout
    while not _ended(pid):
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(str(pid), timeout)
        time.sleep(0.01)


async def wait_for_unstarved(aw: Awaitable[T], seconds: float, *, wall_cap: float) -> T:
    """``aw``'s result once done, cancelled after it has had ``seconds`` of this thread's
    time (wall time less its waits for a CPU) or ``wall_cap`` of wall time, whichever comes
    first; then TimeoutError. asyncio.wait_for counts the waits too: at nice 19 beside the
    live tests a run of 2 s once took over 15 s of wall time."""
    task = asyncio.ensure_future(aw)
    watch = Stopwatch()
    while not task.done() and watch.elapsed() < seconds and watch.wall() < wall_cap:
        await asyncio.wait([task], timeout=min(0.5, seconds))
    if not task.done():
        where = awaiting(task.get_coro())  # a hang names the await it is stuck in
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        raise TimeoutError(
            f"not done after {watch.elapsed():.1f} s of its own time ({watch.wall():.1f} s "
            f"wall); it was waiting in:\n" + "\n".join(where)
        )
    return task.result()


def awaiting(coro: object, *, depth: int = 60) -> list[str]:
    """The chain of awaits a suspended coroutine is in, outermost first: ``file:line in
    function`` per coroutine, then the object at the bottom (a future, a task)."""
    chain: list[str] = []
    for _ in range(depth):
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            chain.append(repr(coro)[:300])
            break
        chain.append(f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}")
        inner = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
        if inner is None:
            break
        coro = inner
    return chain

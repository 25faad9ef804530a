"""A guard against client threads left spinning by a test: the pytest process samples its
own threads' CPU time twice, about a second apart, and names every thread that burned
more than half a core in between.

Why: a pyfluss writer whose records can no longer be delivered (its cluster stopped) keeps
its tokio sender task looping with no pause, for the rest of the process. Such a thread
starves the whole test session, and nothing fails where it was leaked. The guard makes the
module that leaked it fail (see ``tests/conftest.py``).

Pure part (tested without I/O or sleeps): :func:`parse_stat` reads one
``/proc/<pid>/task/<tid>/stat`` line, :func:`spinning` decides from two samples. The
impure part, :func:`sample` and :func:`check`, reads ``/proc/self/task`` (Linux only;
elsewhere it samples nothing and so never fails).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "SPIN_SHARE",
    "THREAD_PATTERN",
    "Spinning",
    "ThreadTime",
    "check",
    "parse_stat",
    "sample",
    "spinning",
]

#: Threads the guard watches: tokio's runtime workers (pyfluss' Rust side names them so).
THREAD_PATTERN: Final = re.compile(r"tokio")
#: A watched thread busier than this share of one core between the samples fails the run.
SPIN_SHARE: Final = 0.5
#: On a loaded machine a spinning thread gets less than half a core: one that was runnable
#: ("R") at both samples and still got this share is counted as spinning too.
RUNNABLE_SHARE: Final = 0.2
SAMPLE_GAP_S: Final = 1.0


@dataclass(frozen=True)
class ThreadTime:
    """One thread's name (``comm``, at most 15 characters), CPU time in clock ticks and
    scheduler state ("R" running or runnable, "S" sleeping, ...)."""

    tid: int
    name: str
    ticks: int  # utime + stime
    state: str = "S"


@dataclass(frozen=True)
class Spinning:
    """A watched thread that burned ``share`` of a core between two samples."""

    tid: int
    name: str
    share: float

    def __str__(self) -> str:
        return f"thread {self.name!r} (tid {self.tid}) used {self.share:.0%} of a core"


def parse_stat(tid: int, line: str) -> ThreadTime:
    """A ``stat`` line: ``pid (comm) state ...``, utime and stime being fields 14 and 15.

    ``comm`` may hold spaces and parentheses, so it runs to the *last* ``)``. A line that is
    not of this shape raises ValueError naming the thread.
    """
    open_at, close_at = line.find("("), line.rfind(")")
    fields = line[close_at + 1 :].split()
    # fields[0] is field 3 (state), so utime (14) and stime (15) are fields[11] and [12].
    times = fields[11:13]
    if open_at < 0 or close_at < open_at or len(times) < 2 or not all(map(str.isdigit, times)):
        raise ValueError(f"thread {tid}: not a /proc stat line: {line[:80]!r}")
    return ThreadTime(tid, line[open_at + 1 : close_at], int(times[0]) + int(times[1]), fields[0])


def spinning(
    before: Mapping[int, ThreadTime],
    after: Mapping[int, ThreadTime],
    elapsed_s: float,
    ticks_per_s: int,
    *,
    main_tid: int,
    share: float = SPIN_SHARE,
    runnable_share: float = RUNNABLE_SHARE,
    pattern: re.Pattern[str] = THREAD_PATTERN,
) -> list[Spinning]:
    """Watched threads (not the main one, name matching ``pattern``) alive in both samples
    whose CPU time grew by more than ``share`` of ``elapsed_s`` (or by ``runnable_share``
    when runnable at both samples: a loaded machine); busiest first. When none
    did but all of them together did, one entry (tid 0) names them together: a pyfluss
    connection retrying against a stopped cluster spreads its churn over its threads."""
    if elapsed_s <= 0 or ticks_per_s <= 0:
        raise ValueError(f"elapsed_s and ticks_per_s must be > 0: {elapsed_s}, {ticks_per_s}")
    used: dict[int, float] = {}
    runnable: set[int] = set()
    for tid, now in after.items():
        then = before.get(tid)
        if then is None or tid == main_tid or not pattern.search(now.name):
            continue
        used[tid] = (now.ticks - then.ticks) / ticks_per_s / elapsed_s
        if then.state == now.state == "R":
            runnable.add(tid)
    found = [
        Spinning(tid, after[tid].name, u)
        for tid, u in used.items()
        if u > share or (tid in runnable and u > runnable_share)
    ]
    if not found and sum(used.values()) > share:
        names = "+".join(sorted({after[tid].name for tid in used}))
        found = [Spinning(0, f"{len(used)} threads {names} together", sum(used.values()))]
    return sorted(found, key=lambda s: -s.share)


def sample(tasks: Path = Path("/proc/self/task")) -> dict[int, ThreadTime]:
    """Every thread of this process now; a thread that ends while being read is left out."""
    times = {}
    try:
        entries = list(tasks.iterdir())
    except OSError:
        return {}
    for entry in entries:
        try:
            times[int(entry.name)] = parse_stat(int(entry.name), (entry / "stat").read_text())
        except (OSError, ValueError):
            continue
    return times


def check(
    *,
    gap_s: float = SAMPLE_GAP_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    tasks: Path = Path("/proc/self/task"),
) -> list[Spinning]:
    """Samples, waits ``gap_s``, samples again. No watched thread at all: no wait."""
    before = sample(tasks)
    if not any(THREAD_PATTERN.search(t.name) for t in before.values()):
        return []
    started = clock()
    sleep(gap_s)
    after = sample(tasks)
    ticks = os.sysconf("SC_CLK_TCK")
    return spinning(before, after, clock() - started, ticks, main_tid=os.getpid())

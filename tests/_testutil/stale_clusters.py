"""Local clusters left running by a pytest that was killed, found and stopped at the next
session's start.

Contract: the session marks itself as the owner of every server it starts by putting
``KONSOLE_TEST_OWNER=<pid>:<start time>`` in its environment (:func:`claim`); a Java
server inherits it, so ``/proc/<pid>/environ`` names the pytest that started it (also
through a ``konsole cluster start`` subprocess). A server is *stale* when it carries the
run-dir marker (``-Dkonsole.run.dir=``) and an owner that is no longer running: that pid
is gone, or now belongs to another process (a different start time). A server without an
owner (a user's cluster, or one started before this existed) or whose environment cannot be
read, and one whose owner still runs (another engineer's pytest on this machine), is never
touched. The decision (:func:`is_stale`) is pure; :func:`sweep` does the I/O.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["OWNER_VAR", "Owner", "Server", "claim", "is_stale", "owner_in", "sweep"]

OWNER_VAR = "KONSOLE_TEST_OWNER"
_MARKER = b"-Dkonsole.run.dir="


@dataclass(frozen=True)
class Owner:
    """A process, told apart from a later one with a recycled pid by its start time."""

    pid: int
    started: int  # clock ticks after boot: field 22 of /proc/<pid>/stat

    def __str__(self) -> str:
        return f"{self.pid}:{self.started}"

    @classmethod
    def parse(cls, text: str) -> Owner | None:
        """``PID:START`` as :func:`claim` writes it; None for anything else."""
        pid, sep, started = text.partition(":")
        if not sep or not pid.isdigit() or not started.isdigit() or int(pid) <= 0:
            return None
        return cls(int(pid), int(started))


@dataclass(frozen=True)
class Server:
    """One Java server of a local cluster, as /proc shows it."""

    pid: int
    started: int  # its own start time: the pid is signalled only while it is still this
    run_dir: str
    owner: Owner | None  # None: no owner recorded, or its environment is unreadable


def owner_in(environ: bytes) -> Owner | None:
    """The owner a process's ``/proc/<pid>/environ`` (NUL-separated) names, or None."""
    prefix = f"{OWNER_VAR}=".encode()
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return Owner.parse(entry[len(prefix) :].decode("ascii", "replace"))
    return None


def is_stale(server: Server, running: Callable[[Owner], bool]) -> bool:
    """Stop it only when an owner is recorded and that owner no longer runs."""
    return server.owner is not None and not running(server.owner)


def start_time(pid: int, proc: Path = Path("/proc")) -> int | None:
    """The process's start time (clock ticks after boot), or None when it is gone."""
    try:
        fields = (proc / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # Field 22 of stat; fields[0] here is field 3 (the state).
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def running(owner: Owner, proc: Path = Path("/proc")) -> bool:
    return start_time(owner.pid, proc) == owner.started


def claim(environ: dict[str, str] | None = None) -> Owner:
    """Marks this process as the owner of the servers started from here on (through the
    environment they inherit); returns the mark."""
    started = start_time(os.getpid())
    assert started is not None, "no /proc entry for this process"
    me = Owner(os.getpid(), started)
    (os.environ if environ is None else environ)[OWNER_VAR] = str(me)
    return me


def servers(proc: Path = Path("/proc")) -> list[Server]:
    """Every live process carrying a local cluster's run-dir marker."""
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        marker = next((a for a in args if a.startswith(_MARKER)), None)
        started = start_time(int(entry.name), proc)
        if marker is None or started is None:
            continue
        try:
            owner = owner_in((entry / "environ").read_bytes())
        except OSError:
            owner = None  # another user's process: unknown, so never ours to stop
        run_dir = marker[len(_MARKER) :].decode("utf-8", "replace")
        found.append(Server(int(entry.name), started, run_dir, owner))
    return found


def stale(found: Iterable[Server], proc: Path = Path("/proc")) -> list[Server]:
    return [s for s in found if is_stale(s, lambda o: running(o, proc))]


def sweep(kill: Callable[[int, int], None] = os.kill, proc: Path = Path("/proc")) -> list[Server]:
    """Kills the servers whose owning pytest is gone; returns them. A test cluster's data
    is thrown away, so no graceful stop."""
    gone = [s for s in stale(servers(proc), proc) if start_time(s.pid, proc) == s.started]
    for server in gone:
        with contextlib.suppress(ProcessLookupError):  # it ended since the scan
            kill(server.pid, signal.SIGKILL)
    return gone

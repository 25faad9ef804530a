"""Faults struck one by one on the history file of a recording process (`konsole record`,
`konsole serve`), and the final count of its polls across the files they leave.

The process is watched through :class:`Watched`: its polls taken so far, what it said on
stderr, bounded waits. :meth:`Faults.strike` saves a consistent copy of the file, strikes,
waits for the process to say so, undoes the fault when it needs undoing (polls wait in
memory meanwhile) and waits for it to record again; :meth:`Faults.check` proves every poll
taken after each fault (but the one in flight when it struck) is in some file, each file
sound (``integrity_check``), in order, none twice.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Protocol

from tests._testutil import mounts
from tests._testutil.history_files import (
    backup,
    is_foreign_database,
    poll_seqs,
    put_foreign_database,
)

__all__ = ["WAIT_S", "Faults", "Watched", "wait_alive"]

#: The bound on each wait for the watched process. It is a safety net, not a figure: under
#: CI's load (15-30 on 2 cores) a `konsole record` child took over 30 s from its launch to
#: its third recorded poll on Fluss 1.0 (r12).
WAIT_S = 90.0


def wait_alive(
    proc: subprocess.Popen[str],
    err: list[str],
    what: str,
    check: Callable[[], bool],
    timeout: float = WAIT_S,
) -> None:
    """Until ``check()``, while ``proc`` runs (its stderr so far ``err`` in the failure)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert proc.poll() is None, f"exited: {''.join(err)}"
        assert time.monotonic() < deadline, f"not within {timeout:g}s: {what}\n{err}"
        time.sleep(0.1)


class Watched(Protocol):
    proc: subprocess.Popen[str]

    def last_recorded(self) -> int:
        """The seq of the last poll it took and recorded (or kept to record)."""
        ...

    def said(self, text: str) -> int:
        """How many of its stderr lines so far hold ``text``."""
        ...

    def taken(self) -> int:
        """Polls taken so far, recorded or kept in memory."""
        ...

    def wait(self, what: str, check: Callable[[], bool], timeout: float = WAIT_S) -> None: ...


def polls_after(run: Watched, seq: int, n: int = 3) -> None:
    run.wait(f"{n} polls recorded after poll {seq}", lambda: run.last_recorded() >= seq + n)


class Faults:
    """Applies faults one by one and keeps what the final check needs. ``on_said(name,
    undone)`` and ``on_healed(name)`` (optional) check what else the process shows: called
    once it said the fault (before any undo), and once it records again."""

    def __init__(
        self,
        run: Watched,
        path: Path,
        keep: Path,
        *,
        on_said: Callable[[str, bool], None] | None = None,
        on_healed: Callable[[str], None] | None = None,
    ) -> None:
        self.run, self.path, self.keep = run, path, keep
        self.on_said, self.on_healed = on_said, on_healed
        self.files: list[Path] = []  # files that hold polls at the end
        self.marks: list[int] = []  # the last poll recorded before each fault

    def strike(
        self,
        name: str,
        act: Callable[[], None],
        undo: Callable[[], None] | None = None,
        *,
        said: int = 1,
    ) -> None:
        """``act``; it is said; ``undo`` (polls wait in memory meanwhile); it records again."""
        run = self.run
        polls_after(run, run.last_recorded())
        before = run.said("NOT RECORDING")
        again = run.said("recording again")
        mark = run.last_recorded()
        copy = self.keep / f"before-{name}.sqlite"
        backup(self.path, copy)
        self.files.append(copy)
        self.marks.append(mark)
        act()
        run.wait(f"{name}: said", lambda: run.said("NOT RECORDING") > before)
        if self.on_said is not None:
            self.on_said(name, undo is not None)
        if undo is not None:
            taken = run.taken()
            run.wait(f"{name}: 2 polls kept in memory", lambda: run.taken() >= taken + 2)
            assert run.proc.poll() is None
            undo()
        run.wait(f"{name}: recording again", lambda: run.said("recording again") > again)
        polls_after(run, mark, 5)
        assert run.said("NOT RECORDING") == before + said  # once
        assert run.proc.poll() is None
        if self.on_healed is not None:
            self.on_healed(name)

    def on_disk(self, disk: Path, moved: Path) -> None:
        """The file deleted; moved to ``moved``; replaced by another program's database
        (said twice: replaced, then refused; never written); its directory removed; its
        file system (``disk``, a small tmpfs) filled, then freed."""
        path, run = self.path, self.run

        def take_foreign_away() -> None:
            assert run.said("another program") == 1
            assert is_foreign_database(path)  # never written
            path.unlink()

        filler: list[Path] = []
        self.strike("deleted", path.unlink)
        self.strike("moved", lambda: path.rename(moved))
        self.files.append(moved)
        self.strike("foreign", lambda: put_foreign_database(path), take_foreign_away, said=2)
        self.strike("directory", lambda: shutil.rmtree(path.parent))
        self.strike(
            "full",
            lambda: filler.append(mounts.fill(disk, limit_mb=32)),
            lambda: filler[0].unlink(),
        )
        assert run.said("disk full") >= 1

    def read_only(self, device: str, disk: Path, replaced: ExitStack) -> None:
        """The ext4 file system at ``disk`` turned read-only under the open file, then a
        good disk (a tmpfs, kept open by ``replaced``) mounted at the same place: said
        twice (the I/O error, then the file gone from the path)."""
        self.strike(
            "read-only",
            lambda: mounts.turn_read_only(device),
            lambda: replaced.enter_context(mounts.tmpfs(disk, 16 * 1024)),
            said=2,
        )
        run = self.run
        assert run.said("disk I/O error") >= 1 or run.said("read-only") >= 1

    def check(self, taken: int) -> None:
        """Every poll taken after each fault (from the one after the one in flight) up to
        ``taken`` is in a file; every file passes ``poll_seqs``'s checks."""
        found: list[int] = []
        for f in [*self.files, self.path]:
            found.extend(poll_seqs(f))
        have = set(found)
        # The poll in flight at each fault may go with it (written into the file just
        # before it was deleted, moved or filled); any other poll after it may not. Every
        # fault's own in-flight poll is excused, also within an earlier fault's range.
        in_flight = {mark + 1 for mark in self.marks}
        for mark in self.marks:
            lost = [s for s in range(mark + 2, taken + 1) if s not in have and s not in in_flight]
            assert not lost, (
                f"polls taken after the fault at {mark} missing: {lost} (faults at {self.marks})"
            )

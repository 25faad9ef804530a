"""`konsole record` against the session cluster while its history file is deleted, moved,
replaced by a foreign file, its directory removed, its file system filled, and turned
read-only under it (ext4 after an I/O error, as the kernel does with errors=remount-ro).

After each fault: the process is alive and polling, it said NOT RECORDING once (twice for
the foreign file: the file replaced, then refused), it says "recording again", and every
poll taken after the fault (but the one in flight when it struck) is in a history file
afterwards, once, in order, each file passing ``PRAGMA integrity_check``. Polls taken
before a fault that destroys a file are saved by an SQLite backup just before it, so the
check covers the whole run. The numbers are checked against `record`'s own count of polls
taken. Mounts need root (tests/_testutil/mounts.py); every wait is bounded.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

import pytest

from tests._testutil import mounts
from tests._testutil.history_faults import WAIT_S, Faults, wait_alive

pytestmark = pytest.mark.client_side(
    "the faults are in the history file under konsole; the server generation does not enter"
)

INTERVAL = "0.3"
KONSOLE = [str(Path(sys.executable).parent / "konsole")]
RECORDED = re.compile(r" poll (\d+) recorded as (\d+) ")
KEPT = re.compile(r" poll (\d+) kept in memory ")
STOPPED = re.compile(r"stopped: (\d+) poll\(s\) taken, (\d+) recorded, (\d+) not")


class Running:
    """A `konsole record --verbose` process and what it printed so far."""

    def __init__(self, cluster: dict[str, Any], path: Path) -> None:
        self.proc = subprocess.Popen(
            [
                *KONSOLE,
                "record",
                "--local",
                "--run-dir",
                str(cluster["run_dir"]),
                "--history",
                str(path),
                "--interval",
                INTERVAL,
                "--verbose",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.out: list[str] = []
        self.err: list[str] = []
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._readers = [
            threading.Thread(target=_read, args=(self.proc.stdout, self.out), daemon=True),
            threading.Thread(target=_read, args=(self.proc.stderr, self.err), daemon=True),
        ]
        for t in self._readers:
            t.start()

    def recorded(self) -> list[int]:
        return [int(m.group(1)) for line in list(self.out) if (m := RECORDED.search(line))]

    def last_recorded(self) -> int:
        return max(self.recorded(), default=0)

    def said(self, text: str) -> int:
        return sum(text in line for line in list(self.err))

    def taken(self) -> int:
        """`record --verbose` prints each poll: recorded, or kept in memory."""
        return max([self.last_recorded(), *self.kept()])

    def kept(self) -> list[int]:
        return [int(m.group(1)) for line in list(self.out) if (m := KEPT.search(line))]

    def wait(self, what: str, check: Callable[[], bool], timeout: float = WAIT_S) -> None:
        wait_alive(self.proc, self.err, what, check, timeout)

    def stop(self) -> tuple[int, int, int]:
        """SIGTERM; (taken, recorded, not recorded) from its last line."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)
        for t in self._readers:
            t.join(timeout=10)
        assert self.proc.returncode == 0, "".join(self.err)
        found = [m for line in self.err if (m := STOPPED.search(line))]
        assert found, self.err
        taken, recorded, missed = (int(g) for g in found[-1].groups())
        return taken, recorded, missed


def _read(stream: IO[str], into: list[str]) -> None:
    for line in stream:
        into.append(line)


@contextmanager
def recording(cluster: dict[str, Any], path: Path) -> Iterator[Running]:
    run = Running(cluster, path)
    try:
        yield run
    finally:
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait(timeout=30)


def check(run: Running, faults: Faults, taken: int, recorded: int, missed: int) -> None:
    faults.check(taken)
    assert missed == 0 and recorded == taken, (taken, recorded, missed)
    assert run.recorded() == list(range(1, taken + 1))


def test_record_survives_its_history_deleted_moved_replaced_removed_and_full(
    fluss_cluster: dict[str, Any], tmp_path: Path
) -> None:
    with mounts.fault_place(tmp_path) as place:
        with recording(fluss_cluster, place.path) as run:
            faults = Faults(run, place.path, tmp_path)
            faults.on_disk(place.disk, place.moved)
            taken, recorded, missed = run.stop()
        check(run, faults, taken, recorded, missed)


def test_record_survives_its_file_system_turned_read_only(
    fluss_cluster: dict[str, Any], tmp_path: Path
) -> None:
    """The disk fails and ext4 turns read-only under the open file; the operator mounts a
    good one at the same place: the polls taken meanwhile are written there."""
    disk = tmp_path / "disk"
    with mounts.ext4_image(disk, tmp_path / "disk.img") as device:
        path = disk / "h.sqlite"
        with recording(fluss_cluster, path) as run, ExitStack() as replaced:
            faults = Faults(run, path, tmp_path)
            faults.read_only(device, disk, replaced)
            taken, recorded, missed = run.stop()
            check(run, faults, taken, recorded, missed)

"""The console's recording (``LiveFeed``, which records through the same recorder as
`konsole record`) against the session cluster while its history file is deleted, moved,
replaced by another program's database, its directory removed and its tmpfs filled; and
(a second test) its ext4 file system turned read-only under it, as the kernel does after an
I/O error with ``errors=remount-ro``, until a good disk is mounted at the same place.

After each fault the feed goes on publishing polls, its history status says why it is not
recording (the status bar's ``NOT RECORDING``) and then clears, and every poll published
after the fault (but the one in flight) is in a history file at the end, each file passing
``PRAGMA integrity_check``. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from konsole.collect.profiles import profile_from_local
from konsole.ui.feed import LiveFeed
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.status_bar import status_text
from tests._testutil import mounts
from tests._testutil.history_faults import WAIT_S
from tests._testutil.history_files import backup, poll_seqs, put_foreign_database

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.client_side(
        "the faults are in the history file under konsole; the server generation does not enter"
    ),
]

INTERVAL = 0.3


class Watch:
    def __init__(self, seen: list[ConsoleState]) -> None:
        self.seen = seen

    def last_seq(self) -> int:
        return max((s.snapshot.seq for s in self.seen if s.snapshot is not None), default=0)

    async def until(self, what: str, check: Callable[[], bool], timeout: float = WAIT_S) -> None:
        try:
            async with asyncio.timeout(timeout):
                while not check():
                    await asyncio.sleep(0.05)
        except TimeoutError:
            raise AssertionError(f"not within {timeout:g}s: {what}") from None

    async def polls(self, n: int = 3) -> None:
        start = self.last_seq()
        await self.until(f"{n} polls after {start}", lambda: self.last_seq() >= start + n)


async def test_the_console_keeps_recording_through_faults_of_its_history(
    fluss_cluster: dict[str, Any], tmp_path: Path
) -> None:
    with mounts.fault_place(tmp_path) as place:
        disk, path, moved = place.disk, place.path, place.moved
        seen: list[ConsoleState] = []
        watch = Watch(seen)
        feed = LiveFeed(profile_from_local(fluss_cluster), path, interval=INTERVAL)
        task = asyncio.create_task(feed.run(seen.append))
        files: list[Path] = [moved]
        marks: list[int] = []
        filler: list[Path] = []

        faults: list[tuple[str, Callable[[], None], Callable[[], None] | None]] = [
            ("deleted", path.unlink, None),
            ("moved", lambda: path.rename(moved), None),
            ("foreign", lambda: put_foreign_database(path), path.unlink),
            ("directory", lambda: shutil.rmtree(path.parent), None),
            (
                "full",
                lambda: filler.append(mounts.fill(disk, limit_mb=32)),
                lambda: filler[0].unlink(),
            ),
        ]
        try:
            await watch.polls()
            for name, act, undo in faults:
                await watch.polls()
                marks.append(watch.last_seq())
                files.append(tmp_path / f"before-{name}.sqlite")
                backup(path, files[-1])
                start = len(seen)
                act()
                if undo is not None:
                    await watch.until(
                        f"{name}: not recording",
                        lambda s=start: any(x.history.reason for x in seen[s:]),
                    )
                    blocked = next(x for x in seen[start:] if x.history.reason)
                    assert "NOT RECORDING" in status_text(blocked).plain
                    await watch.polls(2)  # polls wait in memory
                    undo()
                    start = len(seen)
                await watch.polls(3)
                last = seen[-1]
                assert not last.history.reason, (name, last.history)
                assert "recording" in status_text(last).plain
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        end = watch.last_seq()
        have: set[int] = set()
        for f in [*files, path]:
            have.update(poll_seqs(f))
        for mark in marks:
            lost = [s for s in range(mark + 2, end + 1) if s not in have]
            assert not lost, f"polls after the fault at {mark} missing: {lost}"
        kinds = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            found = [k for (k,) in kinds.execute("SELECT kind FROM events")]
        finally:
            kinds.close()
        assert "history_trouble" in found


async def test_the_console_keeps_recording_through_its_disk_turned_read_only(
    fluss_cluster: dict[str, Any], tmp_path: Path
) -> None:
    disk = tmp_path / "disk"
    with mounts.ext4_image(disk, tmp_path / "disk.img") as device, ExitStack() as replaced:
        path = disk / "h.sqlite"
        seen: list[ConsoleState] = []
        watch = Watch(seen)
        feed = LiveFeed(profile_from_local(fluss_cluster), path, interval=INTERVAL)
        task = asyncio.create_task(feed.run(seen.append))
        before = tmp_path / "before-read-only.sqlite"
        try:
            await watch.polls()
            mark = watch.last_seq()
            backup(path, before)
            start = len(seen)
            mounts.turn_read_only(device)
            await watch.until(
                "read-only: not recording",
                lambda: any(x.history.reason for x in seen[start:]),
            )
            blocked = next(x for x in seen[start:] if x.history.reason)
            assert "NOT RECORDING" in status_text(blocked).plain
            await watch.polls(3)  # polling goes on; the polls wait in memory
            replaced.enter_context(mounts.tmpfs(disk, 16 * 1024))  # a good disk, same place
            await watch.until("recording again", lambda: not seen[-1].history.reason)
            await watch.polls(3)
            assert "recording" in status_text(seen[-1]).plain
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        end = watch.last_seq()
        # Said once: one stretch of NOT RECORDING from the fault to the good disk.
        flags = [bool(x.history.reason) for x in seen[start:]]
        stretches = sum(1 for a, b in zip([False, *flags], flags, strict=False) if b and not a)
        assert stretches == 1, [x.history.reason for x in seen[start:]]
        have = set(poll_seqs(before)) | set(poll_seqs(path))
        lost = [s for s in range(mark + 2, end + 1) if s not in have]
        assert not lost, f"polls after the fault at {mark} missing: {lost}"
        kinds = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            troubles = kinds.execute(
                "SELECT count(*) FROM events WHERE kind = 'history_trouble'"
            ).fetchone()[0]
        finally:
            kinds.close()
        assert troubles == 1

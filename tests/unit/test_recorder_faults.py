"""The history under the recorder's feet: deleted, moved, replaced, its directory removed,
and the wall clock moving back (read-only and full file systems, which need mounts:
tests/system/test_recorder_mounts.py).

Each test checks that the recorder says so once, keeps every poll it can (in memory while
nothing can be written), writes them in order and once each when it can, never writes into
a file that is not a konsole history, and leaves every file sound (``integrity_check``).
"""

from __future__ import annotations

import itertools
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

import konsole.collect.history.recorder as recorder_module
from store import HistoryWriter, open_writer
from store.retention import RetentionPolicy
from tests._testutil.builders import T0
from tests._testutil.history_files import poll_seqs as seqs
from tests._testutil.judging import JudgingRecorder
from tests._testutil.recorder_rig import Rig, kinds, poll


def test_a_deleted_file_is_noticed_and_recreated_with_the_next_poll(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    rig = Rig(path)
    rig.polls(3)
    path.unlink()
    assert rig.polls(3) == [1, 2, 3]  # a new file, from its first poll
    assert len(rig.troubles) == 1 and "deleted" in rig.troubles[0]
    assert rig.said[-1].startswith("recording again")
    assert [e.kind.value for e in rig.events] == ["history_trouble"]
    rig.r.close()
    assert seqs(path) == [4, 5, 6]
    assert "history_trouble" in kinds(path)
    assert rig.r.status.polls_missed == 0 and rig.r.status.polls_recorded == 6


def test_a_commit_into_a_file_deleted_meanwhile_is_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite commits into the unlinked file without an error: the check after the commit
    sees it, and the poll goes into the new file."""
    path = tmp_path / "h.sqlite"
    rig = Rig(path)
    rig.polls(2)
    writer = rig.writer
    check = writer.check_place

    def deleted_during_commit(committed: int | None) -> None:
        if committed is not None:
            path.unlink(missing_ok=True)
        check(committed)

    monkeypatch.setattr(writer, "check_place", deleted_during_commit)
    rig.polls(2)
    rig.r.close()
    assert seqs(path) == [3, 4]  # poll 3 went with the deleted file, then here again
    assert len(rig.troubles) == 1


def test_a_moved_file_keeps_its_polls_and_the_path_gets_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, moved = tmp_path / "h.sqlite", tmp_path / "moved.sqlite"
    rig = Rig(path)
    rig.polls(2)
    writer = rig.writer
    check = writer.check_place

    def moved_during_commit(committed: int | None) -> None:
        if committed is not None and not moved.exists():
            path.rename(moved)
        check(committed)

    monkeypatch.setattr(writer, "check_place", moved_during_commit)
    rig.polls(3)
    rig.r.close()
    # poll 3 was committed before the move was seen: it stays there, written once
    assert seqs(moved) == [1, 2, 3]
    assert seqs(path) == [4, 5]
    assert "moved away" in rig.troubles[0] and len(rig.troubles) == 1
    assert rig.committed == [1, 2, 3, 4, 5]


def test_a_file_replaced_by_another_history_is_written_on(tmp_path: Path) -> None:
    path, other = tmp_path / "h.sqlite", tmp_path / "other.sqlite"
    rig = Rig(path)
    rig.polls(2)
    with open_writer(other) as w:
        from konsole.collect.history.rows import poll_record

        w.record(poll_record(poll(0, t=T0 - 100)))
    os.replace(other, path)
    rig.polls(2)
    rig.r.close()
    assert seqs(path) == [0, 3, 4]
    assert "replaced by another file" in rig.troubles[0]


def test_a_foreign_file_put_in_its_place_is_never_written(tmp_path: Path) -> None:
    path, foreign = tmp_path / "h.sqlite", tmp_path / "foreign.sqlite"
    rig = Rig(path)
    rig.polls(2)
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE mine (x)")
    conn.close()
    before = foreign.read_bytes()
    os.replace(foreign, path)
    assert rig.polls(3) == [None, None, None]
    assert path.read_bytes() == before  # untouched
    assert rig.r.status.polls_waiting == 3 and not rig.r.status.recording
    assert "another program" in rig.troubles[-1]
    assert len(rig.troubles) == 2  # replaced (seen once), then refused (said once)
    path.unlink()
    assert rig.polls(1)[0] is not None
    rig.r.close()
    assert seqs(path) == [3, 4, 5, 6]


def test_a_removed_directory_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / "dir" / "h.sqlite"
    rig = Rig(path)
    rig.polls(2)
    shutil.rmtree(path.parent)
    rig.polls(2)
    rig.r.close()
    assert seqs(path) == [3, 4]
    assert "directory was removed" in rig.troubles[0] and len(rig.troubles) == 1


def test_polls_wait_in_memory_up_to_the_bound_then_the_oldest_are_dropped(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite"
    rig = Rig(path, backlog_polls=3)
    rig.polls(1)
    path.unlink()
    path.mkdir()  # a directory where the file was: cannot be opened
    rig.polls(5)
    assert rig.r.status.polls_waiting == 3 and rig.r.status.polls_missed == 2
    assert sum("lost" in s for s in rig.said) == 1  # said at the first loss
    path.rmdir()
    rig.polls(1)  # 4 makes room for it: never more than 3 in memory
    rig.r.close()
    assert seqs(path) == [5, 6, 7]  # the oldest dropped, the rest in order, once each
    assert rig.r.status.polls_missed == 3 and rig.r.status.polls_recorded == 4


def clock_run(
    path: Path,
    monkeypatch: pytest.MonkeyPatch,
    steps: dict[int, float],
    polls: int,
    policy: RetentionPolicy | None = None,
) -> tuple[list[int], list[int], list[str]]:
    """A poll every 10 s of an injected monotonic clock, the wall clock stepped by
    ``steps[n]`` seconds before poll n, retention every 30 s: the polls' times, the
    presents retention ran at, what was said."""
    wall, mono = [T0], [100.0]
    ran: list[int] = []
    retain: Callable[..., object] = recorder_module.apply_retention

    def counting(writer: HistoryWriter, policy: object, now_ms: int) -> object:
        ran.append(now_ms)
        return retain(writer, policy, now_ms)

    monkeypatch.setattr(recorder_module, "apply_retention", counting)
    said: list[str] = []
    r = JudgingRecorder(
        path,
        policy=policy,
        say=said.append,
        clock=lambda: wall[0],
        monotonic=lambda: mono[0],
        retention_every_s=30,
    )
    r.open()
    for n in range(1, polls + 1):
        wall[0] += steps.get(n, 0.0)
        r.record(poll(n, t=wall[0]))
        wall[0] += 10
        mono[0] += 10
    r.close()
    conn = sqlite3.connect(path)
    at = [a for (a,) in conn.execute("SELECT at_ms FROM polls ORDER BY id")]
    conn.close()
    return at, ran, said


def test_the_wall_clock_moving_back_neither_reorders_polls_nor_trips_retention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the wall clock steps back an hour before poll 5
    at, ran, said = clock_run(tmp_path / "h.sqlite", monkeypatch, {5: -3600}, 12)
    assert all(b - a == 10_000 for a, b in itertools.pairwise(at)), at
    assert sum("wall clock moved back" in s for s in said) == 1
    # retention every 30 s of the timeline, at its present, also after the step back
    assert len(ran) == 4 and ran == sorted(ran)
    assert all(b - a == 30_000 for a, b in itertools.pairwise(ran)), ran


def test_the_wall_clock_leaping_ahead_and_back_neither_reorders_nor_trips_retention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hour = 3_600_000
    # Everything older than three hours deleted: a day's leap would delete it all.
    policy = RetentionPolicy(full_ms=hour, minute_ms=2 * hour, hour_ms=3 * hour)
    # A day ahead before poll 5, put right before poll 9.
    path = tmp_path / "h.sqlite"
    at, ran, said = clock_run(path, monkeypatch, {5: 86_400, 9: -86_400}, 16, policy)
    assert seqs(path) == list(range(1, 17))  # none deleted, in order, sound
    assert at == sorted(set(at)), at
    # Poll times follow the wall clock ahead, then go on from there (never back).
    assert at[4] - at[3] == 86_410_000
    assert all(b - a == 10_000 for a, b in itertools.pairwise(at[4:]))
    assert sum("jumped ahead" in s for s in said) == 1
    assert sum("wall clock moved back" in s for s in said) == 1
    # Retention every 30 s of real time, at a present that never leapt.
    assert ran == sorted(ran) and all(b - a == 30_000 for a, b in itertools.pairwise(ran)), ran
    assert ran[-1] - ran[0] <= 160_000


def test_a_leap_that_stays_is_taken_as_the_time_after_the_settle_time() -> None:
    mono = [0.0]
    pace = recorder_module.Pace(lambda: mono[0], settle_s=60)
    assert pace.present(1_000_000) == (1_000_000, 0)
    mono[0] = 10
    assert pace.present(1_000_000 + 10_000 + 500_000) == (1_010_000, 500_000)
    mono[0] = 69
    assert pace.present(1_000_000 + 69_000 + 500_000)[0] == 1_069_000  # still held
    mono[0] = 71
    assert pace.present(1_000_000 + 71_000 + 500_000) == (1_571_000, 0)  # settled: the time
    # A step back after that is a jump too: held back, the present goes on at its pace.
    mono[0] = 81
    assert pace.present(1_000_000 + 81_000)[0] == 1_581_000

"""The spinning-thread guard's pure part: reading /proc stat lines and the decision."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._testutil.thread_guard import ThreadTime, check, parse_stat, sample, spinning

# A real line's shape: pid (comm) state ppid ... utime(14) stime(15) ...
TOKIO = "4242 (tokio-rt-worker) R 4000 4000 1 0 -1 4194368 12 0 0 0 1500 230 0 0 20 0 9 0"


def line(tid: int, comm: str, utime: int, stime: int) -> str:
    return f"{tid} ({comm}) S 1 1 1 0 -1 4194368 5 0 0 0 {utime} {stime} 0 0 20 0 9 0"


def times(*threads: tuple[int, str, int]) -> dict[int, ThreadTime]:
    return {tid: ThreadTime(tid, name, ticks) for tid, name, ticks in threads}


def test_a_stat_line_gives_the_name_and_user_plus_system_ticks() -> None:
    assert parse_stat(4242, TOKIO) == ThreadTime(4242, "tokio-rt-worker", 1730, "R")


def test_a_name_with_spaces_and_parentheses_runs_to_the_last_parenthesis() -> None:
    parsed = parse_stat(7, line(7, "odd (name) x", 3, 4))
    assert (parsed.name, parsed.ticks) == ("odd (name) x", 7)


@pytest.mark.parametrize("bad", ["", "7 tokio R 1", "7 (tokio) R 1 2 3", "7 (t) R" + " x" * 20])
def test_a_line_of_another_shape_is_a_clear_error(bad: str) -> None:
    with pytest.raises(ValueError, match="thread 7"):
        parse_stat(7, bad)


def test_a_tokio_thread_busier_than_half_a_core_is_named() -> None:
    before = times((1, "python", 0), (2, "tokio-rt-worker", 100), (3, "tokio-rt-worker", 100))
    after = times((1, "python", 500), (2, "tokio-rt-worker", 198), (3, "tokio-rt-worker", 140))
    (found,) = spinning(before, after, 1.0, 100, main_tid=1)
    assert (found.tid, found.name, found.share) == (2, "tokio-rt-worker", pytest.approx(0.98))
    assert "tokio-rt-worker" in str(found) and "tid 2" in str(found) and "98%" in str(found)


def test_half_a_core_or_less_passes() -> None:
    before = times((2, "tokio-rt-worker", 0))
    assert spinning(before, times((2, "tokio-rt-worker", 50)), 1.0, 100, main_tid=1) == []
    assert spinning(before, times((2, "tokio-rt-worker", 51)), 1.0, 100, main_tid=1) != []


def test_threads_that_together_burn_more_than_half_a_core_are_named_together() -> None:
    before = times((2, "tokio-rt-worker", 0), (3, "tokio-rt-worker", 0), (4, "python", 0))
    after = times((2, "tokio-rt-worker", 30), (3, "tokio-rt-worker", 25), (4, "python", 90))
    (found,) = spinning(before, after, 1.0, 100, main_tid=1)
    assert (found.tid, found.share) == (0, pytest.approx(0.55))
    assert found.name == "2 threads tokio-rt-worker together"
    quiet = times((2, "tokio-rt-worker", 30), (3, "tokio-rt-worker", 20))
    assert spinning(before, quiet, 1.0, 100, main_tid=1) == []


def test_on_a_loaded_machine_a_thread_runnable_at_both_samples_counts_from_a_fifth() -> None:
    def runnable(ticks: int, state: str = "R") -> dict[int, ThreadTime]:
        return {2: ThreadTime(2, "tokio-rt-worker", ticks, state)}

    assert [s.tid for s in spinning(runnable(0), runnable(25), 1.0, 100, main_tid=1)] == [2]
    assert spinning(runnable(0), runnable(19), 1.0, 100, main_tid=1) == []
    assert spinning(runnable(0, "S"), runnable(25), 1.0, 100, main_tid=1) == []
    assert spinning(runnable(0), runnable(25, "S"), 1.0, 100, main_tid=1) == []


def test_the_share_is_per_second_of_the_gap() -> None:
    before = times((2, "tokio-rt-worker", 0))
    after = times((2, "tokio-rt-worker", 120))
    assert spinning(before, after, 2.0, 100, main_tid=1)[0].share == pytest.approx(0.6)
    assert spinning(before, after, 3.0, 100, main_tid=1) == []


def test_the_main_thread_other_names_and_new_threads_are_not_watched() -> None:
    before = times((1, "tokio-main", 0), (2, "python", 0))
    after = times((1, "tokio-main", 100), (2, "python", 100), (3, "tokio-rt-worker", 900))
    assert spinning(before, after, 1.0, 100, main_tid=1) == []


def test_busiest_first_and_a_custom_pattern() -> None:
    before = times((2, "a-worker", 0), (3, "b-worker", 0))
    after = times((2, "a-worker", 60), (3, "b-worker", 90))
    found = spinning(before, after, 1.0, 100, main_tid=1, pattern=re.compile("worker"))
    assert [s.tid for s in found] == [3, 2]


def test_a_gap_of_no_time_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="elapsed_s"):
        spinning({}, {}, 0.0, 100, main_tid=1)


def test_sample_reads_task_directories_and_skips_what_vanished(tmp_path: Path) -> None:
    (tmp_path / "10").mkdir()
    (tmp_path / "10" / "stat").write_text(line(10, "tokio-rt-worker", 5, 6))
    (tmp_path / "11").mkdir()  # a thread that ended between listing and reading
    assert sample(tmp_path) == {10: ThreadTime(10, "tokio-rt-worker", 11, "S")}
    assert sample(tmp_path / "missing") == {}


def test_check_does_not_wait_when_no_watched_thread_runs(tmp_path: Path) -> None:
    (tmp_path / "10").mkdir()
    (tmp_path / "10" / "stat").write_text(line(10, "python", 5, 6))
    waits: list[float] = []
    assert check(sleep=waits.append, tasks=tmp_path) == []
    assert waits == []
    (tmp_path / "11").mkdir()  # a tokio thread: now it samples twice, a gap apart
    (tmp_path / "11" / "stat").write_text(line(11, "tokio-rt-worker", 5, 6))
    assert check(sleep=waits.append, tasks=tmp_path, gap_s=0.5) == []
    assert waits == [0.5]

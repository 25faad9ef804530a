"""The stopwatch that bounds "answered at once" on a starved test run (no sleeps: the
kernel's counters and the clock are stood in for)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests._testutil import unstarved


def test_run_delay_is_the_second_field_of_schedstat_in_seconds(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stat = tmp_path / "schedstat"
    stat.write_text("931237 2500000000 7\n")  # ns on a CPU, ns waiting for one, slices
    monkeypatch.setattr(unstarved, "_SCHEDSTAT", stat)
    assert unstarved.run_delay() == 2.5


def test_without_schedstat_nothing_is_taken_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(unstarved, "_SCHEDSTAT", tmp_path / "absent")
    assert unstarved.run_delay() == 0.0


def test_the_elapsed_time_leaves_out_the_wait_for_a_cpu_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stat = tmp_path / "schedstat"
    now = [100.0]
    monkeypatch.setattr(unstarved, "_SCHEDSTAT", stat)
    monkeypatch.setattr(unstarved.time, "monotonic", lambda: now[0])
    stat.write_text("0 1000000000 1\n")
    watch = unstarved.Stopwatch()
    # 7 s pass, 6 of them waiting for a CPU (starved), 1 blocked or running
    now[0] += 7.0
    stat.write_text("0 7000000000 2\n")
    assert (watch.wall(), watch.elapsed()) == (7.0, 1.0)
    # a hang: 30 s more, none of it waiting for a CPU, all of it counts
    now[0] += 30.0
    assert watch.elapsed() == 31.0


async def _hangs_in_here(never: asyncio.Event) -> None:
    await never.wait()


async def _calls_the_hang(never: asyncio.Event) -> None:
    await _hangs_in_here(never)


async def test_a_hung_run_is_cancelled_and_named_by_the_awaits_it_hangs_in() -> None:
    never = asyncio.Event()
    with pytest.raises(TimeoutError) as caught:
        await unstarved.wait_for_unstarved(_calls_the_hang(never), 0.05, wall_cap=5)
    text = str(caught.value)
    assert text.startswith("not done after 0.")
    lines = text.split("waiting in:\n", 1)[1].splitlines()
    assert [line.rsplit(" in ", 1)[-1] for line in lines[:3]] == [
        "_calls_the_hang",
        "_hangs_in_here",
        "wait",
    ]
    assert lines[0].startswith(__file__)
    assert "Future" in lines[-1]  # the bottom: what nobody completed


def test_this_kernel_counts_the_wait() -> None:
    # The suite's machine has schedstat; without it every bound would be the wall clock.
    assert unstarved._SCHEDSTAT.exists()
    assert len(unstarved._SCHEDSTAT.read_text().split()) == 3


@pytest.mark.timeout(7)
def test_a_tight_bound_is_raised_only_in_a_starved_run(request: pytest.FixtureRequest) -> None:
    """tests/conftest.py: at nice 10 or more (make test's run beside the live shards) a
    per-test bound under 120 s becomes 120 s; otherwise it stays as written."""
    from tests.conftest import STARVED_NICENESS, STARVED_TEST_BOUND_S

    mark = request.node.get_closest_marker("timeout")
    assert mark is not None
    starved = os.nice(0) >= STARVED_NICENESS
    assert mark.args[0] == (STARVED_TEST_BOUND_S if starved else 7)


def test_the_session_compiled_our_packages_as_an_install_would() -> None:
    """tests/conftest.py compiles konsole, fluss_proto and store at the session's start: a
    `konsole check` a test starts reads bytecode instead of compiling every module again
    (under PYTHONDONTWRITEBYTECODE), as an installed konsole does."""
    import importlib.util

    import fluss_proto.client
    import konsole.cli.check
    import store.file_kinds

    for module in (konsole.cli.check, fluss_proto.client, store.file_kinds):
        assert module.__file__ is not None
        assert Path(importlib.util.cache_from_source(module.__file__)).exists(), module

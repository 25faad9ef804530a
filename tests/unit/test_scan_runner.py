"""The scan runner's worker tasks: a worker cancelled before it ever ran leaves no trace."""

from __future__ import annotations

import asyncio
import gc
import warnings

from fluss_proto.scan.runner import Deadline, Runner


async def test_a_worker_cancelled_before_it_ran_is_closed_without_a_never_awaited_warning() -> None:
    started: list[int] = []

    async def work() -> None:
        started.append(1)

    runner = Runner(Deadline(5.0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runner.spawn([], work())
        await runner.cancel_all()  # before the loop gave the task its first step
        await asyncio.sleep(0)  # the done callbacks run
        runner.tasks.clear()  # the last reference to the task and its coroutines
        gc.collect()
    assert started == []
    assert not [w for w in caught if "never awaited" in str(w.message)], caught


async def test_a_worker_that_ran_is_left_as_it_ended() -> None:
    done: list[int] = []

    async def work() -> None:
        done.append(1)

    runner = Runner(Deadline(5.0))
    runner.spawn([], work())
    await runner.run()
    assert done == [1]

"""Bounded waits for live tests: poll a coroutine until its answer is what is wanted."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["until"]

T = TypeVar("T")


async def until(
    probe: Callable[[], Awaitable[T]],
    done: Callable[[T], bool],
    what: str,
    timeout: float = 60.0,
    step: float = 0.5,
) -> T:
    """Call ``probe`` every ``step`` seconds until ``done`` holds (bounded by time and
    count); fail naming ``what`` and the last answer."""
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout / step) + 1):
        value = await probe()
        if done(value) or time.monotonic() > deadline:
            break
        await asyncio.sleep(step)
    assert done(value), f"{what} within {timeout:g}s: last {value!r}"
    return value

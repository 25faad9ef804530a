"""Bounded waits for tests: poll a probe until its answer is what is wanted (a coroutine
with :func:`until`, a plain function with :func:`wait_until`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["until", "wait_until"]

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


def wait_until(
    probe: Callable[[], T],
    done: Callable[[T], bool],
    what: str,
    timeout: float = 60.0,
    step: float = 0.25,
) -> T:
    """:func:`until` for a plain function, in a thread or synchronous test."""
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout / step) + 1):
        value = probe()
        if done(value) or time.monotonic() > deadline:
            break
        time.sleep(step)
    assert done(value), f"{what} within {timeout:g}s: last {value!r}"
    return value

"""Stopping a long-running command cleanly: SIGINT and SIGTERM end the body, not the process.

``watch``, ``record`` and ``preview`` run their work through :func:`run_until_signalled`,
so Ctrl-C or a service manager's SIGTERM stops them between or during a poll (or a scan)
and they still release connections and files, and report which signal it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["run_until_signalled"]


async def run_until_signalled(
    body: Callable[[asyncio.Event], Coroutine[Any, Any, None]],
) -> signal.Signals | None:
    """Run ``body(stop)`` until it returns or SIGINT / SIGTERM sets ``stop``.

    A signal in the middle of a poll cancels the body instead of waiting for the poll (a
    poll bounded by its timeout can still take seconds). The handlers are removed after.
    Returns the signal that stopped the body (None when it returned by itself).
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = []
    received: list[signal.Signals] = []

    def stopped(sig: signal.Signals) -> None:
        received.append(sig)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stopped, sig)
            handled.append(sig)
    task = asyncio.create_task(body(stop))
    stopper = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    finally:
        stopper.cancel()
        for sig in handled:
            loop.remove_signal_handler(sig)
    return received[0] if received else None

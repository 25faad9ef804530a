"""Closing a pyfluss connection without leaving its sender task spinning.

What pyfluss does (its Rust writer, read in its sources and measured): ``close()`` and
dropping the connection both put the connection's sender into a shutdown drain that loops
until no batch is left, without ever polling the sends already in flight. With a send in
flight and a batch queued behind it, that loop never ends and never pauses: a tokio thread
burns a core for the rest of the process, whether the cluster is up or gone. ``close()``
itself waits without a bound, and cancelling that wait leaves the loop running.

So a connection that wrote is *flushed* first (the normal sender loop, which does poll its
sends; bounded), and closed only when the flush finished: then nothing is in flight and
close() ends at once, leaving no thread behind. When the flush did not finish (a server
down, the cluster gone), no way to stop the sender is left in this process: the connection
is kept referenced, never closed or dropped, so its normal loop goes on retrying (it
delivers if the server comes back; while the cluster is gone it still costs about half a
core, spread over its threads, against a whole core for the drain loop). :func:`kept`
counts those. A writer that may outlive its servers belongs in a child process that is
ended instead (the demo's producer, :mod:`konsole.localcluster.producer_child`).

Callers say which table a connection wrote to with :func:`note_written` (a flush through
any writer of a connection waits for all of its records).
"""

from __future__ import annotations

import asyncio
import contextlib

import fluss

__all__ = ["close_settled", "kept", "note_written"]

#: Per open connection (by id): one table it wrote to, for the flush before closing.
_WRITTEN: dict[int, fluss.FlussTable] = {}
#: Connections whose records were not delivered in time: kept alive, never closed.
_KEPT: list[fluss.FlussConnection] = []


def note_written(conn: fluss.FlussConnection, table: fluss.FlussTable) -> None:
    """``conn`` has written (or tried to write) through ``table``."""
    _WRITTEN[id(conn)] = table


def kept() -> int:
    """Connections kept open because their records were still undelivered at close."""
    return len(_KEPT)


async def close_settled(conn: fluss.FlussConnection, timeout_s: float) -> bool:
    """Flushes what ``conn`` wrote and closes it, each step bounded by ``timeout_s``.

    False: the flush did not finish, so ``conn`` was kept open (see the module docs).
    """
    table = _WRITTEN.pop(id(conn), None)
    if table is not None:
        writer = (
            table.new_upsert().create_writer()
            if table.has_primary_key()
            else table.new_append().create_writer()
        )
        try:
            await asyncio.wait_for(writer.flush(), timeout_s)
        except TimeoutError:
            _KEPT.append(conn)
            return False
        except fluss.FlussError:
            pass  # the records failed for good: nothing is left to send
    # Nothing in flight now, so close() ends at once; the bound is for a server that hangs.
    with contextlib.suppress(TimeoutError, fluss.FlussError):
        await asyncio.wait_for(conn.close(), timeout_s)
    return True

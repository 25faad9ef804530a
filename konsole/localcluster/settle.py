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

A :class:`SettledConnection` owns one pyfluss connection and the table written through it
last (a flush through any writer of a connection waits for all of its records, so one table
is enough): its :meth:`~SettledConnection.close_settled` is the bounded flush, then the
close. The notes live on the connection's own wrapper, so nothing is left behind when a
connection is dropped without closing, and no later connection can flush through another
one's table.
"""

from __future__ import annotations

import asyncio
import contextlib

import fluss

__all__ = ["SettledConnection", "kept"]

#: Connections whose records were not delivered in time: kept alive, never closed.
_KEPT: list[fluss.FlussConnection] = []


def kept() -> int:
    """Connections kept open because their records were still undelivered at close."""
    return len(_KEPT)


class SettledConnection:
    """A pyfluss connection that is closed only once what it wrote is flushed.

    ``get_admin`` and ``get_table`` are the connection's own; :meth:`table_for_writing`
    (or :meth:`note_written`) says which table the flush before closing goes through.
    """

    def __init__(self, conn: fluss.FlussConnection, config: fluss.Config | None = None) -> None:
        self.conn = conn
        self.config = config
        self._written: fluss.FlussTable | None = None
        #: The connection given up by :meth:`abandon` (never closed through this wrapper).
        self._abandoned: fluss.FlussConnection | None = None

    @classmethod
    async def open(cls, config: fluss.Config, timeout_s: float) -> SettledConnection:
        """A new connection, its creation bounded by ``timeout_s``."""
        return cls(await asyncio.wait_for(fluss.FlussConnection.create(config), timeout_s), config)

    async def reopen(self, timeout_s: float) -> None:
        """Go on with a new connection (same config) after this one's writer hung: a table
        written moments after its creation may never be sent to (seen on both lines), and every
        later write of that connection hangs too. The old one keeps its undelivered records,
        so it is kept referenced, never closed (module docs)."""
        if self.config is None:
            raise RuntimeError("a connection made without its config cannot be reopened")
        fresh = await asyncio.wait_for(fluss.FlussConnection.create(self.config), timeout_s)
        self.abandon()
        self.conn = fresh

    def abandon(self) -> None:
        """Give the connection up as it is (its writer hung): neither flushed nor closed,
        kept referenced (module docs); :meth:`close_settled` leaves it alone."""
        _KEPT.append(self.conn)
        self._written, self._abandoned = None, self.conn

    def get_admin(self) -> fluss.FlussAdmin:
        return self.conn.get_admin()

    async def get_table(self, path: fluss.TablePath) -> fluss.FlussTable:
        return await self.conn.get_table(path)

    async def table_for_writing(self, path: fluss.TablePath, timeout_s: float) -> fluss.FlussTable:
        """The table at ``path`` (bounded by ``timeout_s``), noted as written through."""
        table = await asyncio.wait_for(self.conn.get_table(path), timeout_s)
        self.note_written(table)
        return table

    def note_written(self, table: fluss.FlussTable) -> None:
        """This connection has written (or tried to write) through ``table``."""
        self._written = table

    async def close_settled(self, timeout_s: float) -> bool:
        """Flushes what was written and closes, each step bounded by ``timeout_s``.

        False: the flush did not finish, so the connection was kept open (module docs), or
        it was given up already (:meth:`abandon`).
        """
        if self.conn is self._abandoned:
            return False
        table, self._written = self._written, None
        if table is not None:
            writer = (
                table.new_upsert().create_writer()
                if table.has_primary_key()
                else table.new_append().create_writer()
            )
            try:
                await asyncio.wait_for(writer.flush(), timeout_s)
            except TimeoutError:
                _KEPT.append(self.conn)
                return False
            except fluss.FlussError:
                pass  # the records failed for good: nothing is left to send
        # Nothing in flight now, so close() ends at once; the bound is for a server that hangs.
        with contextlib.suppress(TimeoutError, fluss.FlussError):
            await asyncio.wait_for(self.conn.close(), timeout_s)
        return True

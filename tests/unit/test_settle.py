"""Closing a pyfluss connection only once what it wrote is flushed (fakes, no server)."""

from __future__ import annotations

import asyncio

import fluss
import pytest

from konsole.localcluster import settle


class Writer:
    def __init__(self, outcome: str) -> None:
        self.outcome = outcome

    async def flush(self) -> None:
        if self.outcome == "stuck":
            await asyncio.Event().wait()  # never set: the records are never delivered
        if self.outcome == "failed":
            raise fluss.FlussError("the records failed for good")


class Table:
    def __init__(self, outcome: str = "flushed", pk: bool = False) -> None:
        self.outcome, self.pk = outcome, pk
        self.made: list[str] = []

    def has_primary_key(self) -> bool:
        return self.pk

    def new_append(self) -> Table:
        self.made.append("append")
        return self

    def new_upsert(self) -> Table:
        self.made.append("upsert")
        return self

    def create_writer(self) -> Writer:
        return Writer(self.outcome)


class Conn:
    closed = False

    async def close(self) -> None:
        self.closed = True


def close(conn: Conn, timeout_s: float = 1.0) -> bool:
    return asyncio.run(settle.close_settled(conn, timeout_s))  # type: ignore[arg-type]


def written(conn: Conn, table: Table) -> None:
    settle.note_written(conn, table)  # type: ignore[arg-type]


def test_a_connection_that_wrote_nothing_is_closed() -> None:
    conn = Conn()
    assert close(conn) and conn.closed


@pytest.mark.parametrize("pk", [False, True])
def test_what_was_written_is_flushed_then_the_connection_closed(pk: bool) -> None:
    conn, table = Conn(), Table(pk=pk)
    written(conn, table)
    assert close(conn) and conn.closed
    assert table.made == ["upsert" if pk else "append"]
    conn.closed = False
    assert close(conn) and conn.closed and len(table.made) == 1  # flushed once: forgotten


def test_records_that_failed_for_good_leave_nothing_to_send_so_it_is_closed() -> None:
    conn = Conn()
    written(conn, Table("failed"))
    assert close(conn) and conn.closed


def test_undelivered_records_keep_the_connection_open_never_closed() -> None:
    conn, before = Conn(), settle.kept()
    written(conn, Table("stuck"))
    assert close(conn, timeout_s=0.01) is False
    assert not conn.closed
    assert settle.kept() == before + 1


def test_a_hanging_close_is_bounded() -> None:
    class Hangs(Conn):
        async def close(self) -> None:
            await asyncio.Event().wait()

    assert close(Hangs(), timeout_s=0.01)


def test_notes_are_per_connection() -> None:
    first, second, table = Conn(), Conn(), Table("stuck")
    written(first, table)
    assert close(second, timeout_s=0.01) and second.closed  # the other one's table is not its
    assert close(first, timeout_s=0.01) is False

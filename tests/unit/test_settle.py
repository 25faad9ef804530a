"""Closing a pyfluss connection only once what it wrote is flushed (fakes, no server): the
notes live on each connection's SettledConnection, never in a table shared by all."""

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


def wrap(conn: Conn | None = None) -> tuple[Conn, settle.SettledConnection]:
    conn = conn or Conn()
    return conn, settle.SettledConnection(conn)  # type: ignore[arg-type]


def close(wrapper: settle.SettledConnection, timeout_s: float = 1.0) -> bool:
    return asyncio.run(wrapper.close_settled(timeout_s))


def written(wrapper: settle.SettledConnection, table: Table) -> None:
    wrapper.note_written(table)  # type: ignore[arg-type]


def test_a_connection_that_wrote_nothing_is_closed() -> None:
    conn, wrapper = wrap()
    assert close(wrapper) and conn.closed


@pytest.mark.parametrize("pk", [False, True])
def test_what_was_written_is_flushed_then_the_connection_closed(pk: bool) -> None:
    (conn, wrapper), table = wrap(), Table(pk=pk)
    written(wrapper, table)
    assert close(wrapper) and conn.closed
    assert table.made == ["upsert" if pk else "append"]
    conn.closed = False
    assert close(wrapper) and conn.closed and len(table.made) == 1  # flushed once: forgotten


def test_records_that_failed_for_good_leave_nothing_to_send_so_it_is_closed() -> None:
    conn, wrapper = wrap()
    written(wrapper, Table("failed"))
    assert close(wrapper) and conn.closed


def test_undelivered_records_keep_the_connection_open_never_closed() -> None:
    (conn, wrapper), before = wrap(), settle.kept()
    written(wrapper, Table("stuck"))
    assert close(wrapper, timeout_s=0.01) is False
    assert not conn.closed
    assert settle.kept() == before + 1


def test_a_hanging_close_is_bounded() -> None:
    class Hangs(Conn):
        async def close(self) -> None:
            await asyncio.Event().wait()

    assert close(wrap(Hangs())[1], timeout_s=0.01)


def test_notes_are_per_connection() -> None:
    (_, first), (second_conn, second), table = wrap(), wrap(), Table("stuck")
    written(first, table)
    assert close(second, timeout_s=0.01) and second_conn.closed  # not its table
    assert close(first, timeout_s=0.01) is False


def test_a_connection_dropped_without_closing_leaves_no_note_for_another() -> None:
    table = Table("stuck")
    _, first = wrap()
    written(first, table)
    del first  # never closed: its note goes with it
    conn, second = wrap()
    assert close(second, timeout_s=0.01) and conn.closed
    assert table.made == []  # nothing was flushed through the dropped one's table


def test_the_table_for_writing_is_the_one_flushed_at_close() -> None:
    class Tables(Conn):
        def __init__(self) -> None:
            self.table = Table(pk=True)

        async def get_table(self, path: object) -> Table:
            return self.table

    conn, wrapper = wrap(Tables())
    got = asyncio.run(wrapper.table_for_writing("db.t", 1.0))  # type: ignore[arg-type]
    assert got is conn.table and conn.table.made == []
    assert close(wrapper) and conn.closed and conn.table.made == ["upsert"]


def test_reopen_keeps_the_hung_connection_and_goes_on_with_a_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[object] = []
    fresh = Conn()

    async def create(config: object) -> Conn:
        made.append(config)
        return fresh

    monkeypatch.setattr(fluss.FlussConnection, "create", create)
    hung, before = Conn(), settle.kept()
    wrapper = settle.SettledConnection(hung, config="cfg")  # type: ignore[arg-type]
    written(wrapper, Table("stuck"))
    asyncio.run(wrapper.reopen(1.0))
    assert made == ["cfg"] and wrapper.conn is fresh
    assert settle.kept() == before + 1 and not hung.closed
    assert close(wrapper) and fresh.closed  # the hung table is not flushed through the new one


def test_a_connection_without_its_config_cannot_be_reopened() -> None:
    _, wrapper = wrap()
    with pytest.raises(RuntimeError, match="config"):
        asyncio.run(wrapper.reopen(1.0))


def test_an_abandoned_connection_is_kept_and_has_nothing_left_to_flush() -> None:
    (conn, wrapper), before = wrap(), settle.kept()
    table = Table("stuck")
    written(wrapper, table)
    wrapper.abandon()
    assert settle.kept() == before + 1 and not conn.closed
    assert close(wrapper, timeout_s=0.01) is False  # given up: neither flushed nor closed
    assert table.made == [] and not conn.closed

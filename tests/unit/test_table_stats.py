"""Per-table figures: rates from two polls, and the first table id (0) like any other."""

from __future__ import annotations

import pytest

from konsole.model.snapshot import ClusterSnapshot
from konsole.model.table_stats import (
    FiguresMemo,
    TableFigures,
    bucket_rates,
    table_figures,
    tables_bucket_rates,
)
from tests._testutil.builders import snap, table, view
from tests._testutil.judging import placement_of


@pytest.mark.parametrize("table_id", [0, 1, 7])
def test_every_table_id_gets_its_rate(table_id: int) -> None:
    before = snap(view(tables=[table("db.t", table_id, [(0, (0, 1), 100), (1, (1, 2), 50)])]))
    after = snap(
        view(tables=[table("db.t", table_id, [(0, (0, 1), 160), (1, (1, 2), 90)])]),
        seq=2,
        t=1010.0,
    )
    [figures] = table_figures(after, before, placement_of(after))
    assert figures.rows_per_s == pytest.approx((60 + 40) / 10)
    assert after.view is not None
    rates = bucket_rates(after.view.tables[0], after, before)
    assert rates == {(None, 0): pytest.approx(6.0), (None, 1): pytest.approx(4.0)}


def test_every_tables_bucket_rates_are_each_tables_own() -> None:
    """The whole poll's rates at once (the previous offsets read once) are bucket_rates'
    of each table: a re-created table (a new id), a truncated bucket and a new one too."""
    before = snap(
        view(
            tables=[
                table("db.a", 0, [(0, (0, 1), 100), (1, (1, 2), 50)]),
                table("db.gone", 1, [(0, (0, 1), 5)]),
                table("db.b", 2, [(0, (0, 1), 70)]),
            ]
        )
    )
    after = snap(
        view(
            tables=[
                table("db.a", 0, [(0, (0, 1), 130), (1, (1, 2), 40), (2, (2, 0), 9)]),
                table("db.gone", 3, [(0, (0, 1), 8)]),
                table("db.b", 2, [(0, (0, 1), 90)]),
            ]
        ),
        seq=2,
        t=1010.0,
    )
    assert after.view is not None
    got = list(tables_bucket_rates(after, before))
    assert [t for t, _ in got] == list(after.view.tables)
    assert [r for _, r in got] == [bucket_rates(t, after, before) for t in after.view.tables]
    assert got[0][1] == {(None, 0): pytest.approx(3.0), (None, 1): None, (None, 2): None}
    assert got[1][1] == {(None, 0): None} and got[2][1] == {(None, 0): pytest.approx(2.0)}
    assert [r for _, r in tables_bucket_rates(after, None)] == [
        {(None, 0): None, (None, 1): None, (None, 2): None},
        {(None, 0): None},
        {(None, 0): None},
    ]


def _through_a_memo(
    polls: list[ClusterSnapshot],
) -> tuple[list[list[TableFigures]], FiguresMemo]:
    """Each poll's figures from one memo (checked against table_figures'), and the memo."""
    memo = FiguresMemo()
    shown: list[list[TableFigures]] = []
    for before, after in zip([None, *polls], polls, strict=False):
        where = placement_of(after)
        got = memo.figures(after, before, where)
        assert got == table_figures(after, before, where)
        shown.append(got)
    return shown, memo


def test_the_memo_gives_table_figures_own_and_remakes_only_what_moved() -> None:
    quiet = table("db.quiet", 1, [(0, (0, 1), 100)])
    busy = [table("db.busy", 2, [(0, (0, 1), 10 * i)]) for i in range(4)]
    lost = table("db.lost", 3, [(2, (2, 0), 7)])
    polls = [
        snap(view(tables=[quiet, busy[0], lost]), seq=1, t=1000.0),
        snap(view(tables=[quiet, busy[1], lost]), seq=2, t=1010.0),
        snap(view(tables=[quiet, busy[2], lost]), seq=3, t=1015.0),  # another interval
        snap(view(tablets=(0, 1), tables=[quiet, busy[3], lost]), seq=4, t=1020.0),  # 2 gone
        snap(view(tablets=(0, 1), tables=[quiet, busy[3], lost]), seq=5, t=1030.0),
    ]
    shown, memo = _through_a_memo(polls)
    assert memo.figures(None, polls[-1], None) == [] == table_figures(None, polls[-1], None)
    # Poll 3: the quiet table (rate 0) is the same object; the busy one (a new view) is not.
    assert shown[2][0] is shown[1][0] and shown[2][1] is not shown[1][1]
    # Poll 4: server 2 is gone: every table is judged again (the lost one has no leader).
    assert shown[3][2] is not shown[2][2] and shown[3][2].offline == 1
    # Poll 5: the same views as poll 4. The quiet and lost tables (rates of 0, the same
    # previous view) are kept; the busy one stopped moving: its previous view is another.
    assert shown[4][0] is shown[3][0] and shown[4][2] is shown[3][2]
    assert shown[4][1] is not shown[3][1] and shown[4][1].rows_per_s == 0.0


def test_the_memo_keeps_a_still_table_s_figures_across_new_but_equal_values() -> None:
    def poll(seq: int, moved: int) -> ClusterSnapshot:
        still = table("db.still", 1, [(0, (0, 1), 100)])  # a new value every poll
        busy = table("db.busy", 2, [(0, (0, 1), moved)])
        return snap(view(tables=[still, busy]), seq=seq, t=1000.0 + 10 * seq)

    polls = [poll(1, 5), poll(2, 9), poll(3, 20), poll(4, 20)]
    shown, _ = _through_a_memo(polls)
    assert shown[2][0] is shown[1][0]  # still for two polls: kept though its value is new
    assert shown[2][1] is not shown[1][1]  # moved
    assert shown[3][1] is not shown[2][1] and shown[3][1].rows_per_s == 0.0  # stopped


def test_the_memo_keeps_no_tracked_object_per_table() -> None:
    """What the memo keeps between polls is a few lists and an index of ints: a poll of
    10,000 tables adds no tracked object per table for the cyclic collector to walk."""
    import gc

    def poll(seq: int) -> ClusterSnapshot:
        tables = [table(f"db.t{i}", i, [(0, (0, 1), 10 * seq + i)]) for i in range(50)]
        return snap(view(tables=tables), seq=seq, t=1000.0 + 10 * seq)

    polls = [poll(1), poll(2), poll(3)]
    _, memo = _through_a_memo(polls)
    kept = [v for v in vars(memo).values() if isinstance(v, (dict, list, tuple))]
    assert kept, "the memo keeps something between polls"
    for value in kept:
        if isinstance(value, dict):
            assert not gc.is_tracked(value), "the index holds only ints"
        else:  # a list or tuple of views or figures (the poll's own), never of tuples
            assert not any(isinstance(item, tuple) for item in value)

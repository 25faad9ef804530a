"""The Tables screen's rows as plain sequences: widths measured from the figures are the
widths of the cells made, the order is the (key, path) sort, unknown keys last."""

from __future__ import annotations

import random

import pytest

from konsole.model.table_stats import TableFigures
from konsole.ui.screens.tables.rows import arrange, table_cells, widths
from konsole.ui.screens.tables.screen import COLUMNS
from konsole.ui.widgets.grid_cells import column_widths


def _figures(count: int, seed: int) -> list[TableFigures]:
    rng = random.Random(seed)
    names = ["db", "ünïcode", "日本", "a_much_longer_database_name", "x"]
    rates = [None, 0.0, 9.94, 9.96, 10.0, 12.5, -3.2, -1234.5, 1e6, 99999.5, 0.04]
    ints = [None, 0, 1, 9, 10, 999, 1000, -5, -12345, 10**9]
    out = []
    for i in range(count):
        db = rng.choice(names)
        table = f"t{i}" + rng.choice(["", "_wide_name", "表"])
        out.append(
            TableFigures(
                path=f"{db}.{table}",
                database=db,
                table=table,
                primary_key=rng.choice([None, True, False]),
                buckets=rng.choice([1, 8, 1600, 12000]),
                partitions=rng.choice([0, 1, 2, 1234]),
                rows_per_s=rng.choice(rates),
                offset_span=rng.choice(ints),
                under_replicated=rng.choice([0, 3, 12345]),
                offline=rng.choice([0, 1, 100000]),
                error=rng.choice([None, None, "unreadable"]),
            )
        )
    return out


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("stale", [False, True])
def test_widths_are_the_widest_cells(seed: int, stale: bool) -> None:
    rng = random.Random(seed)
    figures = _figures(rng.randint(1, 40), seed)
    databases = rng.choice([[], ["empty"], ["a_very_long_empty_database_name"]])
    arranged = arrange(figures, databases, "", COLUMNS[0].sort, False, stale)
    rows = [arranged.source.cells(i) for i in range(len(arranged.source.keys))]
    assert arranged.source.widths == column_widths(rows, len(COLUMNS))
    cells = [table_cells(f, stale) for f in figures]
    assert widths(figures, []) == column_widths(cells, len(COLUMNS))


def test_widths_of_nothing() -> None:
    assert widths([], []) == [0] * len(COLUMNS)


@pytest.mark.parametrize("column", range(len(COLUMNS)))
@pytest.mark.parametrize("reverse", [False, True])
def test_order_filter_and_keys(column: int, reverse: bool) -> None:
    figures = _figures(60, column)
    sort = COLUMNS[column].sort
    arranged = arrange(figures, ["empty_db", "other"], "T1", sort, reverse, False)
    chosen = [f for f in figures if "t1" in f.path.lower()]
    known = sorted(((sort(f), f.path) for f in chosen if sort(f) is not None), reverse=reverse)
    expected = [p for _, p in known] + [f.path for f in chosen if sort(f) is None]
    assert [f.path for f in arranged.shown] == expected
    # The empty databases pass the same filter: neither holds "t1".
    assert arranged.source.keys == [f"t:{p}" for p in expected]
    everything = arrange(figures, ["empty_db"], "", sort, reverse, False)
    assert everything.source.keys[-1] == "d:empty_db"
    assert everything.source.cells(len(figures))[0] == "empty_db"

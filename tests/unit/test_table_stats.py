"""Per-table figures: rates from two polls, and the first table id (0) like any other."""

from __future__ import annotations

import pytest

from konsole.model.table_stats import bucket_rates, table_figures
from tests._testutil.builders import snap, table, view


@pytest.mark.parametrize("table_id", [0, 1, 7])
def test_every_table_id_gets_its_rate(table_id: int) -> None:
    before = snap(view(tables=[table("db.t", table_id, [(0, (0, 1), 100), (1, (1, 2), 50)])]))
    after = snap(
        view(tables=[table("db.t", table_id, [(0, (0, 1), 160), (1, (1, 2), 90)])]),
        seq=2,
        t=1010.0,
    )
    [figures] = table_figures(after, before)
    assert figures.rows_per_s == pytest.approx((60 + 40) / 10)
    assert after.view is not None
    rates = bucket_rates(after.view.tables[0], after, before)
    assert rates == {(None, 0): pytest.approx(6.0), (None, 1): pytest.approx(4.0)}

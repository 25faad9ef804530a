"""konsole.render.values: JSON values of every Arrow kind a preview can hold."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa


def test_json_values_render_every_kind() -> None:
    from fluss_proto.types import parse_data_type
    from konsole.render.values import json_values

    def ltz(p: int) -> Any:
        return parse_data_type({"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": p})

    ns = pa.array([1_700_000_000_123_456_789, -1, None], pa.timestamp("ns"))
    assert json_values(ns) == [
        "2023-11-14T22:13:20.123456789",
        "1969-12-31T23:59:59.999999999",
        None,
    ]
    assert json_values(pa.array([0], pa.timestamp("ms")), ltz(3)) == ["1970-01-01T00:00:00.000Z"]
    assert json_values(pa.array([3_723_004], pa.time32("ms"))) == ["01:02:03.004"]
    assert json_values(pa.array([Decimal("-1.50")], pa.decimal128(5, 2))) == ["-1.50"]
    assert json_values(pa.array([b"\x00\xff", None], pa.binary())) == ["AP8=", None]
    assert json_values(pa.array([float("nan"), float("-inf"), 1.5])) == ["NaN", "-Infinity", 1.5]
    lists = pa.array([[1, None], None, [], [3]], pa.list_(pa.int32())).slice(1)
    assert json_values(lists) == [None, [], [3]]
    maps = pa.array([[("a", 1)], [], None], pa.map_(pa.string(), pa.int64()))
    assert json_values(maps) == [[["a", 1]], [], None]
    rows = pa.array(
        [{"x": 1, "t": 0}, None], pa.struct([("x", pa.int8()), ("t", pa.timestamp("us"))])
    )
    assert json_values(rows) == [{"x": 1, "t": "1970-01-01T00:00:00.000000"}, None]

"""Record decoding checks: differential comparisons of a fast path with its reference, and
:data:`SCALAR_CASES`, one case per scalar type."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any

import pyarrow as pa

from fluss_proto.errors import DecodeError
from fluss_proto.records import DataType
from tests._testutil.records_encoder import Ts

# =========================================================================== decoder comparisons
# Differential tests compare a fast path with its reference (columnar vs row at a time,
# fluss_proto vs pyarrow) through these.


def _cell(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, list):
        return [_cell(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_cell(x) for x in v)
    if isinstance(v, dict):
        return {k: _cell(x) for k, x in v.items()}
    return v


def _storage_type(t: pa.DataType) -> pa.DataType:
    """``t`` with every temporal type replaced by its integer storage, so that values
    Python's datetime cannot hold (e.g. a timestamp of -2**63 ms) still compare."""
    if pa.types.is_timestamp(t) or pa.types.is_time64(t) or pa.types.is_date64(t):
        return pa.int64()
    if pa.types.is_time32(t) or pa.types.is_date32(t):
        return pa.int32()
    if pa.types.is_map(t):
        key, item = t.key_field, t.item_field
        return pa.map_(
            pa.field(key.name, _storage_type(key.type), key.nullable),
            pa.field(item.name, _storage_type(item.type), item.nullable),
        )
    if pa.types.is_list(t):
        f = t.value_field
        return pa.list_(pa.field(f.name, _storage_type(f.type), f.nullable))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _storage_type(f.type), f.nullable) for f in t])
    return t


def _values(column: pa.ChunkedArray) -> Any:
    return _cell(column.cast(_storage_type(column.type)).to_pylist())


def assert_same_table(got: pa.Table, want: pa.Table) -> None:
    """Equal schemas and values (NaN equal to NaN, as Table.equals does not do)."""
    assert got.schema == want.schema
    assert got.num_rows == want.num_rows
    for name in want.column_names:
        a, b = got.column(name), want.column(name)
        # NaN (also nested in lists, maps, structs) is compared as a value
        assert a.equals(b) or _values(a) == _values(b), (name, a, b)
    try:
        want.validate(full=True)
    except pa.ArrowInvalid:  # e.g. a TIME outside one day: pyarrow.array takes it as it is
        got.validate()
    else:
        got.validate(full=True)


def outcome(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """``("ok", table)`` or ``("error", type, message)``; only DecodeErrors are expected."""
    try:
        return ("ok", fn(*args, **kwargs))
    except DecodeError as exc:
        return ("error", type(exc), str(exc))


def assert_same_outcome(got: tuple[Any, ...], want: tuple[Any, ...]) -> None:
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        assert_same_table(got[1], want[1])
    else:
        assert got[1:] == want[1:]


# =========================================================================== record cases


T = DataType
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
I32_MIN, I32_MAX = -(2**31), 2**31 - 1

#: (type, values), one case per scalar type: every value is written, decoded and compared
#: (None = NULL). Shared by the row decoder tests and the columnar-vs-reference tests.
SCALAR_CASES: list[tuple[DataType, list[Any]]] = [
    (T("BOOLEAN"), [True, False, None]),
    (T("TINYINT"), [0, 1, -1, -128, 127, None]),
    (T("SMALLINT"), [0, -1, -32768, 32767, None]),
    (T("INTEGER"), [0, 1, 127, 128, -1, I32_MIN, I32_MAX, 300, None]),
    (T("BIGINT"), [0, 1, -1, I64_MIN, I64_MAX, 2**35, -(2**35), None]),
    (
        T("FLOAT"),
        [0.0, 1.5, -2.25, float("inf"), float("-inf"), 3.4028234663852886e38, None],
    ),
    (T("DOUBLE"), [0.0, -0.0, 1e-300, -1.7976931348623157e308, 5e-324, float("inf"), None]),
    (T("STRING"), ["", "a", "1234567", "12345678", "ünïcödé ✓ 😀", "x" * 300, None]),
    (T("CHAR", length=5), ["", "ab", "abcde", None]),
    (
        T("BYTES"),
        [b"", b"\x00", bytes(range(7)), bytes(range(8)), bytes(range(256)) * 2, None],
    ),
    (T("BINARY", length=4), [b"abcd", b"\x00\x01\x02\x03", None]),
    (
        T("DECIMAL", precision=10, scale=2),
        [Decimal("0.00"), Decimal("12.34"), Decimal("-99999999.99"), Decimal("-0.01"), None],
    ),
    (
        T("DECIMAL", precision=18, scale=0),
        [Decimal(10**18 - 1), Decimal(-(10**18) + 1), None],
    ),
    (
        T("DECIMAL", precision=38, scale=10),
        [
            Decimal("0E-10"),
            Decimal("1234567890123456789012345678.0123456789"),
            Decimal("-9999999999999999999999999999.9999999999"),
            Decimal("-0.0000000001"),
            None,
        ],
    ),
    (
        T("DECIMAL", precision=20, scale=0),
        [Decimal(-1), Decimal(2**63), Decimal(-(2**64)), Decimal(10**20 - 1)],
    ),
    (
        T("DATE"),
        [date(1970, 1, 1), date(1969, 12, 31), date(1, 1, 1), date(9999, 12, 31), None],
    ),
    (
        T("TIME", precision=3),
        [time(0), time(23, 59, 59, 999000), time(12, 0, 0, 1000), None],
    ),
    (T("TIME", precision=0), [time(1, 2, 3), None]),
    (
        T("TIMESTAMP", precision=3),
        [
            datetime(1970, 1, 1),
            datetime(2024, 2, 29, 12, 0, 0, 123000),
            datetime(1969, 12, 31, 23, 59, 59, 999000),
            datetime(1, 1, 1),
            datetime(9999, 12, 31, 23, 59, 59, 999000),
            None,
        ],
    ),
    (
        T("TIMESTAMP", precision=6),
        [datetime(2024, 1, 1, 0, 0, 0, 1), datetime(1900, 1, 1, 0, 0, 0, 999999), None],
    ),
    (
        T("TIMESTAMP", precision=9),
        [Ts(0, 999_999), Ts(-1, 1), Ts(-86_400_001, 123_456), Ts(1_704_067_200_123, 456_789)],
    ),
    (
        T("TIMESTAMP_LTZ", precision=3),
        [datetime(2024, 1, 1, tzinfo=UTC), datetime(1960, 6, 1, 1, 2, 3, tzinfo=UTC), None],
    ),
    (T("TIMESTAMP_LTZ", precision=9), [Ts(-5, 999_999), Ts(1, 0), None]),
]

"""The writers of light rows (konsole.export.plain) write the bytes of the pyarrow writers.

The oracle is the vectorised writer (konsole.export.writers) given the same values as a
pyarrow table: one column per plain Fluss type, each cycling through its corner values
(NULL, extremes, NaN and infinities, floats near Arrow's notation switch, decimals Arrow
writes in scientific notation, dates and timestamps outside Python's range, strings that
need escaping or quoting, unicode), written in one chunk and in several.
"""

from __future__ import annotations

import io
import itertools
import struct
from typing import Any

import pyarrow as pa
import pytest

from fluss_proto.records._values import decimal_from_unscaled as _dec
from fluss_proto.records.arrow import to_arrow_type
from fluss_proto.records.rowtype import DataType
from fluss_proto.scan.rows import Rows, RowsSchema
from konsole.export.plain import PlainTextTableWriter
from konsole.export.stream import make_writer
from konsole.export.writers import TextTableWriter
from konsole.render.plain import float_text


def _f32(x: float) -> float:
    """The float32 nearest ``x`` (infinite beyond its range), widened back."""
    if abs(x) > 3.4e38:
        return x * float("inf")
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


_FLOATS = [
    0.1, -0.0, 0.0, 1e-7, 1e-6, 123.0, 1e9, 1e10, 1.5e12, 1234567890.5, 5e-324,
    1.7976931348623157e308, float("nan"), float("inf"), float("-inf"), -2.5e-8, None,
]  # fmt: skip
_STRINGS = [
    "plain", "", 'quo"te', "back\\slash", "new\nline", "tab\tx", "cr\rx", "ctrl\x01\x1f",
    "ünïcödé 漢字 😀", "comma,x", "trailing  ", "x" * 60, "\u2028\x7f", None, " lead",
]  # fmt: skip
_DAY = 86_400

# (name, Fluss type, corner values in the row decoders' "arrow" mode)
COLUMNS: list[tuple[str, DataType, list[Any]]] = [
    ("b", DataType("BOOLEAN"), [True, False, None]),
    ("i8", DataType("TINYINT"), [-128, 127, 0, None]),
    ("i16", DataType("SMALLINT"), [-32768, 32767, None]),
    ("i32", DataType("INTEGER"), [-(2**31), 2**31 - 1, 7, None]),
    ("i64", DataType("BIGINT"), [-(2**63), 2**63 - 1, 0, None]),
    ("f32", DataType("FLOAT"), [None if x is None else _f32(x) for x in _FLOATS]),
    ("f64", DataType("DOUBLE"), _FLOATS),
    ("s", DataType("STRING"), _STRINGS),
    ("s_full", DataType("STRING", nullable=False), [s for s in _STRINGS if s is not None]),
    ("c", DataType("CHAR", length=3), ["abc", "a\"'", None]),
    ("bin", DataType("BINARY", length=4), [b"\x00\x01\x02\x03", b"abcd", None]),
    ("bytes", DataType("BYTES"), [b"", b"\x00\xff\xfe", b"hello world", None]),
    (
        "dec",
        DataType("DECIMAL", precision=10, scale=2),
        [_dec(-150, 2), _dec(0, 2), _dec(1_234_567_890, 2), _dec(1, 2), None],
    ),
    (
        "dec_small",
        DataType("DECIMAL", precision=38, scale=10, nullable=False),
        [_dec(1, 10), _dec(-1000, 10), _dec(10**38 - 1, 10), _dec(-(10**37), 10)],
    ),
    ("dec0", DataType("DECIMAL", precision=5, scale=0), [_dec(-99999, 0), _dec(0, 0), None]),
    ("d", DataType("DATE"), [0, -1, 2_932_896, -719_162, -719_163, 2_932_897, None]),
    ("t0", DataType("TIME_WITHOUT_TIME_ZONE", precision=0), [0, _DAY - 1, 3_600, None]),
    ("t3", DataType("TIME_WITHOUT_TIME_ZONE", precision=3), [0, 1, _DAY * 1000 - 1, None]),
    ("t6", DataType("TIME_WITHOUT_TIME_ZONE", precision=6), [0, 999_999, None]),
    ("t9", DataType("TIME_WITHOUT_TIME_ZONE", precision=9), [1, _DAY * 10**9 - 1, None]),
    ("ts0", DataType("TIMESTAMP_WITHOUT_TIME_ZONE", precision=0), [0, -1, 1_700_000_000]),
    (
        "ts3",
        DataType("TIMESTAMP_WITHOUT_TIME_ZONE", precision=3),
        [0, -1, 1_700_000_000_123, 253_402_300_800_000, -62_135_596_800_001, None],
    ),
    ("ts6", DataType("TIMESTAMP_WITHOUT_TIME_ZONE", precision=6), [1, -1_000_001, None]),
    ("ts9", DataType("TIMESTAMP_WITHOUT_TIME_ZONE", precision=9), [1, -1, 10**18 + 7, None]),
    ("ltz3", DataType("TIMESTAMP_WITH_LOCAL_TIME_ZONE", precision=3), [0, -1, None]),
    ("ltz9", DataType("TIMESTAMP_WITH_LOCAL_TIME_ZONE", precision=9), [123_456_789, None]),
    ("_offset", DataType("BIGINT", nullable=False), [0, 1, 2]),
    ("_change_type", DataType("STRING", nullable=False), ["+A", "-U"]),
    ("_bucket", DataType("INTEGER", nullable=False), [0, 3]),
]
ROWS = 17
ADDED = {"_offset", "_change_type", "_bucket"}


def _light() -> Rows:
    schema = RowsSchema(tuple(n for n, _, _ in COLUMNS), tuple(t for _, t, _ in COLUMNS))
    columns = [list(itertools.islice(itertools.cycle(v), ROWS)) for _, _, v in COLUMNS]
    return Rows(schema, columns, ROWS)


def _arrow(rows: Rows) -> pa.Table:
    fields = []
    for name, dt in zip(rows.schema.names, rows.schema.types, strict=True):
        meta = None if name in ADDED else {b"fluss.type": str(dt).encode()}
        fields.append(pa.field(name, to_arrow_type(dt), dt.nullable, metadata=meta))
    arrays = [pa.array(c, f.type) for c, f in zip(rows.columns, fields, strict=True)]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _types(rows: Rows) -> dict[str, Any]:
    return {
        n: t for n, t in zip(rows.schema.names, rows.schema.types, strict=True) if n not in ADDED
    }


def _both(fmt: str, cuts: list[int], block_rows: int | None = None) -> tuple[bytes, bytes]:
    rows = _light()
    table = _arrow(rows)
    types = _types(rows)
    out_a, out_p = io.BytesIO(), io.BytesIO()
    oracle = make_writer(fmt, out_a, table.schema, table="db.t", types=types)
    plain = make_writer(fmt, out_p, rows.schema, table="db.t", types=types)
    if block_rows is not None:
        assert isinstance(oracle, TextTableWriter) and isinstance(plain, PlainTextTableWriter)
        oracle.block_rows = plain.block_rows = block_rows
    for a, b in itertools.pairwise([0, *cuts, ROWS]):
        oracle.write(table.slice(a, b - a))
        plain.write(rows.slice(a, b - a))
    oracle.finish(None)
    plain.finish(None)
    return out_a.getvalue(), out_p.getvalue()


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "table"])
@pytest.mark.parametrize("cuts", [[], [1, 5, 16]], ids=["one-chunk", "chunks"])
def test_plain_writers_write_the_bytes_of_the_arrow_writers(fmt: str, cuts: list[int]) -> None:
    oracle, plain = _both(fmt, cuts)
    assert plain.decode() == oracle.decode()
    assert plain == oracle


def test_the_text_table_grows_its_columns_as_the_arrow_one_does() -> None:
    oracle, plain = _both("table", [2, 3, 9], block_rows=2)
    assert plain == oracle
    assert oracle.count(b"\n\n") >= 1  # the header was repeated: the case is exercised


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "table"])
def test_no_rows(fmt: str) -> None:
    rows = _light().slice(0, 0)
    table = _arrow(_light()).slice(0, 0)
    out_a, out_p = io.BytesIO(), io.BytesIO()
    types = _types(rows)
    oracle = make_writer(fmt, out_a, table.schema, table="db.t", types=types)
    plain = make_writer(fmt, out_p, rows.schema, table="db.t", types=types)
    oracle.finish(None)
    plain.finish(None)
    assert out_p.getvalue() == out_a.getvalue()


def test_float_text_is_arrows_on_many_floats() -> None:
    """Shortest digits, fixed notation for a decimal point in (-6, 10], else exponent."""
    import random

    rng = random.Random(22)
    xs = [rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30) for _ in range(3_000)]
    xs += [float(10**k) for k in range(-12, 25)] + [1.5 * 10**k for k in range(-12, 25)]
    xs += [struct.unpack("<d", rng.randbytes(8))[0] for _ in range(2_000)]
    xs = [x for x in xs if x == x and abs(x) != float("inf")]
    expected = pa.array(xs, pa.float64()).cast(pa.string()).to_pylist()
    assert [float_text(x) for x in xs] == expected


def test_binary_formats_are_not_written_from_light_rows() -> None:
    from konsole.export import ExportFormatError

    with pytest.raises(ExportFormatError, match="parquet"):
        make_writer("parquet", io.BytesIO(), _light().schema)


def test_one_factory_picks_the_writers_by_the_schema_kind() -> None:
    from konsole.export import ExportFormatError

    light = make_writer("csv", io.BytesIO(), _light().schema)
    arrow = make_writer("csv", io.BytesIO(), pa.schema([pa.field("n", pa.int64())]))
    assert type(light).__module__ == "konsole.export.plain"
    assert type(arrow).__module__ == "konsole.export.writers"
    with pytest.raises(ExportFormatError, match="unknown format 'xml' for Arrow tables"):
        make_writer("xml", io.BytesIO(), pa.schema([]))
    with pytest.raises(TypeError, match=r"RowsSchema or a pyarrow\.Schema, not dict"):
        make_writer("csv", io.BytesIO(), {"n": "BIGINT"})

"""The filter language (fluss_proto.filter): parsing, three-valued evaluation, what goes to the
server. Table-driven cases, then hypothesis: random texts give a tree or a FilterError and
nothing else; every tree reads back from its own text; what is pushed is implied by the
filter; light rows and Arrow tables keep the same rows."""

from __future__ import annotations

import contextlib
import re
from datetime import date
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fluss_proto.errors import FilterError
from fluss_proto.filter import (
    And,
    Comparison,
    InList,
    Not,
    NullTest,
    Op,
    Or,
    Predicate,
    column_refs,
    matches,
    parse_filter,
    pushdown,
    render,
    to_pb,
    truth,
)
from fluss_proto.records import to_arrow_schema
from fluss_proto.scan.filtering import filter_chunk
from fluss_proto.scan.rows import Rows, RowsSchema
from fluss_proto.types import (
    BigIntType,
    BooleanType,
    BytesType,
    Column,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    Schema,
    StringType,
    TimestampType,
    TimeType,
)

#: The hypothesis profile's examples over the CI profile's (200): `make fuzz` runs 100x more.
SCALE = max(settings.default.max_examples / 200, 1.0)
pytestmark = pytest.mark.timeout(int(60 * SCALE))

SCHEMA = Schema(
    columns=tuple(
        Column(name, t, column_id=i)
        for i, (name, t) in enumerate(
            [
                ("id", BigIntType(nullable=False)),
                ("n", IntType()),
                ("name", StringType()),
                ("amount", DecimalType(10, 2)),
                ("ts", TimestampType(3)),
                ("ltz", LocalZonedTimestampType(6)),
                ("day", DateType()),
                ("at", TimeType(3)),
                ("flag", BooleanType()),
                ("ratio", DoubleType()),
                ("f", FloatType()),
                ("raw", BytesType()),
                ("select", StringType()),
            ]
        )
    )
)
REFS = column_refs(SCHEMA)


def parse(text: str) -> Predicate:
    return parse_filter(text, SCHEMA, schema_id=3).predicate


# ---------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("id = 5", "id = 5"),
        ("id == 5 and n <> -3", "id = 5 AND n != -3"),
        ("amount > 1000", "amount > 1000.00"),
        ("name IN ('a', 'b''c', 'a')", "name IN ('a', 'b''c')"),
        ("name not in ('x')", "name NOT IN ('x')"),
        ("ts >= '2024-06-01 10:00'", "ts >= TIMESTAMP '2024-06-01 10:00:00'"),
        ("ltz < '2024-06-01 10:00:00+02:00'", "ltz < TIMESTAMP '2024-06-01 08:00:00Z'"),
        ("day = DATE '2024-06-01'", "day = DATE '2024-06-01'"),
        ("at < TIME '10:00:00.5'", "at < TIME '10:00:00.5'"),
        ("flag = true OR flag IS NULL", "flag = TRUE OR flag IS NULL"),
        ("NOT (id < 5 OR ratio > 1e3)", "NOT (id < 5 OR ratio > 1000.0)"),
        ('"select" IS NOT NULL', "select IS NOT NULL"),
        ("`name` = 'x'", "name = 'x'"),
        ("raw = X'0aff'", "raw = X'0aff'"),
        ("(id = 1 OR id = 2) AND n = 3", "(id = 1 OR id = 2) AND n = 3"),
    ],
)
def test_the_language(text: str, rendered: str) -> None:
    assert render(parse(text)) == rendered


@pytest.mark.parametrize(
    ("text", "position", "reason"),
    [
        ("", 0, "empty"),
        ("id = ", 5, "expected a value"),
        ("id = 1 junk", 7, "expected AND, OR or the end"),
        ("(id = 1", 7, "expected ')'"),
        ("nope = 1", 0, "no column 'nope'"),
        ("id = NULL", 5, "IS NULL"),
        ("name = 5", 7, "quote the value"),
        ("id = 'x'", 5, "not an integer"),
        ("amount = 1.001", 9, "decimal place"),
        ("flag = 1", 7, "a number"),
        ("id = TRUE", 5, "a boolean"),
        ("day = TIMESTAMP '2024-01-01'", 6, "a TIMESTAMP"),
        ("id IN ()", 7, "expected a value"),
        ("id LIKE 'x'", 3, "expected a comparison"),
        ("id NOT = 1", 7, "expected IN"),
        ("name = 'open", 7, "unterminated"),
        ("raw = X'abc'", 6, "hexadecimal"),
        ("id = 1 # x", 7, "unexpected character"),
        ("and = 1", 0, "keyword"),
        ("NOT " * 70 + "id = 1", 256, "nested deeper"),
    ],
)
def test_a_bad_filter_is_one_line_with_its_position(text: str, position: int, reason: str) -> None:
    with pytest.raises(FilterError, match=re.escape(reason)) as info:
        parse(text)
    assert info.value.position == position
    assert "\n" not in str(info.value)
    assert f"at character {position + 1}:" in str(info.value)


def test_nested_types_cannot_be_filtered() -> None:
    schema = Schema(
        columns=(Column("tags", __import__("fluss_proto.types").types.ArrayType(IntType())),)
    )
    with pytest.raises(FilterError, match="only plain types"):
        parse_filter("tags = 1", schema)


# ---------------------------------------------------------------------------- evaluation


def test_three_valued_logic() -> None:
    cols = {"n": [None, 1, 5], "name": ["a", None, "b"]}
    assert truth(parse("n > 2"), cols, 3) == [None, False, True]
    assert truth(parse("NOT n > 2"), cols, 3) == [None, True, False]
    assert truth(parse("n > 2 OR name = 'a'"), cols, 3) == [True, None, True]
    assert truth(parse("n > 2 AND name = 'a'"), cols, 3) == [None, False, False]
    assert truth(parse("n IN (1, 2)"), cols, 3) == [None, True, False]
    assert truth(parse("n NOT IN (1, 2)"), cols, 3) == [None, False, True]
    assert truth(parse("n IS NULL"), cols, 3) == [True, False, False]
    assert matches(parse("NOT (n > 2 AND name = 'a')"), cols, 3) == [False, True, True]


def _rows_and_table(values: dict[str, list[Any]], n: int) -> tuple[Rows, pa.Table]:
    light = RowsSchema.of_table(SCHEMA)
    rows = Rows(light, [values[name] for name in light.names], n)
    arrow = to_arrow_schema(SCHEMA)
    table = pa.Table.from_arrays([pa.array(values[f.name], f.type) for f in arrow], schema=arrow)
    return rows, table


def test_light_rows_and_arrow_tables_keep_the_same_rows() -> None:
    values: dict[str, list[Any]] = {
        "id": [1, 2, 3],
        "n": [10, None, 30],
        "name": ["a", "b", None],
        "amount": [Decimal("1.00"), Decimal("1000.01"), None],
        "ts": [0, 1_700_000_000_000, None],
        "ltz": [0, None, 5],
        "day": [0, 19_000, None],
        "at": [0, 1000, None],
        "flag": [True, False, None],
        "ratio": [0.5, None, 2.0],
        "f": [0.5, 0.25, None],
        "raw": [b"\x00", None, b"\xff"],
        "select": ["x", "y", "z"],
    }
    rows, table = _rows_and_table(values, 3)
    for text in [
        "amount > 1000",
        "ts >= '2023-01-01' OR day IS NULL",
        "NOT flag = true",
        "raw = X'ff' OR ratio < 1",
        "at >= TIME '00:00:01'",
    ]:
        p = parse(text)
        light = filter_chunk(p, rows)
        heavy = filter_chunk(p, table)
        assert light.columns[0] == heavy.column("id").to_pylist(), text


# ---------------------------------------------------------------------------- the server's part


def test_pushdown_takes_not_inwards_and_drops_what_statistics_cannot_test() -> None:
    assert render(pushdown(parse("NOT (id < 5 OR name IN ('a'))"))) == (
        "id >= 5 AND name NOT IN ('a')"
    )
    assert render(pushdown(parse("id = 1 AND raw = X'00'"))) == "id = 1"  # no BYTES stats
    assert pushdown(parse("id = 1 OR raw = X'00'")) is None  # an OR must keep every child
    assert render(pushdown(parse("NOT NOT n IS NULL"))) == "n IS NULL"


def test_the_wire_form_is_flusss_predicate_message() -> None:
    p = pushdown(
        parse("amount > 12.5 AND ts < '1970-01-01 00:00:01.5' AND day IN (DATE '1970-01-02')")
    )
    assert p is not None
    msg = to_pb(p)
    assert msg.type == 1 and msg.compound.function == 0
    amount, ts, day = msg.compound.children
    assert (amount.leaf.function, amount.leaf.field_id) == (4, 3)
    assert (
        amount.leaf.literals[0].literal_type == 9 and amount.leaf.literals[0].decimal_value == 1250
    )
    lit = ts.leaf.literals[0]
    assert (lit.literal_type, lit.timestamp_millis_value, lit.timestamp_nano_of_millis_value) == (
        12,
        1500,
        0,
    )
    assert day.leaf.function == 11 and day.leaf.literals[0].bigint_value == 1
    null_test = to_pb(parse("n IS NOT NULL"))
    assert null_test.leaf.function == 7 and not null_test.leaf.literals


def test_a_big_decimal_goes_as_bytes() -> None:
    schema = Schema(columns=(Column("big", DecimalType(30, 0), column_id=4),))
    p = parse_filter("big = -128", schema).predicate
    lit = to_pb(p).leaf.literals[0]
    assert lit.decimal_bytes == b"\x80" and not lit.HasField("decimal_value")


# ---------------------------------------------------------------------------- hypothesis

EPOCH_DAYS = (
    date(1, 1, 1).toordinal() - date(1970, 1, 1).toordinal(),
    date(9999, 12, 31).toordinal() - date(1970, 1, 1).toordinal(),
)
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "id": st.integers(-(2**63), 2**63 - 1),
    "n": st.integers(-(2**31), 2**31 - 1),
    "name": st.text(max_size=8),
    "amount": st.integers(-(10**10) + 1, 10**10 - 1).map(lambda u: Decimal(u).scaleb(-2)),
    "ts": st.integers(EPOCH_DAYS[0] * 86_400_000, EPOCH_DAYS[1] * 86_400_000),
    "ltz": st.integers(EPOCH_DAYS[0] * 86_400_000_000, EPOCH_DAYS[1] * 86_400_000_000),
    "day": st.integers(*EPOCH_DAYS),
    "at": st.integers(0, 86_399_999),
    "flag": st.booleans(),
    "ratio": st.floats(allow_nan=False, allow_infinity=False),
    "f": st.floats(width=32, allow_nan=False, allow_infinity=False),
    "raw": st.binary(max_size=4),
    "select": st.text(max_size=4),
}


@st.composite
def leaves(draw: st.DrawFn) -> Predicate:
    name = draw(st.sampled_from(sorted(VALUES)))
    ref = REFS[name]
    kind = draw(st.sampled_from(["cmp", "null", "in"]))
    if kind == "null":
        return NullTest(ref, draw(st.booleans()))
    if kind == "in":
        values = draw(st.lists(VALUES[name], min_size=1, max_size=3, unique=True))
        return InList(ref, tuple(values), draw(st.booleans()))
    return Comparison(ref, draw(st.sampled_from(list(Op))), draw(VALUES[name]))


def _compound(children: st.SearchStrategy[Predicate]) -> st.SearchStrategy[Predicate]:
    def build(kind: type, parts: list[Predicate]) -> Predicate:
        flat: list[Predicate] = []
        for p in parts:  # as the parser builds them: no AND directly under an AND
            flat.extend(p.children if isinstance(p, kind) else (p,))  # type: ignore[attr-defined]
        return kind(tuple(flat))

    return st.one_of(
        st.builds(build, st.sampled_from([And, Or]), st.lists(children, min_size=2, max_size=3)),
        children.map(Not),
    )


TREES = st.recursive(leaves(), _compound, max_leaves=8)


@given(TREES)
def test_every_tree_reads_back_from_its_own_text(p: Predicate) -> None:
    assert parse(render(p)) == p


@given(TREES, st.data())
def test_what_is_pushed_is_implied_by_the_filter(p: Predicate, data: st.DataObject) -> None:
    pushed = pushdown(p)
    assume(pushed is not None)
    assert pushed is not None
    n = 8
    columns = {
        name: data.draw(st.lists(st.one_of(st.none(), VALUES[name]), min_size=n, max_size=n))
        for name in VALUES
    }
    for kept, also in zip(truth(p, columns, n), truth(pushed, columns, n), strict=True):
        if kept is True:
            assert also is True


@given(st.text(max_size=60))
def test_any_text_gives_a_tree_or_a_filter_error(text: str) -> None:
    try:
        parse(text)
    except FilterError as exc:
        assert exc.position is None or 0 <= exc.position <= len(text)


@given(TREES, st.integers(0, 200), st.text(max_size=3))
def test_mutated_filters_give_a_tree_or_a_filter_error(p: Predicate, at: int, junk: str) -> None:
    text = render(p)
    cut = at % (len(text) + 1)
    with contextlib.suppress(FilterError):
        parse(text[:cut] + junk + text[cut + 1 :])

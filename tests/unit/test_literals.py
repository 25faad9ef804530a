"""Values typed by a column (fluss_proto.literals): what an operator types, read exactly."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any

import pytest

from fluss_proto.errors import InputError, LiteralError
from fluss_proto.literals import column_value, internal_value, type_text
from fluss_proto.records.rowtype import DataType

pytestmark = pytest.mark.timeout(30)

D = DataType
TS3 = D("TIMESTAMP_WITHOUT_TIME_ZONE", precision=3)
TS9 = D("TIMESTAMP_WITHOUT_TIME_ZONE", precision=9)
LTZ6 = D("TIMESTAMP_WITH_LOCAL_TIME_ZONE", precision=6)
DEC = D("DECIMAL", precision=10, scale=2)


@pytest.mark.parametrize(
    ("dt", "given", "value"),
    [
        (D("BOOLEAN"), "TRUE", True),
        (D("BOOLEAN"), False, False),
        (D("TINYINT"), "-128", -128),
        (D("BIGINT"), " 9223372036854775807 ", 2**63 - 1),
        (D("DOUBLE"), "1e3", 1000.0),
        (D("FLOAT"), "0.1", 0.10000000149011612),  # as stored: 32 bits
        (D("STRING"), " padded ", " padded "),
        (D("BYTES"), "0x0aFF", b"\x0a\xff"),
        (D("BINARY", length=3), "0a", b"\x0a\x00\x00"),
        (DEC, "12.5", Decimal("12.50")),
        (DEC, 7, Decimal("7.00")),
        (DEC, "-0.01", Decimal("-0.01")),
        (D("DATE"), "1970-01-02", 1),
        (D("DATE"), date(1969, 12, 31), -1),
        (D("TIME_WITHOUT_TIME_ZONE", precision=3), "00:00:01.5", 1500),
        (D("TIME_WITHOUT_TIME_ZONE", precision=0), "00:01", 60),
        (D("TIME_WITHOUT_TIME_ZONE", precision=6), time(0, 0, 0, 2000), 2000),
        (TS3, "1970-01-01 00:00:01.25", 1250),
        (TS3, "1970-01-01T00:00:01", 1000),
        (TS3, "1970-01-02", 86_400_000),
        (TS9, "1969-12-31 23:59:59.999999999", -1),
        (LTZ6, "1970-01-01 01:00:00+01:00", 0),
        (LTZ6, "1970-01-01 00:00:00.000001Z", 1),
        (LTZ6, datetime(1970, 1, 1, tzinfo=UTC), 0),
    ],
)
def test_values_read_as_their_column_holds_them(dt: DataType, given: Any, value: Any) -> None:
    assert column_value(given, dt, "c") == value


@pytest.mark.parametrize(
    ("dt", "given", "reason"),
    [
        (D("INTEGER"), "2147483648", "outside"),
        (D("INTEGER"), "1.0", "not an integer"),
        (D("INTEGER"), True, "boolean"),
        (D("BOOLEAN"), "yes", "not true or false"),
        (D("DOUBLE"), "one", "not a number"),
        (D("FLOAT"), "1e39", "outside the range of FLOAT"),
        (DEC, "1.005", "more than 2 decimal place"),
        (DEC, "123456789", "more than 10 digit"),
        (DEC, 0.5, "exact decimal"),
        (D("DATE"), "2024-02-30", "day is out of range"),
        (D("DATE"), "01/02/2024", "YYYY-MM-DD"),
        (D("TIME_WITHOUT_TIME_ZONE", precision=3), "24:00", "not a time of day"),
        (D("TIME_WITHOUT_TIME_ZONE", precision=9), "00:00:00.0000001", "millisecond"),
        (TS3, "2024-01-01 00:00:00.0001", "finer than the column"),
        (TS3, "2024-01-01 00:00:00Z", "no UTC offset"),
        (LTZ6, "2024-01-01 00:00:00+19:00", "out of range"),
        (D("BYTES"), "0xabc", "hexadecimal"),
        (D("BINARY", length=1), "0a0b", "do not fit"),
        (D("STRING"), 5, "not a string"),
        (D("ARRAY", element=D("INTEGER")), "[1]", "cannot be given"),
    ],
)
def test_a_value_that_does_not_fit_is_one_typed_line(dt: DataType, given: Any, reason: str) -> None:
    with pytest.raises(LiteralError, match=reason) as info:
        column_value(given, dt, "col")
    assert isinstance(info.value, InputError)
    assert "\n" not in str(info.value) and "'col'" in str(info.value)


def test_internal_values_are_what_fluss_rows_hold() -> None:
    assert internal_value(Decimal("-1.23"), DEC) == -123
    assert internal_value(2000, D("TIME_WITHOUT_TIME_ZONE", precision=6)) == 2
    assert internal_value(-1, TS9) == (-1, 999_999)  # floor: the millisecond before, +nanos
    assert internal_value(1_500_001, LTZ6) == (1500, 1000)
    assert internal_value(5, D("INTEGER")) == 5


def test_type_text_is_flusss() -> None:
    assert type_text(DEC) == "DECIMAL(10, 2)"
    assert type_text(D("TIMESTAMP_WITH_LOCAL_TIME_ZONE", precision=3, nullable=False)) == (
        "TIMESTAMP_LTZ(3) NOT NULL"
    )

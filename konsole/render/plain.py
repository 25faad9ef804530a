"""Value-by-value rendering of light preview rows, text for text with :mod:`.arrow`.

A light preview (:mod:`fluss_proto.scan.rows`) holds Python values in the row decoders'
``"arrow"`` mode (dates, times and timestamps as integers in their Arrow unit, DECIMAL as
``Decimal``). These functions give, per value, the exact text the vectorised functions of
:mod:`konsole.render.arrow` give for the same column, so a preview's text formats are the
same bytes with or without pyarrow (``tests/unit/test_plain_render.py`` holds them equal,
with pyarrow as the oracle):

- :func:`plain_text`: as :func:`konsole.render.arrow.plain_text` (None for NULL);
- :func:`json_text`: as :func:`konsole.render.arrow.json_text` (``null`` for NULL);
- :func:`cell_text`: as :func:`konsole.render.arrow.cell_text_array`.

Floats are written as Arrow writes them (shortest round trip, fixed notation for a decimal
point position in ``(-6, 10]``, else ``1e-7`` / ``1.5e+12``), not as Python's ``repr``.
Temporal values outside Python's date range (years before 1 or after 9999) and times
outside one day are rare; those few are rendered by pyarrow itself, imported then.
"""

from __future__ import annotations

import binascii
import json
import math
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any

from fluss_proto.records.rowtype import DataType
from konsole.render.values import CELL_WIDTH

__all__ = ["cell_text", "float_text", "json_text", "plain_text", "renderer"]

_INTEGERS = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT"})
_EPOCH = datetime(1970, 1, 1)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_DAY_S = 86_400


def _unit(precision: int) -> str:
    if precision == 0:
        return "s"
    if precision <= 3:
        return "ms"
    return "us" if precision <= 6 else "ns"


def float_text(x: float) -> str:
    """A finite or not float as Arrow casts it to a string (NaN etc. as konsole writes
    them: ``NaN``, ``Infinity``, ``-Infinity``)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    text = repr(x)  # the shortest round-trip digits, as Arrow's
    sign = "-" if text.startswith("-") else ""
    mantissa, _, exp = text.lstrip("-").partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) - (len(whole + frac) - len(digits)) + (int(exp) if exp else 0)
    digits = digits.rstrip("0")
    if not digits:
        return sign + "0"
    if -6 < point <= 10:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return sign + digits + "0" * (point - len(digits))
        return f"{sign}{digits[:point]}.{digits[point:]}"
    head = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    e = point - 1
    return f"{sign}{head}e{'+' if e >= 0 else '-'}{abs(e)}"


def _by_pyarrow(value: int, dt: DataType) -> str:
    """The rare temporal value Python's datetime cannot hold: Arrow's own text."""
    import pyarrow as pa

    from fluss_proto.records.arrow import to_arrow_type
    from konsole.render.arrow import plain_text as arrow_plain

    text = arrow_plain(pa.array([value], to_arrow_type(dt)), dt).to_pylist()[0]  # type: ignore[arg-type]  # reads dt.root only
    assert isinstance(text, str)
    return text


def _fraction(sub: int, unit: str) -> str:
    if unit == "s":
        return ""
    return "." + str(sub).zfill(len(str(_UNITS[unit])) - 1)


def _date_text(dt: DataType) -> Callable[[Any], str]:
    def text(days: int) -> str:
        try:
            day = date.fromordinal(_EPOCH_ORDINAL + days)
        except (ValueError, OverflowError):
            return _by_pyarrow(days, dt)
        return day.isoformat()

    return text


def _time_text(dt: DataType) -> Callable[[Any], str]:
    unit = _unit(dt.precision or 0)
    per = _UNITS[unit]

    def text(v: int) -> str:
        seconds, sub = divmod(v, per)
        if not 0 <= seconds < _DAY_S:
            return _by_pyarrow(v, dt)
        m, s = divmod(seconds, 60)
        h, m = divmod(m, 60)
        return f"{h:02d}:{m:02d}:{s:02d}{_fraction(sub, unit)}"

    return text


def _timestamp_text(dt: DataType) -> Callable[[Any], str]:
    unit = _unit(dt.precision if dt.precision is not None else 6)
    per = _UNITS[unit]
    zone = "Z" if dt.root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE" else ""

    def text(v: int) -> str:
        seconds, sub = divmod(v, per)
        try:
            at = _EPOCH + timedelta(seconds=seconds)
        except OverflowError:
            return _by_pyarrow(v, dt)
        if not 1 <= at.year <= 9999:  # pragma: no cover - timedelta stays in range
            return _by_pyarrow(v, dt)
        return f"{at:%Y-%m-%dT%H:%M:%S}{_fraction(sub, unit)}{zone}"

    return text


def _base64(v: bytes) -> str:
    return binascii.b2a_base64(v, newline=False).decode()


def _bool(v: bool) -> str:
    return "true" if v else "false"


def _decimal(v: Any) -> str:
    return format(v, "f")


def renderer(dt: DataType) -> Callable[[Any], str]:
    """The plain text of a non-NULL value of ``dt``."""
    root = dt.root
    if root in ("STRING", "CHAR"):
        return str
    if root == "BOOLEAN":
        return _bool
    if root in _INTEGERS:
        return str
    if root in ("FLOAT", "DOUBLE"):
        return float_text
    if root == "DECIMAL":
        return _decimal
    if root == "DATE":
        return _date_text(dt)
    if root == "TIME_WITHOUT_TIME_ZONE":
        return _time_text(dt)
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return _timestamp_text(dt)
    if root in ("BYTES", "BINARY"):
        return _base64
    raise TypeError(f"no plain rendering for {dt}")


def plain_text(values: list[Any], dt: DataType) -> list[str | None]:
    """Each value's text; NULL stays None."""
    text = renderer(dt)
    return [None if v is None else text(v) for v in values]


def _json_string(v: str) -> str:
    return json.dumps(v, ensure_ascii=False)


def _json_float(v: float) -> str:
    text = float_text(v)
    return text if math.isfinite(v) else f'"{text}"'


def json_renderer(dt: DataType) -> Callable[[Any], str]:
    """The JSON text of a non-NULL value of ``dt``."""
    root = dt.root
    if root in ("STRING", "CHAR"):
        return _json_string
    if root == "BOOLEAN" or root in _INTEGERS:
        return renderer(dt)
    if root in ("FLOAT", "DOUBLE"):
        return _json_float
    text = renderer(dt)
    return lambda v: f'"{text(v)}"'


def json_text(values: list[Any], dt: DataType) -> list[str]:
    """Each value as JSON text; NULL is ``null``."""
    text = json_renderer(dt)
    return ["null" if v is None else text(v) for v in values]


_CELL_ESCAPES = str.maketrans({"\r": "\\r", "\n": "\\n", "\t": "\\t"})


def cell_text(values: list[Any], dt: DataType) -> list[str]:
    """The text table's cells: ``NULL``, ``\\r \\n \\t`` escaped, cut at ``CELL_WIDTH``."""
    out = []
    for text in plain_text(values, dt):
        if text is None:
            out.append("NULL")
            continue
        text = text.translate(_CELL_ESCAPES)
        out.append(text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…")
    return out

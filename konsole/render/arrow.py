"""Column-wise (vectorised) rendering of Arrow data, for exports and streamed previews.

The same rules as :mod:`konsole.render.values` (which renders value by value into Python objects
for the check and the UI), computed with ``pyarrow.compute`` a whole column at a time:

- :func:`plain_text`: each value's text as CSV and the text table show it (NULL stays
  null): DECIMAL exact (``-1.50``), timestamps ISO 8601 with every digit of their unit
  (TIMESTAMP_LTZ ends in ``Z``), DATE / TIME ISO, BYTES / BINARY as base64, booleans
  ``true`` / ``false``, NaN and infinities as ``NaN`` / ``Infinity`` / ``-Infinity``,
  ARRAY / MAP / ROW as compact JSON (MAP as ``[[key, value], ...]``);
- :func:`json_text`: each value as JSON text (never null: NULL is ``null``): strings,
  decimals, timestamps, dates, times and base64 quoted; numbers and booleans bare;
- :func:`json_rows_text`: one JSON object per row (``{"col":value,...}``, compact);
- :func:`cell_text_array`: the text table's cells (``NULL``, control characters escaped,
  cut at ``CELL_WIDTH`` with an ellipsis).

One documented difference from the value-by-value path: a float's text is Arrow's
shortest round-trip form, which has the same digits as Python's ``repr`` but may write
the exponent differently (``1e-7`` for ``1e-07``, ``1.5e+12`` for ``1500000000000.0``)
and writes integral values without ``.0``; the value read back is the same float.

Python is used per value only where Arrow has no kernel: base64 (BYTES / BINARY columns),
strings holding control characters (JSON escapes), and decimals Arrow would print in
scientific notation (very small values); each on the affected values only.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from konsole.render.values import CELL_WIDTH

if TYPE_CHECKING:
    from fluss_proto.types import DataType

__all__ = [
    "cell_text_array",
    "json_rows_text",
    "json_text",
    "plain_text",
    "string_buffer",
]

_LTZ = "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
# RE2 syntax: the characters JSON must escape (besides the quote and the backslash).
_CONTROL = "[\\x00-\\x1f]"
_SPECIAL = '["\\\\\\x00-\\x1f]'  # a quote, a backslash or a control character


def _array(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def _join(*parts: Any) -> pa.Array:
    """Element-wise concatenation (a null anywhere gives null)."""
    return pc.binary_join_element_wise(*parts, "")


def _is_ltz(dt: DataType | None) -> bool:
    return dt is not None and str(getattr(dt, "root", "")) == _LTZ


def plain_text(arr: pa.Array | pa.ChunkedArray, dt: DataType | None = None) -> pa.Array:
    """Each value's text (strings as they are, nested values as compact JSON); NULL stays
    null. ``dt`` is the Fluss type when known (it tells TIMESTAMP_LTZ apart)."""
    arr = _array(arr)
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr.cast(pa.string())
    if pa.types.is_boolean(t):
        return pc.if_else(arr, "true", "false")
    if pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_time(t):
        return arr.cast(pa.string())
    if pa.types.is_floating(t):
        return _float_text(arr)
    if pa.types.is_decimal(t):
        return _decimal_text(arr)
    if pa.types.is_timestamp(t):
        return _timestamp_text(arr, _is_ltz(dt))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return _base64(arr)
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.string())
    if _nested(t):
        return pc.if_else(arr.is_valid(), json_text(arr, dt), pa.scalar(None, pa.string()))
    return pa.array([None if v is None else str(v) for v in arr.to_pylist()], pa.string())


def json_text(arr: pa.Array | pa.ChunkedArray, dt: DataType | None = None) -> pa.Array:
    """Each value as JSON text; NULL is ``null`` (the result has no nulls)."""
    arr = _array(arr)
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        out = _json_string(arr.cast(pa.string()))
    elif pa.types.is_boolean(t) or pa.types.is_integer(t):
        out = plain_text(arr, dt)
    elif pa.types.is_floating(t):
        text = _float_text(arr)
        finite = pc.is_finite(arr).fill_null(True)
        if not pc.all(finite).as_py():  # NaN / infinities are JSON strings
            text = pc.if_else(finite, text, _join('"', text, '"'))
        out = text
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        out = _list_json(arr, getattr(dt, "element_type", None))
    elif pa.types.is_map(t):
        out = _map_json(arr, dt)
    elif pa.types.is_struct(t):
        out = _struct_json(arr, dt)
    elif pa.types.is_null(t):
        out = pa.nulls(len(arr), pa.string())
    else:  # decimals, timestamps, dates, times, base64: texts that need no escaping
        out = _join('"', plain_text(arr, dt), '"')
    return out.fill_null("null")


def _nested(t: pa.DataType) -> bool:
    return (
        pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_map(t)
        or pa.types.is_struct(t)
    )


def _float_text(arr: pa.Array) -> pa.Array:
    # float32 is widened first: its text is then the double's, as Python shows it.
    wide = arr.cast(pa.float64())
    text = wide.cast(pa.string())
    if not pc.all(pc.is_finite(wide).fill_null(True)).as_py():
        text = pc.if_else(pc.is_nan(wide), "NaN", text)
        text = pc.if_else(pc.equal(wide, float("inf")), "Infinity", text)
        text = pc.if_else(pc.equal(wide, float("-inf")), "-Infinity", text)
    return text


def _decimal_text(arr: pa.Array) -> pa.Array:
    text = arr.cast(pa.string())
    # Arrow writes small values in scientific notation (1.000E-7); those few go through
    # Python's Decimal, which writes every digit of the scale.
    sci = pc.match_substring(text, "E").fill_null(False)
    if pc.any(sci).as_py():
        fixed = [format(v, "f") for v in arr.filter(sci).to_pylist()]
        text = pc.replace_with_mask(text, sci, pa.array(fixed, pa.string()))
    return text


def _timestamp_text(arr: pa.Array, ltz: bool) -> pa.Array:
    t = arr.type
    if t.tz is not None:  # UTC instants either way; the text carries no zone but ``Z``
        arr = arr.cast(pa.timestamp(t.unit))
    text = pc.replace_substring(arr.cast(pa.string()), " ", "T", max_replacements=1)
    return _join(text, "Z") if ltz else text


def _base64(arr: pa.Array) -> pa.Array:
    return pa.array(
        [
            None if v is None else binascii.b2a_base64(v, newline=False).decode()
            for v in arr.to_pylist()
        ],
        pa.string(),
    )


def _json_string(arr: pa.Array) -> pa.Array:
    return _join('"', _json_string_body(arr), '"')


def _json_string_body(arr: pa.Array) -> pa.Array:
    """A string column's JSON text without the surrounding quotes."""
    if not pc.any(pc.match_substring_regex(arr, _SPECIAL).fill_null(False)).as_py():
        return arr  # the usual case: nothing to escape
    escaped = pc.replace_substring(arr, "\\", "\\\\")
    escaped = pc.replace_substring(escaped, '"', '\\"')
    control = pc.match_substring_regex(arr, _CONTROL).fill_null(False)
    if pc.any(control).as_py():
        exact = [json.dumps(v, ensure_ascii=False)[1:-1] for v in arr.filter(control).to_pylist()]
        escaped = pc.replace_with_mask(escaped, control, pa.array(exact, pa.string()))
    return escaped


def _quoted_body(arr: pa.Array, dt: DataType | None) -> pa.Array | None:
    """For a column without NULLs whose JSON values are all strings: their text without
    the quotes (the row writer puts the quotes into its literals, saving a pass); else
    None."""
    if arr.null_count:
        return None
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _json_string_body(arr.cast(pa.string()))
    if (
        pa.types.is_decimal(t)
        or pa.types.is_timestamp(t)
        or pa.types.is_date(t)
        or pa.types.is_time(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
    ):
        return plain_text(arr, dt)
    return None


def _sub_lists(arr: pa.Array, child_text: pa.Array, start: int) -> pa.Array:
    """``[a,b,...]`` per list from the text of its elements (child rows from ``start``)."""
    offsets = pc.subtract(arr.offsets, pa.scalar(start, arr.offsets.type))
    list_type = pa.LargeListArray if pa.types.is_large_list(arr.type) else pa.ListArray
    lists = list_type.from_arrays(offsets, child_text, mask=arr.is_null())
    return _join("[", pc.binary_join(lists, ","), "]")


def _child_range(arr: pa.Array) -> tuple[int, int]:
    offsets = arr.offsets
    if len(offsets) == 0:
        return 0, 0
    return offsets[0].as_py(), offsets[len(offsets) - 1].as_py()


def _list_json(arr: pa.Array, element: DataType | None) -> pa.Array:
    start, stop = _child_range(arr)
    child = arr.values.slice(start, stop - start)
    return _sub_lists(arr, json_text(child, element), start)


def _map_json(arr: pa.Array, dt: DataType | None) -> pa.Array:
    start, stop = _child_range(arr)
    keys = json_text(arr.keys.slice(start, stop - start), getattr(dt, "key_type", None))
    items = json_text(arr.items.slice(start, stop - start), getattr(dt, "value_type", None))
    pairs = _join("[", keys, ",", items, "]")
    return _sub_lists(arr, pairs, start)


def _struct_json(arr: pa.Array, dt: DataType | None) -> pa.Array:
    t = arr.type
    sub = {f.name: f.type for f in getattr(dt, "fields", ())}
    parts: list[Any] = []
    for i, child in enumerate(arr.flatten()):
        name = t.field(i).name
        parts.append(("{" if i == 0 else ",") + json.dumps(name, ensure_ascii=False) + ":")
        parts.append(json_text(child, sub.get(name)))
    if not parts:
        return pc.if_else(arr.is_valid(), "{}", pa.scalar(None, pa.string()))
    parts.append("}")
    return pc.if_else(arr.is_valid(), _join(*parts), pa.scalar(None, pa.string()))


def json_rows_text(
    table: pa.Table, types: Mapping[str, DataType] | None = None, *, end: str = "\n"
) -> pa.Array:
    """One compact JSON object per row, each followed by ``end``."""
    types = types or {}
    parts: list[Any] = []
    literal = "{"
    for i, name in enumerate(table.column_names):
        column = _array(table.column(i))
        literal += ("" if i == 0 else ",") + json.dumps(name, ensure_ascii=False) + ":"
        body = _quoted_body(column, types.get(name))
        if body is None:
            parts += [literal, json_text(column, types.get(name))]
            literal = ""
        else:
            parts += [literal + '"', body]
            literal = '"'
    if not parts:
        return pa.array(["{}" + end] * table.num_rows, pa.string())
    parts.append(literal + "}" + end)
    return _join(*parts)


def cell_text_array(arr: pa.Array | pa.ChunkedArray, dt: DataType | None = None) -> pa.Array:
    """The text table's cells: ``NULL``, ``\\r \\n \\t`` escaped, cut at ``CELL_WIDTH``."""
    text = plain_text(arr, dt).fill_null("NULL")
    if pc.any(pc.match_substring_regex(text, "[\\r\\n\\t]")).as_py():
        for raw, shown in (("\r", "\\r"), ("\n", "\\n"), ("\t", "\\t")):
            text = pc.replace_substring(text, raw, shown)
    long = pc.greater(pc.utf8_length(text), CELL_WIDTH)
    if pc.any(long).as_py():
        cut = _join(pc.utf8_slice_codeunits(text, 0, CELL_WIDTH - 1), "…")
        text = pc.if_else(long, cut, text)
    return text


def string_buffer(arr: pa.Array) -> memoryview:
    """The bytes of a string array without nulls, back to back (no copy)."""
    if arr.null_count:
        raise ValueError("string_buffer needs an array without nulls")
    if len(arr) == 0:
        return memoryview(b"")
    large = pa.types.is_large_string(arr.type)
    _, offsets_buf, data = arr.buffers()
    if data is None:
        return memoryview(b"")
    offsets = np.frombuffer(offsets_buf, dtype=np.int64 if large else np.int32)
    first, last = int(offsets[arr.offset]), int(offsets[arr.offset + len(arr)])
    return memoryview(data)[first:last]


def text_widths(columns: Sequence[pa.Array]) -> list[int]:
    """The widest cell (in characters) of each column (0 for an empty column)."""
    return [0 if len(c) == 0 else int(pc.max(pc.utf8_length(c)).as_py() or 0) for c in columns]

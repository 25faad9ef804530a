"""Value rendering shared by the CLI, the check and the terminal UI (no Textual here).

JSON values: DECIMAL as a string (exact), timestamps and dates as ISO 8601 with every digit
of their unit (TIMESTAMP_LTZ ends in ``Z``: its values are UTC instants), TIME as
``HH:MM:SS[.fff]``, BYTES/BINARY as base64, NaN and infinities as the strings
``NaN``/``Infinity``/``-Infinity``, ARRAY as a list, MAP as a list of ``[key, value]`` pairs
(keys need not be strings), ROW as an object. CSV and the text table use the same text for
scalars (:func:`scalar_text`).

pyarrow is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

import base64
import json
import math
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from fluss_proto.scan import Preview
    from fluss_proto.types import DataType

__all__ = [
    "CELL_WIDTH",
    "cell_text",
    "json_rows",
    "json_values",
    "right_aligned",
    "scalar_text",
    "text_table",
    "time_text",
    "timestamp_text",
    "type_label",
]

CELL_WIDTH = 48  # text table: longer cells are cut with an ellipsis

_EPOCH = datetime(1970, 1, 1)
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def type_label(f: pa.Field) -> str:
    """The Fluss type of a preview column (field metadata ``fluss.type``), else Arrow's."""
    meta = f.metadata or {}
    label = meta.get(b"fluss.type")
    return label.decode() if label else str(f.type)


def _fluss_types(result: Preview) -> dict[str, DataType]:
    return {c.name: c.type for c in result.info.schema.columns}


def json_rows(result: Preview) -> list[dict[str, Any]]:
    """The preview's rows as JSON-ready dicts (see the module doc for the rendering)."""
    table = result.table
    types = _fluss_types(result)
    columns = [
        json_values(table.column(i).combine_chunks(), types.get(name))
        for i, name in enumerate(table.column_names)
    ]
    return (
        [
            dict(zip(table.column_names, values, strict=True))
            for values in zip(*columns, strict=True)
        ]
        if columns
        else []
    )


def json_values(arr: Any, dt: DataType | None = None) -> list[Any]:
    """One Arrow array -> JSON-ready Python values; ``dt`` is the Fluss type, if known."""
    import pyarrow as pa

    t = arr.type
    if pa.types.is_timestamp(t):
        ltz = dt is not None and str(dt.root) == "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
        ints = arr.cast(pa.int64()).to_pylist()
        return [None if v is None else timestamp_text(v, t.unit, ltz) for v in ints]
    if pa.types.is_time(t):
        ints = arr.cast(pa.int64() if pa.types.is_time64(t) else pa.int32()).to_pylist()
        return [None if v is None else time_text(v, t.unit) for v in ints]
    if pa.types.is_date(t):
        return [None if v is None else v.isoformat() for v in arr.to_pylist()]
    if pa.types.is_decimal(t):
        return [None if v is None else format(v, "f") for v in arr.to_pylist()]
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_large_binary(t):
        return [None if v is None else base64.b64encode(v).decode() for v in arr.to_pylist()]
    if pa.types.is_floating(t):
        return [_float(v) for v in arr.to_pylist()]
    if pa.types.is_map(t):
        key_dt = getattr(dt, "key_type", None)
        value_dt = getattr(dt, "value_type", None)
        keys = json_values(arr.keys, key_dt)
        items = json_values(arr.items, value_dt)
        return _nested(arr, lambda a, b: [[keys[j], items[j]] for j in range(a, b)])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = json_values(arr.values, getattr(dt, "element_type", None))
        return _nested(arr, lambda a, b: values[a:b])
    if pa.types.is_struct(t):
        sub = {f.name: f.type for f in getattr(dt, "fields", ())}
        children = arr.flatten()
        child_values = [
            json_values(child, sub.get(t.field(i).name)) for i, child in enumerate(children)
        ]
        names = [t.field(i).name for i in range(t.num_fields)]
        valid = arr.is_valid().to_pylist()
        return [
            dict(zip(names, [c[r] for c in child_values], strict=True)) if valid[r] else None
            for r in range(len(arr))
        ]
    return arr.to_pylist()


def _nested(arr: Any, take: Any) -> list[Any]:
    offsets = arr.offsets.to_pylist()
    valid = arr.is_valid().to_pylist()
    return [take(offsets[i], offsets[i + 1]) if valid[i] else None for i in range(len(arr))]


def timestamp_text(value: int, unit: str, ltz: bool) -> str:
    per = _PER_SECOND[unit]
    seconds, fraction = divmod(value, per)
    try:
        moment = _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        return str(value)
    text = moment.isoformat(timespec="seconds")
    if _DIGITS[unit]:
        text += "." + str(fraction).zfill(_DIGITS[unit])
    return text + ("Z" if ltz else "")


def time_text(value: int, unit: str) -> str:
    per = _PER_SECOND[unit]
    seconds, fraction = divmod(value, per)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    if _DIGITS[unit]:
        text += "." + str(fraction).zfill(_DIGITS[unit])
    return text


def _float(v: float | None) -> float | str | None:
    if v is None or math.isfinite(v):
        return v
    if math.isnan(v):
        return "NaN"
    return "Infinity" if v > 0 else "-Infinity"


def scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def right_aligned(schema: pa.Schema) -> set[str]:
    import pyarrow as pa

    return {
        f.name
        for f in schema
        if pa.types.is_integer(f.type)
        or pa.types.is_floating(f.type)
        or pa.types.is_decimal(f.type)
    }


def cell_text(value: Any) -> str:
    text = "NULL" if value is None else scalar_text(value)
    text = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…"


def text_table(names: list[str], rows: list[dict[str, Any]], right: set[str]) -> list[str]:
    """A plain aligned text table: header, a rule, one line per row."""
    cells = [[cell_text(row[n]) for n in names] for row in rows]
    widths = [max([len(n), *(len(r[i]) for r in cells)]) for i, n in enumerate(names)]

    def line(values: list[str]) -> str:
        parts = [
            v.rjust(w) if n in right else v.ljust(w)
            for v, w, n in zip(values, widths, names, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(names), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    return out

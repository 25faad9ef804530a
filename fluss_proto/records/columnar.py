"""Vectorised CompactedRow decoding: many rows straight into a ``pyarrow.Table``.

The row-at-a-time decoder (:mod:`.compacted_row`) is the reference; this module is its fast
path for the columnar case. :func:`compile_columnar` builds, for one ROW type, a
:class:`ColumnarDecoder` that takes the rows as **one buffer plus per-row start/end offsets**
(what :func:`~fluss_proto.records.kv_batch.read_value_batch` yields) and decodes them with numpy
across rows, one field at a time:

- the span of the buffer the rows cover is copied once into a uint8 array padded with
  ``_PAD`` zero bytes, so a read of up to 10 bytes at any position inside the span stays in the
  array; stride-1 views of that array as ``<i2``/``<u8``/``<f4``/``<f8`` turn "the value at byte
  position p of every row" into one fancy index;
- an int64 array holds the current position of every row, starting after the null bitmap;
- for each field: the null bit of every row is read vectorised; the non-null rows are decoded
  vectorised and their positions advanced:

  - fixed widths (BOOLEAN, TINYINT, SMALLINT, FLOAT, DOUBLE): one gather;
  - varints (INTEGER/DATE/TIME, BIGINT, compact DECIMAL, timestamps, length prefixes): when
    every first byte is < 0x80 the value is that byte; otherwise one 8-byte word is gathered
    per row, the terminating byte is the lowest clear high bit (``t & -t``), the 7-bit groups
    are packed with three mask-and-shift steps, and the rare 9/10-byte varint64s (negative
    BIGINTs...) read their last two bytes for those rows only;
  - STRING/CHAR/BYTES: vectorised length, then the payloads are copied into one contiguous
    data buffer: when the rows are in buffer order, by describing the span as a
    ``2 * rows``-value binary array (payload, gap, payload, gap...) and letting Arrow ``take``
    the even values; otherwise with a numpy gather (``np.repeat`` of per-value shifts plus an
    ``arange``). STRING data is then UTF-8 checked (Arrow validation of the whole data buffer
    plus "no value starts with a continuation byte"); invalid UTF-8 is replaced per value, as
    the reference does;
  - BINARY(n): padded to n bytes (FixedSizeBinary) with a 2-D gather;
  - nested types (ARRAY, MAP, ROW) and non-compact DECIMAL: vectorised length prefix, then the
    reference payload reader per row for that column only.

Exactness: the table must be what the reference path
(:meth:`~fluss_proto.records._base.RowDecoder.reference_table`) gives for the same rows. The
fast path checks bounds vectorised (every read inside its row) and gives up (``decode`` returns
None) on anything it does not reproduce exactly: a read past a row's end, a negative length, a
10-byte varint with a continuation bit, nanos outside ``[0, 999999]``, a value that does not fit
its Arrow type, rows outside the buffer, an error from a per-row payload reader... The caller
then runs the reference decoder on the same rows, which raises the precise typed
:class:`~fluss_proto.records.errors.RowDecodeError` (or decodes, e.g. when a timestamp is only
near the int64 edge). numpy/pyarrow exceptions never escape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from fluss_proto.records._values import MALFORMED
from fluss_proto.records.compacted_fields import compile_compacted_payload
from fluss_proto.records.errors import RecordDecodeError
from fluss_proto.records.rowtype import DataType, is_compact_decimal, is_compact_timestamp

__all__ = ["ColumnarDecoder", "compile_columnar"]

#: Zero bytes after the copied span: the widest read at a position inside it is 10 bytes.
_PAD = 16
_INT32_MAX = 2**31 - 1

_U64 = np.uint64
_ONE = _U64(1)
_M7 = _U64(0x7F7F7F7F7F7F7F7F)  # the 7 value bits of each byte
_H8 = _U64(0x8080808080808080)  # the continuation bit of each byte
_H4 = _U64(0x0000000080808080)  # continuation bits of bytes 0..3 (varint32)
_STOP5 = _U64(0x0000008000000000)  # byte 4 always ends a varint32
_LOW32 = _U64(0xFFFFFFFF)
_PACK = (
    (_U64(0x007F007F007F007F), _U64(1), _U64(0x3F803F803F803F80)),
    (_U64(0x00003FFF00003FFF), _U64(2), _U64(0x0FFFC0000FFFC000)),
    (_U64(0x000000000FFFFFFF), _U64(4), _U64(0x00FFFFFFF0000000)),
)
_SHIFT56 = _U64(56)
_SHIFT63 = _U64(63)
_BYTE7 = _U64(0x7F)

_HAS_POPCOUNT = hasattr(np, "bitwise_count")


class _GiveUp(Exception):
    """The fast path cannot reproduce the reference result: use the reference decoder."""


#: Everything the fast path may raise on odd input; all of them mean "use the reference".
_GIVE_UP = (_GiveUp, RecordDecodeError, pa.ArrowException, TypeError, *MALFORMED)


# ------------------------------------------------------------------ the buffer span


class _Span:
    """The bytes ``buf[lo:hi]`` the rows cover, copied once and padded; positions of the
    vectorised code are relative to ``lo``."""

    __slots__ = ("_arrow", "_views", "buf", "lo", "ordered", "u8")

    def __init__(self, buf: bytes, lo: int, hi: int, ordered: bool) -> None:
        self.buf = buf
        self.lo = lo
        #: Rows are disjoint and in buffer order (each row starts at or after the previous end).
        self.ordered = ordered
        u8 = np.zeros(hi - lo + _PAD, np.uint8)
        u8[: hi - lo] = np.frombuffer(buf, np.uint8, hi - lo, lo)
        self.u8 = u8
        self._views: dict[str, np.ndarray] = {}
        self._arrow: pa.Buffer | None = None

    def view(self, dtype: str) -> np.ndarray:
        """The ``dtype`` value starting at every byte position (a stride-1 view, no copy)."""
        v = self._views.get(dtype)
        if v is None:
            width = np.dtype(dtype).itemsize
            v = np.ndarray((len(self.u8) - width + 1,), dtype, self.u8, 0, (1,))
            self._views[dtype] = v
        return v

    @property
    def arrow_buffer(self) -> pa.Buffer:
        if self._arrow is None:
            self._arrow = pa.py_buffer(self.u8)
        return self._arrow


class _Sel:
    """The non-null rows of a column."""

    __slots__ = ("idx", "n", "nulls", "validity")

    def __init__(self, n: int, valid: np.ndarray) -> None:
        self.n = n
        self.idx = np.flatnonzero(valid)
        self.nulls = n - len(self.idx)
        self.validity = pa.py_buffer(np.packbits(valid, bitorder="little"))

    def scatter(self, values: np.ndarray) -> np.ndarray:
        full = np.zeros((self.n, *values.shape[1:]), values.dtype)
        full[self.idx] = values
        return full


def _check(stop: np.ndarray, end: np.ndarray) -> None:
    if (stop > end).any():
        raise _GiveUp


# ------------------------------------------------------------------ varints


#: Rows per block of the varint kernels: their temporaries stay in the CPU caches.
_BLOCK = 1 << 15


def _blocked(
    kernel: Callable[[_Span, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
) -> Callable[[_Span, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Run ``kernel`` over blocks of ``_BLOCK`` rows (same result, about twice as fast on
    large inputs as whole-array temporaries that do not fit a cache)."""

    def run(span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        first = span.u8[p]
        if first.max() < 0x80:  # every varint is one byte (small values, short strings)
            stop = p + 1
            _check(stop, e)
            return first, stop
        n = len(p)
        if n <= _BLOCK:
            return kernel(span, p, e)
        values = np.empty(n, np.int64)
        stops = np.empty(n, np.int64)
        for i in range(0, n, _BLOCK):
            j = i + _BLOCK
            values[i:j], stops[i:j] = kernel(span, p[i:j], e[i:j])
        return values, stops

    return run


def _terminated(w: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``t``: the high bit of each byte that may end the varint, set when it does (clear
    continuation bit). -> (value of the 7-bit groups up to the first such byte, its byte
    count). ``w`` and ``t`` are overwritten."""
    keep = t - _ONE
    keep ^= t  # every bit up to and including the lowest set bit of t (all if t == 0)
    if _HAS_POPCOUNT:
        count = (np.bitwise_count(keep) >> 3).astype(np.int64)
    else:  # the lowest set bit 2**(8k+7) is exact in float64: frexp gives 8k+8
        count = (np.frexp((keep ^ (keep >> _ONE)).astype(np.float64))[1] >> 3).astype(np.int64)
    w &= keep
    w &= _M7
    tmp = keep
    for low, shift, moved in _PACK:  # pack the 7-bit groups: pairs, quads, the 8 groups
        np.right_shift(w, shift, out=tmp)
        tmp &= moved
        w &= low
        w |= tmp
    return w, count


def _varint32_kernel(span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = span.view("<u8")[p]
    t = w & _H4
    t ^= _H4
    t |= _STOP5
    value, count = _terminated(w, t)
    stop = p + count
    _check(stop, e)
    value &= _LOW32
    return value.view(np.int64), stop


def _varint64_kernel(span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = span.view("<u8")[p]
    t = w & _H8
    t ^= _H8
    long = np.flatnonzero(t == 0)  # no terminator in the first 8 bytes
    value, count = _terminated(w, t)
    if len(long):
        q = p[long]
        b8 = span.u8[q + 8].astype(np.uint64)
        b9 = span.u8[q + 9].astype(np.uint64)
        ten = b8 >= 0x80
        if (ten & (b9 >= 0x80)).any():
            raise _GiveUp  # a tenth byte with a continuation bit: malformed
        value[long] |= ((b8 & _BYTE7) << _SHIFT56) | np.where(ten, b9 << _SHIFT63, _U64(0))
        count[long] = 9 + ten
    stop = p + count
    _check(stop, e)
    return value.view(np.int64), stop


_varint32_blocks = _blocked(_varint32_kernel)
_varint64_blocks = _blocked(_varint64_kernel)


def _varint32(span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Java ``readInt``: up to 5 bytes, the fifth taken whole -> (int32 values, next pos)."""
    value, stop = _varint32_blocks(span, p, e)
    # the low 32 bits as a two's-complement int32
    return value.astype(np.uint32).view(np.int32), stop


def _varint64(span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Java ``readLong``: up to 10 bytes -> (int64 values, next pos)."""
    value, stop = _varint64_blocks(span, p, e)
    return value.astype(np.int64, copy=False), stop


def _trunc_div(v: np.ndarray, d: int) -> np.ndarray:
    """Java integer division (toward zero), without overflow at the int64 edges."""
    q = v // d
    q += ((v % d) != 0) & (v < 0)
    return q


# ------------------------------------------------------------------ fields

# A field reads the non-null rows at positions ``p`` (row ends ``e``) and returns
# ``(payload, next positions)``; ``build`` turns the payload into the column.


class _Field:
    def __init__(self, arrow_type: pa.DataType) -> None:
        self.type = arrow_type

    def read(self, span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[Any, np.ndarray]:
        raise NotImplementedError  # pragma: no cover

    def build(self, span: _Span, payload: Any, sel: _Sel | None, pos: np.ndarray) -> pa.Array:
        """The column; ``pos``: positions of every row before this field (nulls included)."""
        return _primitive(self.type, payload, sel)


def _primitive(arrow_type: pa.DataType, values: np.ndarray, sel: _Sel | None) -> pa.Array:
    if sel is None:
        return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)], 0)
    data = pa.py_buffer(sel.scatter(values))
    return pa.Array.from_buffers(arrow_type, sel.n, [sel.validity, data], sel.nulls)


class _Fixed(_Field):
    """SMALLINT, FLOAT, DOUBLE, TINYINT: little-endian fixed width."""

    def __init__(self, arrow_type: pa.DataType, dtype: str) -> None:
        super().__init__(arrow_type)
        self.dtype = dtype
        self.width = np.dtype(dtype).itemsize

    def read(self, span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[Any, np.ndarray]:
        stop = p + self.width
        _check(stop, e)
        return span.view(self.dtype)[p], stop


class _Bool(_Field):
    def read(self, span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[Any, np.ndarray]:
        stop = p + 1
        _check(stop, e)
        return span.u8[p] != 0, stop

    def build(self, span: _Span, payload: Any, sel: _Sel | None, pos: np.ndarray) -> pa.Array:
        values = payload if sel is None else sel.scatter(payload)
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
        if sel is None:
            return pa.Array.from_buffers(pa.bool_(), len(values), [None, data], 0)
        return pa.Array.from_buffers(pa.bool_(), sel.n, [sel.validity, data], sel.nulls)


class _Int32(_Field):
    """INTEGER, DATE, TIME(p): varint32, then the Arrow unit of TIME."""

    def __init__(self, arrow_type: pa.DataType, time_precision: int | None = None) -> None:
        super().__init__(arrow_type)
        self.time_precision = time_precision

    def read(self, span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[Any, np.ndarray]:
        v, stop = _varint32(span, p, e)
        tp = self.time_precision
        if tp is not None:
            if tp == 0:
                v = _trunc_div(v, 1000)
            elif tp > 6:
                v = v.astype(np.int64) * 1_000_000
            elif tp > 3:
                v = v.astype(np.int64) * 1000
        return v, stop


class _Int64(_Field):
    """BIGINT, TIMESTAMP(p <= 3) (epoch millis; p = 0 in seconds)."""

    def __init__(self, arrow_type: pa.DataType, seconds: bool = False) -> None:
        super().__init__(arrow_type)
        self.seconds = seconds

    def read(self, span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[Any, np.ndarray]:
        v, stop = _varint64(span, p, e)
        return (_trunc_div(v, 1000) if self.seconds else v), stop


class _Timestamp(_Field):
    """TIMESTAMP(p > 3): varint64 millis, varint32 nano-of-milli -> micros or nanos."""

    def __init__(self, arrow_type: pa.DataType, precision: int) -> None:
        super().__init__(arrow_type)
        self.nanos = precision > 6
        self.mult = 1_000_000 if self.nanos else 1000
        most = 999_999 if self.nanos else 999  # the largest term added to ms * mult
        self.lo = -(2**63 // self.mult)
        self.hi = (2**63 - 1 - most) // self.mult

    def read(self, span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[Any, np.ndarray]:
        ms, mid = _varint64(span, p, e)
        nanos, stop = _varint32(span, mid, e)
        if ((nanos < 0) | (nanos > 999_999)).any():
            raise _GiveUp  # check_nanos fails in the reference
        if ((ms < self.lo) | (ms > self.hi)).any():
            raise _GiveUp  # would overflow int64: the reference decides
        v = ms * self.mult
        v += nanos if self.nanos else nanos // 1000
        return v, stop


class _CompactDecimal(_Field):
    """DECIMAL(p <= 18): varint64 unscaled -> decimal128 (16 bytes LE two's complement)."""

    def __init__(self, arrow_type: pa.DataType, precision: int) -> None:
        super().__init__(arrow_type)
        self.bound = 10**precision

    def read(self, span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[Any, np.ndarray]:
        v, stop = _varint64(span, p, e)
        if ((v <= -self.bound) | (v >= self.bound)).any():
            raise _GiveUp  # more digits than the precision: Arrow refuses it
        return v, stop

    def build(self, span: _Span, payload: Any, sel: _Sel | None, pos: np.ndarray) -> pa.Array:
        words = np.empty((len(payload), 2), np.int64)
        words[:, 0] = payload
        words[:, 1] = payload >> 63
        return _primitive(self.type, words, sel)


def _length_prefix(
    span: _Span, p: np.ndarray, e: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Varint length + payload -> (payload start, payload length, payload stop)."""
    n, a = _varint32(span, p, e)
    if (n < 0).any():
        raise _GiveUp
    n = n.astype(np.int64)
    stop = a + n
    _check(stop, e)
    return a, n, stop


class _Bytes(_Field):
    """STRING, CHAR (utf8) and BYTES (binary): varint length + bytes."""

    def __init__(self, arrow_type: pa.DataType) -> None:
        super().__init__(arrow_type)
        self.utf8 = pa.types.is_string(arrow_type)

    def read(self, span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[Any, np.ndarray]:
        a, n, stop = _length_prefix(span, p, e)
        return (a, n), stop

    def build(self, span: _Span, payload: Any, sel: _Sel | None, pos: np.ndarray) -> pa.Array:
        a, n = payload
        if sel is not None:  # nulls: an empty value at the row's current position
            a, n = pos.copy(), sel.scatter(n)
            a[sel.idx] = payload[0]
        rows = len(a)
        if span.ordered and len(span.u8) <= _INT32_MAX:
            offsets, data = _take_values(span, a, n)
        else:
            offsets, data = _gather_values(span, a, n)
        validity, nulls = (None, 0) if sel is None else (sel.validity, sel.nulls)
        arr = pa.Array.from_buffers(self.type, rows, [validity, offsets, data], nulls)
        if self.utf8 and not _valid_utf8(offsets, data, rows):
            arr = _replace_invalid_utf8(arr)
        return arr


def _take_values(span: _Span, a: np.ndarray, n: np.ndarray) -> tuple[pa.Buffer, pa.Buffer]:
    """Rows in buffer order: the span read as a binary array of ``2 * rows`` values (payload,
    gap, payload, gap...); Arrow's take of the even values copies the payloads."""
    rows = len(a)
    bounds = np.empty(2 * rows + 1, np.int32)
    bounds[0 : 2 * rows : 2] = a
    bounds[1 : 2 * rows : 2] = a + n
    bounds[2 * rows] = bounds[2 * rows - 1]
    both = pa.Array.from_buffers(
        pa.binary(), 2 * rows, [None, pa.py_buffer(bounds), span.arrow_buffer]
    )
    taken = both.take(pa.array(np.arange(0, 2 * rows, 2, dtype=np.int32)))
    _, offsets, data = taken.buffers()
    return offsets, data if data is not None else pa.py_buffer(b"")


def _gather_values(span: _Span, a: np.ndarray, n: np.ndarray) -> tuple[pa.Buffer, pa.Buffer]:
    """Any row order: offsets by cumsum, payload bytes with one fancy index."""
    offsets = np.zeros(len(a) + 1, np.int64)
    np.cumsum(n, out=offsets[1:])
    total = int(offsets[-1])
    if total > _INT32_MAX:
        raise _GiveUp
    src = np.repeat(a - offsets[:-1], n)
    src += np.arange(total, dtype=np.int64)
    data = span.u8[src]
    return pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)


def _valid_utf8(offsets: pa.Buffer, data: pa.Buffer | None, rows: int) -> bool:
    """Every value is valid UTF-8: the whole data buffer is, and no value starts inside a
    character (with a continuation byte)."""
    off = np.frombuffer(offsets, np.int32, rows + 1)
    total = int(off[-1])
    if total == 0:
        return True
    if data is None:  # values but no data buffer
        return False
    whole = pa.Array.from_buffers(
        pa.string(), 1, [None, pa.py_buffer(np.array([0, total], np.int32)), data]
    )
    try:
        whole.validate(full=True)
    except pa.ArrowInvalid:
        return False
    bytes_ = np.frombuffer(data, np.uint8, total)
    starts = off[:-1]
    starts = starts[starts < total]
    return not ((bytes_[starts] & 0xC0) == 0x80).any()


def _replace_invalid_utf8(arr: pa.Array) -> pa.Array:
    """What the reference does: decode each value with ``errors="replace"``."""
    raw = arr.view(pa.binary()).to_pylist()
    return pa.array([None if v is None else v.decode("utf-8", "replace") for v in raw], pa.string())


class _FixedBinary(_Field):
    """BINARY(n): varint length + bytes, padded with zeros to n (FixedSizeBinary(n))."""

    def __init__(self, arrow_type: pa.DataType, width: int) -> None:
        super().__init__(arrow_type)
        self.width = width

    def read(self, span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[Any, np.ndarray]:
        a, n, stop = _length_prefix(span, p, e)
        if (n > self.width).any():
            raise _GiveUp  # longer than BINARY(n)
        return (a, n), stop

    def build(self, span: _Span, payload: Any, sel: _Sel | None, pos: np.ndarray) -> pa.Array:
        a, n = payload
        cols = np.arange(self.width)
        src = a[:, None] + cols
        np.minimum(src, len(span.u8) - 1, out=src)
        values = span.u8[src]
        values[cols[None, :] >= n[:, None]] = 0
        return _primitive(self.type, values, sel)


class _PerRow(_Field):
    """ARRAY, MAP, ROW, DECIMAL(p > 18): vectorised length prefix, then the reference payload
    reader row by row for this column only."""

    def __init__(self, arrow_type: pa.DataType, reader: Callable[[bytes, int, int], Any]) -> None:
        super().__init__(arrow_type)
        self.reader = reader

    def read(self, span: _Span, p: np.ndarray, e: np.ndarray) -> tuple[Any, np.ndarray]:
        a, _, stop = _length_prefix(span, p, e)
        return (a, stop), stop

    def build(self, span: _Span, payload: Any, sel: _Sel | None, pos: np.ndarray) -> pa.Array:
        a, stop = payload
        read, buf, lo = self.reader, span.buf, span.lo
        values = [
            read(buf, x, y) for x, y in zip((a + lo).tolist(), (stop + lo).tolist(), strict=True)
        ]
        if sel is not None:
            full: list[Any] = [None] * sel.n
            for i, v in zip(sel.idx.tolist(), values, strict=True):
                full[i] = v
            values = full
        return pa.array(values, type=self.type)


def _field(dt: DataType, arrow_type: pa.DataType) -> _Field:
    root = dt.root
    if root == "BOOLEAN":
        return _Bool(arrow_type)
    if root == "TINYINT":
        return _Fixed(arrow_type, "i1")
    if root == "SMALLINT":
        return _Fixed(arrow_type, "<i2")
    if root == "FLOAT":
        return _Fixed(arrow_type, "<f4")
    if root == "DOUBLE":
        return _Fixed(arrow_type, "<f8")
    if root in ("INTEGER", "DATE"):
        return _Int32(arrow_type)
    if root == "TIME_WITHOUT_TIME_ZONE":
        return _Int32(arrow_type, dt.precision or 0)
    if root == "BIGINT":
        return _Int64(arrow_type)
    if root in ("STRING", "CHAR", "BYTES"):
        return _Bytes(arrow_type)
    if root == "BINARY":
        return _FixedBinary(arrow_type, dt.length or 1)
    if root == "DECIMAL" and is_compact_decimal(dt.precision or 10):
        return _CompactDecimal(arrow_type, dt.precision or 10)
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        precision = dt.precision if dt.precision is not None else 6
        if is_compact_timestamp(precision):
            return _Int64(arrow_type, seconds=precision == 0)
        return _Timestamp(arrow_type, precision)
    # DECIMAL(p > 18), ARRAY, MAP, ROW
    return _PerRow(arrow_type, compile_compacted_payload(dt, "arrow"))


# ------------------------------------------------------------------ the decoder


class ColumnarDecoder:
    """Vectorised CompactedRow -> Table decoder of one ROW type (see the module doc)."""

    def __init__(self, row: DataType, schema: pa.Schema) -> None:
        self.schema = schema
        self.fields = [_field(f.type, af.type) for f, af in zip(row.fields, schema, strict=True)]
        self.null_bytes = (len(self.fields) + 7) // 8

    def decode(self, buf: bytes, starts: Any, ends: Any) -> pa.Table | None:
        """Rows ``buf[starts[i]:ends[i]]`` -> Table, or None when the reference decoder must
        decide (malformed rows, values the fast path does not reproduce exactly)."""
        try:
            return self._decode(buf, starts, ends)
        except _GIVE_UP:
            return None

    def _decode(self, buf: bytes, starts: Any, ends: Any) -> pa.Table | None:
        starts = np.asarray(starts, np.int64)
        ends = np.asarray(ends, np.int64)
        n = len(starts)
        if n == 0:
            return self.schema.empty_table()
        if not self.fields or len(ends) != n:
            return None
        if starts.min() < 0 or (ends < starts).any() or ends.max() > len(buf):
            return None
        ordered = n == 1 or bool((starts[1:] >= ends[:-1]).all())
        if ordered:
            lo, hi = int(starts[0]), int(ends[-1])
        else:
            lo, hi = int(starts.min()), int(ends.max())
        span = _Span(buf, lo, hi, ordered)
        pos = starts - lo
        end = ends - lo
        _check(pos + self.null_bytes, end)
        bitmap = [span.u8[pos + k] for k in range(self.null_bytes)]
        pos = pos + self.null_bytes
        columns = []
        for i, f in enumerate(self.fields):
            null = bitmap[i >> 3] & (1 << (i & 7))
            if not null.any():
                payload, pos_next = f.read(span, pos, end)
                columns.append(f.build(span, payload, None, pos))
                pos = pos_next
                continue
            sel = _Sel(n, null == 0)
            if not len(sel.idx):
                columns.append(pa.nulls(n, f.type))
                continue
            payload, stop = f.read(span, pos[sel.idx], end[sel.idx])
            columns.append(f.build(span, payload, sel, pos))
            pos[sel.idx] = stop
        return pa.Table.from_arrays(columns, schema=self.schema)


def compile_columnar(row: DataType, schema: pa.Schema) -> ColumnarDecoder:
    """The vectorised decoder of CompactedRows of ``row`` into tables of ``schema``."""
    return ColumnarDecoder(row, schema)

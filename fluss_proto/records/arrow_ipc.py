"""An Arrow IPC RecordBatch message read into Python values, without pyarrow.

For the plain column types only (integers, floats, booleans, strings, binary, fixed-size
binary, decimal128, date32, time32/64, timestamps), with uncompressed bodies or ZSTD bodies
(the ``zstandard`` package). Values are those of the row decoders' ``"arrow"`` mode
(:mod:`fluss_proto.records._values`): dates, times and timestamps as integers in the Arrow
unit, decimals as exact ``Decimal``, FLOAT widened to a Python float. NULL is None.

:func:`read_columns` returns None for what it does not read (a nested column, LZ4_FRAME,
no ZSTD codec installed): the caller then reads the batch with pyarrow
(:func:`fluss_proto.records.arrow.decode_arrow_batch`). Malformed bytes raise
:class:`~fluss_proto.records.errors.CorruptBatchError`, never anything else.

Written here rather than taken from a library: the Arrow libraries for Python are pyarrow
(what this path avoids: ~170 ms of imports) and pure-Python readers that need a schema
message Fluss does not send. The FlatBuffer layout read is Arrow's ``Message.fbs`` /
``Schema.fbs``.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable
from typing import Any

from fluss_proto.records._values import decimal_from_unscaled
from fluss_proto.records.errors import CorruptBatchError
from fluss_proto.records.rowtype import ROOTS, DataType

__all__ = ["PLAIN_ROOTS", "fb_deref", "fb_field", "read_columns"]

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U16 = struct.Struct("<H")
_I64 = struct.Struct("<q")
_PAIR = struct.Struct("<qq")
_RECORD_BATCH = 3  # MessageHeader.RecordBatch
_ZSTD = 1  # CompressionType.ZSTD (0 is LZ4_FRAME)
#: The largest uncompressed buffer believed: the output is allocated at the declared size
#: (a log batch is bounded by the fetch size, a few MiB; a corrupt length must not be).
MAX_BUFFER_BYTES = 256 * 1024 * 1024

#: Fluss type roots this reader (and the text writers of plain values) handle.
PLAIN_ROOTS = ROOTS - {"ARRAY", "MAP", "ROW"}

# Fixed-width values: the struct letter per root (TIME and TIMESTAMP by precision below).
_FIXED = {
    "TINYINT": "b",
    "SMALLINT": "h",
    "INTEGER": "i",
    "BIGINT": "q",
    "FLOAT": "f",
    "DOUBLE": "d",
    "DATE": "i",
}


def fb_field(fb: bytes, table: int, index: int) -> int | None:
    """Absolute position of field ``index`` of the FlatBuffer table at ``table``, or None."""
    vtable = table - _I32.unpack_from(fb, table)[0]
    (vsize,) = _U16.unpack_from(fb, vtable)
    slot = 4 + 2 * index
    if slot + 2 > vsize:
        return None
    (rel,) = _U16.unpack_from(fb, vtable + slot)
    return table + rel if rel else None


def fb_deref(fb: bytes, pos: int) -> int:
    return pos + _U32.unpack_from(fb, pos)[0]


def _letter(dt: DataType) -> str | None:
    root = dt.root
    if root == "TIME_WITHOUT_TIME_ZONE":
        return "i" if (dt.precision or 0) <= 3 else "q"
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return "q"
    return _FIXED.get(root)


def read_columns(payload: bytes, types: list[DataType], rows: int) -> list[list[Any]] | None:
    """The columns of one encapsulated RecordBatch message of ``rows`` rows, or None when
    this reader cannot read it (see the module doc). Raises CorruptBatchError."""
    if any(t.root not in PLAIN_ROOTS for t in types):
        return None
    try:
        layout = _layout(payload)
        if layout is None:
            return None
        nodes, buffers, codec, body = layout
        if len(nodes) != len(types) or (nodes and any(n != rows for n, _ in nodes)):
            raise CorruptBatchError("Arrow message does not match the batch's columns")
        fetch = _Buffers(payload, body, buffers, codec)
        return [
            _column(dt, rows, nulls, fetch) for dt, (_, nulls) in zip(types, nodes, strict=True)
        ]
    except CorruptBatchError:
        raise
    except (struct.error, IndexError, ValueError, UnicodeDecodeError) as exc:
        raise CorruptBatchError(f"bad Arrow record batch message: {exc}") from exc


def _layout(
    payload: bytes,
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int | None, int] | None:
    """(field nodes, buffers, codec, body start) of a RecordBatch message."""
    if _U32.unpack_from(payload, 0)[0] == 0xFFFFFFFF:
        meta_len, fb_start = _I32.unpack_from(payload, 4)[0], 8
    else:  # legacy framing without the continuation marker
        meta_len, fb_start = _I32.unpack_from(payload, 0)[0], 4
    if meta_len <= 0 or fb_start + meta_len > len(payload):
        raise CorruptBatchError("Arrow message metadata runs past the payload")
    fb = payload[fb_start : fb_start + meta_len]
    message = fb_deref(fb, 0)
    kind_at, header_at = fb_field(fb, message, 1), fb_field(fb, message, 2)
    if kind_at is None or header_at is None or fb[kind_at] != _RECORD_BATCH:
        raise CorruptBatchError("Arrow message is not a RecordBatch")
    batch = fb_deref(fb, header_at)
    codec: int | None = None
    compression_at = fb_field(fb, batch, 3)
    if compression_at is not None:
        codec_at = fb_field(fb, fb_deref(fb, compression_at), 0)
        codec = fb[codec_at] if codec_at is not None else 0  # the default is LZ4_FRAME
        if codec != _ZSTD or _zstd() is None:
            return None
    return _structs(fb, batch, 1), _structs(fb, batch, 2), codec, fb_start + meta_len


def _structs(fb: bytes, table: int, index: int) -> list[tuple[int, int]]:
    """A vector of 16-byte structs (FieldNode: length, nulls; Buffer: offset, length)."""
    at = fb_field(fb, table, index)
    if at is None:
        return []
    vec = fb_deref(fb, at)
    (count,) = _U32.unpack_from(fb, vec)
    return [_PAIR.unpack_from(fb, vec + 4 + 16 * i) for i in range(count)]


_DECOMPRESS: list[Callable[[bytes, int], bytes] | None] = []


def _zstd() -> Callable[[bytes, int], bytes] | None:
    """ZSTD decompression, or None without the ``zstandard`` package (checked once)."""
    if not _DECOMPRESS:
        try:
            import zstandard
        except ImportError:
            _DECOMPRESS.append(None)
        else:
            dctx = zstandard.ZstdDecompressor()
            _DECOMPRESS.append(lambda data, size: dctx.decompress(data, max_output_size=size))
    return _DECOMPRESS[0]


class _Buffers:
    """The body's buffers in order, decompressed when the body is."""

    def __init__(
        self, payload: bytes, body: int, buffers: list[tuple[int, int]], codec: int | None
    ) -> None:
        self._payload = payload
        self._body = body
        self._buffers = buffers
        self._codec = codec
        self._next = 0

    def take(self) -> bytes:
        if self._next >= len(self._buffers):
            raise CorruptBatchError("Arrow message has fewer buffers than its columns need")
        offset, length = self._buffers[self._next]
        self._next += 1
        start = self._body + offset
        if offset < 0 or length < 0 or start + length > len(self._payload):
            raise CorruptBatchError("Arrow buffer runs past the payload")
        raw = self._payload[start : start + length]
        if self._codec is None or length == 0:
            return raw
        if length < 8:
            raise CorruptBatchError("compressed Arrow buffer without its length")
        (size,) = _I64.unpack_from(raw, 0)
        if size == -1:
            return raw[8:]
        if size == 0:  # Arrow Java: an empty buffer as length 0 and no frame
            return b""
        if not 0 < size <= MAX_BUFFER_BYTES:
            raise CorruptBatchError(f"compressed Arrow buffer declares {size} bytes")
        decompress = _zstd()
        assert decompress is not None
        try:
            out = decompress(raw[8:], size)
        except Exception as exc:  # the codec's own error type
            raise CorruptBatchError(f"ZSTD buffer does not decompress: {exc}") from exc
        if len(out) != size:
            raise CorruptBatchError("ZSTD buffer of the wrong length")
        return out


def _need(buf: bytes, size: int) -> None:
    if len(buf) < size:
        raise CorruptBatchError(f"Arrow buffer of {len(buf)} bytes, {size} needed")


def _column(dt: DataType, rows: int, nulls: int, fetch: _Buffers) -> list[Any]:
    validity = fetch.take()
    values = _values(dt, rows, fetch)
    if nulls:
        _need(validity, (rows + 7) // 8)
        for i in range(rows):
            if not validity[i >> 3] >> (i & 7) & 1:
                values[i] = None
    return values


def _values(dt: DataType, rows: int, fetch: _Buffers) -> list[Any]:
    root = dt.root
    data = fetch.take()
    letter = _letter(dt)
    if letter is not None:
        width = struct.calcsize(letter)
        _need(data, rows * width)
        return list(struct.unpack_from(f"<{rows}{letter}", data))
    if root == "BOOLEAN":
        _need(data, (rows + 7) // 8)
        return [bool(data[i >> 3] >> (i & 7) & 1) for i in range(rows)]
    if root == "DECIMAL":
        _need(data, rows * 16)
        scale = dt.scale or 0
        return [
            decimal_from_unscaled(
                int.from_bytes(data[16 * i : 16 * i + 16], "little", signed=True), scale
            )
            for i in range(rows)
        ]
    if root == "BINARY":
        n = dt.length or 1
        _need(data, rows * n)
        return [data[n * i : n * i + n] for i in range(rows)]
    # STRING, CHAR, BYTES: int32 offsets, then the data buffer
    offsets_buf, data = data, fetch.take()
    if rows == 0:
        return []
    _need(offsets_buf, 4 * (rows + 1))
    offsets = struct.unpack_from(f"<{rows + 1}i", offsets_buf)
    if (
        offsets[0] < 0
        or offsets[-1] > len(data)
        or any(a > b for a, b in itertools.pairwise(offsets))
    ):
        raise CorruptBatchError("Arrow offsets out of order or past the data")
    if root == "BYTES":
        return [data[a:b] for a, b in itertools.pairwise(offsets)]
    return [data[a:b].decode() for a, b in itertools.pairwise(offsets)]

"""Value record batches (``DefaultValueRecordBatch``): ScanKv and LimitScan on PK tables.

Layout (little-endian, the same at Fluss 0.9.1 and 1.0; no CRC)::

    0  int32  length         batch size - 4
    4  int8   magic          0
    5  int32  record_count
    9  records: int32 length (bytes after it) | int16 schema_id | row

The row is in the table's ``table.kv.format`` (COMPACTED by default, or INDEXED) and belongs to
the schema of its own ``schema_id``: rows of one batch may come from different schemas after
ALTER TABLE.

A Lookup/PrefixLookup value is the same ``int16 schema_id | row`` without the length
(``ValueEncoder``): see :func:`split_value`.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from typing import TYPE_CHECKING, Any

from fluss_proto.records._base import RowDecoder
from fluss_proto.records.compacted_row import CompactedRowDecoder
from fluss_proto.records.errors import (
    CorruptBatchError,
    RecordDecodeError,
    TruncatedBatchError,
    UnknownMagicError,
)
from fluss_proto.records.indexed_row import IndexedRowDecoder

if TYPE_CHECKING:  # numpy for the columnar split; ``light=True`` splits without it
    import numpy as np
    import pyarrow as pa

__all__ = [
    "ValueBatch",
    "ValueRecord",
    "decode_value_batch",
    "lookup_values_batch",
    "make_row_decoder",
    "read_value_batch",
    "split_value",
    "value_batch_table",
]

VALUE_BATCH_HEADER_SIZE = 9
_HEADER = struct.Struct("<iBi")
_RECORD = struct.Struct("<ih")
_SCHEMA_ID = struct.Struct("<h")
_LENGTH = struct.Struct("<i")


def make_row_decoder(row_type: Any, kv_format: str = "COMPACTED") -> RowDecoder:
    """A row decoder for ``table.kv.format`` (or ``table.log.format`` INDEXED/COMPACTED)."""
    fmt = kv_format.upper()
    if fmt == "COMPACTED":
        return CompactedRowDecoder(row_type)
    if fmt == "INDEXED":
        return IndexedRowDecoder(row_type)
    raise ValueError(f"no row decoder for format {kv_format!r}")


@dataclass(frozen=True, slots=True)
class ValueRecord:
    """One record of a value batch, row still encoded at ``buffer[start:end]``."""

    schema_id: int
    buffer: bytes
    start: int
    end: int


@dataclass(frozen=True, eq=False)
class ValueBatch:
    """A split value batch: row *i* is ``buffer[starts[i]:ends[i]]`` with schema
    ``schema_ids[i]`` (numpy arrays, int64 / int64 / int16), ready for
    :meth:`~fluss_proto.records._base.RowDecoder.decode_table`; Python lists when split with
    ``light=True``. :attr:`records` gives the same rows as :class:`ValueRecord` objects."""

    magic: int
    #: Bytes of the input the batch took (its declared size).
    size: int
    buffer: bytes
    starts: np.ndarray | list[int]
    ends: np.ndarray | list[int]
    schema_ids: np.ndarray | list[int]

    @cached_property
    def records(self) -> list[ValueRecord]:
        buf = self.buffer
        return [
            ValueRecord(sid, buf, start, end)
            for sid, start, end in zip(
                _ints(self.schema_ids), _ints(self.starts), _ints(self.ends), strict=True
            )
        ]

    def __len__(self) -> int:
        return len(self.starts)

    def __iter__(self) -> Iterator[ValueRecord]:
        return iter(self.records)


def _ints(values: np.ndarray | list[int]) -> list[int]:
    return values if isinstance(values, list) else values.tolist()


def read_value_batch(
    data: bytes | bytearray | memoryview, *, bucket: Any = None, light: bool = False
) -> ValueBatch:
    """Split a value batch into records (rows undecoded). Bytes after the batch are ignored.

    ``light``: the offsets and schema ids as Python lists, without numpy (a preview's first
    rows; :meth:`RowDecoder.decode_columns` takes them)."""
    buf = data if isinstance(data, bytes) else bytes(data)
    total = len(buf)
    ctx: dict[str, Any] = {"bucket": bucket}
    if total < VALUE_BATCH_HEADER_SIZE:
        raise TruncatedBatchError(
            f"value batch header needs {VALUE_BATCH_HEADER_SIZE} bytes, got {total}", **ctx
        )
    length, magic, count = _HEADER.unpack_from(buf, 0)
    if magic != 0:
        raise UnknownMagicError(magic, "value batch", **ctx)
    size = length + 4
    if size < VALUE_BATCH_HEADER_SIZE:
        raise CorruptBatchError(f"value batch with invalid length {length}", **ctx)
    if size > total:
        raise TruncatedBatchError(f"value batch of {size} bytes but only {total} given", **ctx)
    if count < 0:
        raise CorruptBatchError(f"value batch with negative record count {count}", **ctx)
    if light:
        walked = _walk(buf, count, size)
        if walked is None:
            _check_records(buf, count, size, ctx)
            raise CorruptBatchError("malformed value batch", **ctx)  # pragma: no cover
        firsts = walked[:-1]
        sids = [_SCHEMA_ID.unpack_from(buf, s + 4)[0] for s in firsts]
        return ValueBatch(magic, size, buf, [s + 6 for s in firsts], list(walked[1:]), sids)
    import numpy as np

    heads = _record_heads(buf, count, size)
    if heads is None:
        _check_records(buf, count, size, ctx)  # raises the precise error
        raise CorruptBatchError("malformed value batch", **ctx)  # pragma: no cover
    starts, ends = heads
    if count:
        ids = np.ndarray((total - 1,), "<i2", buf, 0, (1,))[starts + 4]
    else:
        ids = np.zeros(0, np.int16)
    return ValueBatch(magic, size, buf, starts + 6, ends, ids)


def _walk(buf: bytes, count: int, size: int) -> array[int] | None:
    """Where every record starts (its int32 length field), then where the last one ends;
    None when the records do not frame correctly."""
    if count > (size - VALUE_BATCH_HEADER_SIZE) // 6:  # every record takes at least 6 bytes
        return None
    heads = array("q")
    append = heads.append
    unpack = _LENGTH.unpack_from
    pos = VALUE_BATCH_HEADER_SIZE
    try:
        for _ in repeat(None, count):
            append(pos)
            length = unpack(buf, pos)[0]
            if length < 2:  # int32 length < 2: no room for the schema id
                return None
            pos += length + 4
    except struct.error:
        return None
    if pos > size:
        return None
    heads.append(pos)
    return heads


def _record_heads(buf: bytes, count: int, size: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Start and end of every record (its int32 length field / the byte after it), or None
    when the records do not frame correctly (:func:`_walk`)."""
    import numpy as np

    walked = _walk(buf, count, size)
    if walked is None:
        return None
    pos = walked.pop()
    heads = walked
    starts = np.frombuffer(heads, np.int64) if count else np.zeros(0, np.int64)
    ends = np.empty(count, np.int64)
    ends[:-1] = starts[1:]
    if count:
        ends[-1] = pos
    if ((ends - starts) < 6).any():  # int32 length < 2: no room for the schema id
        return None
    return starts, ends


def _check_records(buf: bytes, count: int, size: int, ctx: dict[str, Any]) -> None:
    """The record walk with every check in order: raises the error of the first bad record."""
    pos = VALUE_BATCH_HEADER_SIZE
    for i in range(count):
        if pos + 6 > size:
            raise TruncatedBatchError(
                f"value record {i} header runs past the batch end", position=pos, **ctx
            )
        rec_len, _ = _RECORD.unpack_from(buf, pos)
        if rec_len < 2:
            raise CorruptBatchError(
                f"value record {i} has invalid length {rec_len}", position=pos, **ctx
            )
        stop = pos + 4 + rec_len
        if stop > size:
            raise TruncatedBatchError(
                f"value record {i} ({rec_len} bytes) runs past the batch end", position=pos, **ctx
            )
        pos = stop


DecoderSource = RowDecoder | Mapping[int, RowDecoder] | Callable[[int], RowDecoder]


def _decoder_for(decoders: DecoderSource, schema_id: int) -> RowDecoder:
    if isinstance(decoders, RowDecoder):
        return decoders
    if isinstance(decoders, Mapping):
        try:
            return decoders[schema_id]
        except KeyError:
            raise RecordDecodeError(f"no row decoder for schema id {schema_id}") from None
    return decoders(schema_id)


def decode_value_batch(
    data: bytes | bytearray | memoryview,
    decoders: DecoderSource,
    *,
    bucket: Any = None,
) -> list[dict[str, Any]]:
    """Decode every row of a value batch.

    ``decoders``: one row decoder (every row has the same schema), a mapping
    ``schema_id -> decoder``, or a callable returning the decoder of a schema id.
    """
    batch = read_value_batch(data, bucket=bucket)
    rows = []
    for rec in batch.records:
        try:
            decoder = _decoder_for(decoders, rec.schema_id)
            rows.append(decoder.decode(rec.buffer, rec.start, rec.end))
        except RecordDecodeError as exc:
            raise exc.with_context(bucket=bucket, position=rec.start) from None
    return rows


def value_batch_table(
    data: bytes | bytearray | memoryview, decoder: RowDecoder, *, bucket: Any = None
) -> pa.Table:
    """Columnar decoding of a value batch whose rows all use ``decoder``'s schema."""
    batch = read_value_batch(data, bucket=bucket)
    try:
        return decoder.decode_table(batch.buffer, batch.starts, batch.ends)
    except RecordDecodeError as exc:
        raise exc.with_context(bucket=bucket) from None


def lookup_values_batch(values: list[bytes], *, light: bool = False) -> ValueBatch:
    """Lookup values (``int16 schema_id | row`` each) as one :class:`ValueBatch`, so that
    they decode through the same path as a scan's value batch. Raises
    :class:`TruncatedBatchError` for a value too short to hold its schema id."""
    starts: list[int] = []
    ends: list[int] = []
    ids: list[int] = []
    pos = 0
    for value in values:
        if len(value) < 2:
            raise TruncatedBatchError(f"lookup value of {len(value)} bytes has no schema id")
        ids.append(_SCHEMA_ID.unpack_from(value, 0)[0])
        starts.append(pos + 2)
        pos += len(value)
        ends.append(pos)
    buffer = b"".join(values)
    if light:
        return ValueBatch(0, len(buffer), buffer, starts, ends, ids)
    import numpy as np

    return ValueBatch(
        0,
        len(buffer),
        buffer,
        np.array(starts, np.int64),
        np.array(ends, np.int64),
        np.array(ids, np.int16),
    )


def split_value(value: bytes | bytearray | memoryview) -> tuple[int, memoryview]:
    """A Lookup value ``int16 schema_id | row`` -> ``(schema_id, row bytes)``."""
    view = memoryview(value).cast("B")
    if len(view) < 2:
        raise TruncatedBatchError(f"lookup value of {len(view)} bytes has no schema id")
    (schema_id,) = _SCHEMA_ID.unpack_from(view, 0)
    return schema_id, view[2:]

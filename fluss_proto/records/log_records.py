"""Records areas of log batches in the row formats (``table.log.format`` INDEXED or COMPACTED).

Each of the batch's ``record_count`` records is (``IndexedLogRecord`` / ``CompactedLogRecord``)::

    int32 LE  length       bytes after this field
    int8      attributes   the ChangeType byte (0..4; Java reads the whole byte)
    ...       row          IndexedRow or CompactedRow, length - 1 bytes

There is no change-type vector in these formats. Every record of a batch shares the batch's
``commit_timestamp``; record *i* has offset ``base_offset + i``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fluss_proto.records._base import RowDecoder
from fluss_proto.records.errors import CorruptBatchError, RecordDecodeError, TruncatedBatchError
from fluss_proto.records.log_batch import ChangeType, LogBatch

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["LogRecord", "RawLogRecord", "decode_row_batch", "iter_raw_records", "row_batch_table"]

_LENGTH = struct.Struct("<i")
_CHANGE_TYPES = tuple(ChangeType)


@dataclass(frozen=True, slots=True)
class RawLogRecord:
    """One record of a row-format batch, row still encoded at ``buffer[start:end]``."""

    offset: int
    change_type: ChangeType
    buffer: bytes
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One decoded log record."""

    offset: int
    timestamp: int
    change_type: ChangeType
    row: dict[str, Any]


def iter_raw_records(batch: LogBatch) -> Iterator[RawLogRecord]:
    """Split the records area of an INDEXED/COMPACTED batch into records (rows undecoded)."""
    buf = bytes(batch.records)
    end = len(buf)
    pos = 0
    offset = batch.base_offset
    try:
        for i in range(batch.record_count):
            if pos + 5 > end:
                raise TruncatedBatchError(f"record {i} header runs past the batch end")
            (length,) = _LENGTH.unpack_from(buf, pos)
            if length < 1:
                raise CorruptBatchError(f"record {i} has invalid length {length}")
            stop = pos + 4 + length
            if stop > end:
                raise TruncatedBatchError(f"record {i} ({length} bytes) runs past the batch end")
            attributes = buf[pos + 4]
            if attributes >= len(_CHANGE_TYPES):
                raise CorruptBatchError(f"record {i} has unknown change type {attributes}")
            yield RawLogRecord(offset + i, _CHANGE_TYPES[attributes], buf, pos + 5, stop)
            pos = stop
    except RecordDecodeError as exc:
        raise exc.with_context(
            bucket=batch.bucket, offset=batch.base_offset, position=batch.position
        ) from None


def decode_row_batch(batch: LogBatch, decoder: RowDecoder) -> list[LogRecord]:
    """Decode every record of an INDEXED/COMPACTED batch with ``decoder``
    (an :class:`~fluss_proto.records.indexed_row.IndexedRowDecoder` or
    :class:`~fluss_proto.records.compacted_row.CompactedRowDecoder` of the batch's schema)."""
    ts = batch.commit_timestamp
    out = []
    for rec in iter_raw_records(batch):
        try:
            row = decoder.decode(rec.buffer, rec.start, rec.end)
        except RecordDecodeError as exc:
            raise exc.with_context(
                bucket=batch.bucket, offset=rec.offset, position=batch.position
            ) from None
        out.append(LogRecord(rec.offset, ts, rec.change_type, row))
    return out


def row_batch_table(
    batch: LogBatch, decoder: RowDecoder, *, with_metadata: bool = True
) -> pa.Table:
    """Columnar decoding of an INDEXED/COMPACTED batch into a ``pyarrow.Table``.

    With ``with_metadata`` three leading columns are added: ``_offset`` (int64),
    ``_change_type`` (the short string, e.g. ``+I``) and ``_timestamp`` (int64 ms).
    """
    import pyarrow as pa

    raws = list(iter_raw_records(batch))
    buf = raws[0].buffer if raws else b""
    try:
        table = decoder.decode_table(buf, [r.start for r in raws], [r.end for r in raws])
    except RecordDecodeError as exc:
        raise exc.with_context(
            bucket=batch.bucket, offset=batch.base_offset, position=batch.position
        ) from None
    if not with_metadata:
        return table
    meta = [
        ("_offset", pa.array([r.offset for r in raws], pa.int64())),
        ("_change_type", pa.array([r.change_type.short_string for r in raws], pa.string())),
        ("_timestamp", pa.array([batch.commit_timestamp] * len(raws), pa.int64())),
    ]
    for i, (name, arr) in enumerate(meta):
        table = table.add_column(i, name, arr)
    return table

"""Fluss data types -> Arrow types, and the ARROW records area of a log batch.

Type mapping (``ArrowUtils.toArrowField`` / ``DataTypeToArrowTypeConverter``, the same at Fluss
0.9.1 and 1.0):

==============================================  ==========================================
TINYINT, SMALLINT, INTEGER, BIGINT              int8, int16, int32, int64
BOOLEAN                                         bool
FLOAT, DOUBLE                                   float32, float64
CHAR(n), STRING                                 utf8
BINARY(n)                                       fixed_size_binary(n)
BYTES                                           binary
DECIMAL(p, s)                                   decimal128(p, s)
DATE                                            date32 (days)
TIME(p)                                         time32[s] p=0, time32[ms] p<=3,
                                                time64[us] p<=6, time64[ns] p<=9
TIMESTAMP(p), TIMESTAMP_LTZ(p)                  timestamp with the same unit rule and no
                                                time zone, LTZ included (values are UTC)
ARRAY<T>                                        list with child field "element"
MAP<K, V>                                       map (keys not sorted), non-null struct child
                                                "entries" of "key" (non-null) and "value"
ROW<...>                                        struct
==============================================  ==========================================

Nullability follows the Fluss type.

The ARROW records area of a log batch is (``DefaultLogRecordBatch.columnRecordIterator``):

- when the batch is not append-only, a change-type vector of ``record_count`` bytes
  (0 +A, 1 +I, 2 -U, 3 +U, 4 -D);
- then one Arrow IPC *encapsulated message* (``0xFFFFFFFF``, int32 metadata length, FlatBuffer
  ``Message`` with a ``RecordBatch`` header, padding, body) written by Arrow Java's
  ``MessageSerializer``. There is no schema message: the reader must bring the schema of the
  batch's schema id (or of the projected columns, in ascending column order). Buffers may be
  compressed with Arrow's standard ``BodyCompression`` (LZ4_FRAME or ZSTD; each buffer starts
  with an int64 uncompressed length, -1 meaning stored raw), which pyarrow decompresses.
- a batch with ``record_count == 0`` carries no Arrow message at all.

pyarrow's ``ipc.read_record_batch`` reads these messages unchanged except for one quirk of
Arrow Java (see :func:`_fix_empty_compressed_buffers`): empty buffers of LZ4_FRAME batches,
which are patched before reading.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fluss_proto.records.arrow_ipc import fb_deref as _fb_deref
from fluss_proto.records.arrow_ipc import fb_field as _fb_field
from fluss_proto.records.errors import CorruptBatchError, RecordDecodeError
from fluss_proto.records.log_batch import ChangeType, LogBatch, decode_change_types
from fluss_proto.records.rowtype import DataType, as_row_type

if TYPE_CHECKING:  # imported where used: a preview's text formats never load pyarrow
    import pyarrow as pa

__all__ = [
    "ArrowRecords",
    "decode_arrow_batch",
    "decode_arrow_message",
    "to_arrow_field",
    "to_arrow_schema",
    "to_arrow_type",
]


def _time_unit(precision: int) -> str:
    if precision == 0:
        return "s"
    if precision <= 3:
        return "ms"
    if precision <= 6:
        return "us"
    return "ns"


def to_arrow_type(dt: DataType, *, ltz_timezone: str | None = None) -> pa.DataType:
    """The Arrow type Fluss uses for ``dt``.

    ``ltz_timezone`` (e.g. ``"UTC"``) tags TIMESTAMP_LTZ columns with a time zone; Fluss itself
    writes them without one. The stored values are the same either way (UTC instants).
    """
    import pyarrow as pa

    root = dt.root
    if root == "TINYINT":
        return pa.int8()
    if root == "SMALLINT":
        return pa.int16()
    if root == "INTEGER":
        return pa.int32()
    if root == "BIGINT":
        return pa.int64()
    if root == "BOOLEAN":
        return pa.bool_()
    if root == "FLOAT":
        return pa.float32()
    if root == "DOUBLE":
        return pa.float64()
    if root in ("CHAR", "STRING"):
        return pa.string()
    if root == "BINARY":
        return pa.binary(dt.length or 1)
    if root == "BYTES":
        return pa.binary()
    if root == "DECIMAL":
        return pa.decimal128(dt.precision or 10, dt.scale or 0)
    if root == "DATE":
        return pa.date32()
    if root == "TIME_WITHOUT_TIME_ZONE":
        unit = _time_unit(dt.precision or 0)
        return pa.time32(unit) if unit in ("s", "ms") else pa.time64(unit)
    if root == "TIMESTAMP_WITHOUT_TIME_ZONE":
        return pa.timestamp(_time_unit(dt.precision if dt.precision is not None else 6))
    if root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
        unit = _time_unit(dt.precision if dt.precision is not None else 6)
        return pa.timestamp(unit, tz=ltz_timezone)
    if root == "ARRAY":
        assert dt.element is not None
        return pa.list_(to_arrow_field("element", dt.element, ltz_timezone=ltz_timezone))
    if root == "MAP":
        assert dt.key is not None and dt.value is not None
        key = to_arrow_field("key", dt.key, ltz_timezone=ltz_timezone).with_nullable(False)
        value = to_arrow_field("value", dt.value, ltz_timezone=ltz_timezone)
        return pa.map_(key, value, keys_sorted=False)
    if root == "ROW":
        return pa.struct(
            [to_arrow_field(f.name, f.type, ltz_timezone=ltz_timezone) for f in dt.fields]
        )
    raise TypeError(f"no Arrow type for {dt}")  # pragma: no cover


def to_arrow_field(name: str, dt: DataType, *, ltz_timezone: str | None = None) -> pa.Field:
    import pyarrow as pa

    return pa.field(name, to_arrow_type(dt, ltz_timezone=ltz_timezone), nullable=dt.nullable)


def to_arrow_schema(
    row_type: Any, *, projection: list[int] | None = None, ltz_timezone: str | None = None
) -> pa.Schema:
    """The Arrow schema of a row type (adapted with ``as_row_type``).

    ``projection``: column positions pushed down to the server; they are applied in ascending
    order, as the server does, whatever order they are given in.
    """
    import pyarrow as pa

    row = as_row_type(row_type)
    fields = list(row.fields)
    if projection is not None:
        fields = [fields[i] for i in sorted(set(projection))]
    return pa.schema([to_arrow_field(f.name, f.type, ltz_timezone=ltz_timezone) for f in fields])


# ------------------------------------------------------------------ payload decoding

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U16 = struct.Struct("<H")
_BUFFER = struct.Struct("<qq")
_RECORD_BATCH_HEADER = 3  # MessageHeader.RecordBatch
_EMPTY_COMPRESSED = bytes(8)  # int64 uncompressed length 0, no data
_RAW_EMPTY = b"\xff" * 8  # int64 -1: stored raw (here: zero bytes)


def _fix_empty_compressed_buffers(payload: bytes) -> bytes:
    """Make Arrow Java's empty compressed buffers readable by Arrow C++ (pyarrow).

    Arrow Java's ``AbstractCompressionCodec`` writes an empty buffer of a compressed batch as
    8 bytes holding uncompressed length 0 and no codec frame. Arrow C++ then hands zero bytes
    to the codec, which LZ4_FRAME rejects ("Lz4 compressed input contains less than one
    frame"); Fluss writes such buffers for empty child vectors, e.g. a batch whose lists are
    all empty. Rewriting that length to -1 ("stored raw": zero bytes) means the same thing and
    reads everywhere. Only RecordBatch messages with body compression are touched; anything
    unexpected leaves the payload as it is for pyarrow to judge.
    """
    try:
        if _U32.unpack_from(payload, 0)[0] == 0xFFFFFFFF:
            meta_len, fb_start = _I32.unpack_from(payload, 4)[0], 8
        else:  # legacy framing without the continuation marker
            meta_len, fb_start = _I32.unpack_from(payload, 0)[0], 4
        if meta_len <= 0 or fb_start + meta_len > len(payload):
            return payload
        fb = payload[fb_start : fb_start + meta_len]
        body = fb_start + meta_len
        message = _fb_deref(fb, 0)
        header_type_at = _fb_field(fb, message, 1)
        header_at = _fb_field(fb, message, 2)
        if header_type_at is None or header_at is None or fb[header_type_at] != 3:
            return payload
        batch = _fb_deref(fb, header_at)
        if _fb_field(fb, batch, 3) is None:  # no BodyCompression: nothing to fix
            return payload
        buffers_at = _fb_field(fb, batch, 2)
        if buffers_at is None:
            return payload
        vec = _fb_deref(fb, buffers_at)
        (count,) = _U32.unpack_from(fb, vec)
        fixed: bytearray | None = None
        for i in range(count):
            offset, length = _BUFFER.unpack_from(fb, vec + 4 + 16 * i)
            start = body + offset
            if length == 8 and offset >= 0 and payload[start : start + 8] == _EMPTY_COMPRESSED:
                if fixed is None:
                    fixed = bytearray(payload)
                fixed[start : start + 8] = _RAW_EMPTY
        return payload if fixed is None else bytes(fixed)
    except (struct.error, IndexError):
        return payload


def decode_arrow_message(
    payload: bytes | bytearray | memoryview, schema: pa.Schema, *, validate: bool = True
) -> pa.RecordBatch:
    """One Arrow IPC encapsulated RecordBatch message (no schema on the wire) -> RecordBatch.

    The payload is copied once into an aligned buffer. With ``validate`` (the default) the
    result is fully validated, so malformed offsets can never reach later kernels.
    """
    import pyarrow as pa
    import pyarrow.ipc

    try:
        buf = pa.py_buffer(_fix_empty_compressed_buffers(bytes(payload)))
        batch = pa.ipc.read_record_batch(buf, schema)
        if validate:
            batch.validate(full=True)
    except (pa.ArrowException, ValueError, OSError, EOFError, TypeError, IndexError) as exc:
        raise CorruptBatchError(f"bad Arrow record batch message: {exc}") from exc
    return batch


@dataclass(frozen=True, slots=True)
class ArrowRecords:
    """The decoded ARROW records area of one log batch."""

    batch: LogBatch
    #: One change type per row; None for append-only batches (every row is +A).
    change_types: list[ChangeType] | None
    data: pa.RecordBatch

    @property
    def num_rows(self) -> int:
        return self.data.num_rows

    def offsets(self) -> range:
        """Log offset of each row (``base_offset + i``)."""
        return range(self.batch.base_offset, self.batch.base_offset + self.data.num_rows)


def decode_arrow_batch(
    batch: LogBatch, schema: pa.Schema, *, bucket: Any = None, validate: bool = True
) -> ArrowRecords:
    """Decode the records area of a log batch written in ARROW format.

    ``schema``: the Arrow schema of the batch's ``schema_id`` (see :func:`to_arrow_schema`),
    or of the projected columns.
    """
    bucket = batch.bucket if bucket is None else bucket
    try:
        area = batch.records
        count = batch.record_count
        if count == 0:
            import pyarrow as pa

            empty = pa.RecordBatch.from_pylist([], schema=schema)
            return ArrowRecords(batch, None if batch.append_only else [], empty)
        if batch.append_only:
            change_types = None
            payload = area
        else:
            if len(area) < count:
                raise CorruptBatchError(
                    f"change-type vector of {count} bytes does not fit in {len(area)} bytes"
                )
            change_types = decode_change_types(area[:count])
            payload = area[count:]
        data = decode_arrow_message(payload, schema, validate=validate)
        if data.num_rows != count:
            raise CorruptBatchError(
                f"Arrow message has {data.num_rows} rows, the batch header says {count}"
            )
    except RecordDecodeError as exc:
        raise exc.with_context(
            bucket=bucket, offset=batch.base_offset, position=batch.position
        ) from None
    return ArrowRecords(batch, change_types, data)

"""Test-only encoders for Fluss record formats, written from the Java *writer* logic.

Our own code, used only to build test vectors for the decoders in ``fluss_proto.records``:

- CompactedRow: ``CompactedRowWriter`` (varints, null bitmap, length-prefixed nested data);
- IndexedRow: ``IndexedRowWriter`` (null bitmap, variable-length list, fixed-width fields);
- BinaryArray / BinaryMap: ``BinaryArrayWriter`` + ``AbstractBinaryWriter`` (8-byte-rounded
  fixed part, inline data of <= 7 bytes, 16 bytes reserved per non-compact decimal, 8 bytes per
  high-precision timestamp, var-length data rounded to 8 bytes), ``BinaryMap.valueOf``;
- log batches: ``MemoryLogRecordsArrowBuilder`` / ``MemoryLogRecordsRowBuilder`` headers per
  magic with the CRC-32C over [schema_id, end);
- value batches: ``DefaultValueRecordBatch.Builder``;
- Arrow payloads: a pyarrow IPC stream's RecordBatch message, as Arrow Java's
  ``MessageSerializer`` writes it (no schema message).

Value conventions mirror the decoders; a timestamp may also be given as ``Ts(millis, nanos)``.
"""

from __future__ import annotations

import struct
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.ipc

from fluss_proto.records.crc32c import crc32c_python
from fluss_proto.records.rowtype import DataType

_EPOCH = datetime(1970, 1, 1)


class Ts(NamedTuple):
    millis: int
    nanos: int = 0


# ------------------------------------------------------------------ value helpers


def ts_parts(value: Any) -> tuple[int, int]:
    if isinstance(value, Ts):
        return value.millis, value.nanos
    assert isinstance(value, datetime)
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    delta = value - _EPOCH
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    millis, micro_rest = divmod(micros, 1000)
    return millis, micro_rest * 1000


def days(value: date | int) -> int:
    return value if isinstance(value, int) else (value - date(1970, 1, 1)).days


def millis_of_day(value: time | int) -> int:
    if isinstance(value, int):
        return value
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000


def unscaled(value: Decimal, scale: int) -> int:
    """Exact unscaled integer (no decimal-context rounding); the value must fit the scale."""
    sign, digits, exponent = value.as_tuple()
    n = int("".join(map(str, digits)) or "0")
    shift = int(exponent) + scale
    if shift >= 0:
        n *= 10**shift
    else:
        n, rest = divmod(n, 10**-shift)
        assert rest == 0, f"{value} has more than {scale} decimals"
    return -n if sign else n


def big_endian_twos(n: int) -> bytes:
    """Java ``BigInteger.toByteArray``: minimal big-endian two's complement, >= 1 byte."""
    length = (n + (n < 0)).bit_length() // 8 + 1
    return n.to_bytes(length, "big", signed=True)


def varint(value: int, bits: int) -> bytes:
    """Java writeInt/writeLong: base-128 of the two's-complement value (not zigzag)."""
    value &= (1 << bits) - 1
    out = bytearray()
    while True:
        if value & ~0x7F == 0:
            out.append(value)
            return bytes(out)
        out.append((value & 0x7F) | 0x80)
        value >>= 7


def is_compact_decimal(dt: DataType) -> bool:
    return (dt.precision or 10) <= 18


def is_compact_ts(dt: DataType) -> bool:
    return (dt.precision if dt.precision is not None else 6) <= 3


def null_bits(values: list[Any], nbytes: int) -> bytes:
    bits = 0
    for i, v in enumerate(values):
        if v is None:
            bits |= 1 << i
    return bits.to_bytes(nbytes, "little")


# ------------------------------------------------------------------ CompactedRow


def compacted_row(row: DataType, values: list[Any] | dict[str, Any]) -> bytes:
    if isinstance(values, dict):
        values = [values.get(n) for n in row.field_names]
    out = bytearray(null_bits(values, (len(row.fields) + 7) // 8))
    for f, v in zip(row.fields, values, strict=True):
        if v is not None:
            out += compacted_field(f.type, v)
    return bytes(out)


def _lp(data: bytes) -> bytes:
    return varint(len(data), 32) + data


def compacted_field(dt: DataType, v: Any) -> bytes:
    r = dt.root
    if r == "BOOLEAN":
        return b"\x01" if v else b"\x00"
    if r == "TINYINT":
        return struct.pack("<b", v)
    if r == "SMALLINT":
        return struct.pack("<h", v)
    if r == "INTEGER":
        return varint(v, 32)
    if r == "DATE":
        return varint(days(v), 32)
    if r == "TIME_WITHOUT_TIME_ZONE":
        return varint(millis_of_day(v), 32)
    if r == "BIGINT":
        return varint(v, 64)
    if r == "FLOAT":
        return struct.pack("<f", v)
    if r == "DOUBLE":
        return struct.pack("<d", v)
    if r in ("STRING", "CHAR"):
        return _lp(v.encode())
    if r in ("BYTES", "BINARY"):
        return _lp(bytes(v))
    if r == "DECIMAL":
        u = unscaled(v, dt.scale or 0)
        return varint(u, 64) if is_compact_decimal(dt) else _lp(big_endian_twos(u))
    if r in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        ms, nanos = ts_parts(v)
        out = varint(ms, 64)
        return out if is_compact_ts(dt) else out + varint(nanos, 32)
    if r == "ARRAY":
        assert dt.element is not None
        return _lp(binary_array(dt.element, v, "compacted"))
    if r == "MAP":
        return _lp(binary_map(dt, v, "compacted"))
    if r == "ROW":
        return _lp(compacted_row(dt, v))
    raise TypeError(dt)


# ------------------------------------------------------------------ IndexedRow


def _fixed(dt: DataType) -> bool:
    if dt.root in ("STRING", "BYTES", "ARRAY", "MAP", "ROW"):
        return False
    return not (dt.root == "DECIMAL" and not is_compact_decimal(dt))


def indexed_row(row: DataType, values: list[Any] | dict[str, Any]) -> bytes:
    if isinstance(values, dict):
        values = [values.get(n) for n in row.field_names]
    nb = (len(row.fields) + 7) // 8
    var_slots = sum(1 for f in row.fields if not _fixed(f.type))
    lengths: list[int] = []
    data = bytearray()
    for f, v in zip(row.fields, values, strict=True):
        if v is None:
            continue
        enc = indexed_field(f.type, v)
        if not _fixed(f.type):
            lengths.append(len(enc))
        data += enc
    lengths += [0] * (var_slots - len(lengths))
    return null_bits(values, nb) + struct.pack(f"<{var_slots}i", *lengths) + bytes(data)


def indexed_field(dt: DataType, v: Any) -> bytes:
    r = dt.root
    if r == "BOOLEAN":
        return b"\x01" if v else b"\x00"
    if r == "TINYINT":
        return struct.pack("<b", v)
    if r == "SMALLINT":
        return struct.pack("<h", v)
    if r == "INTEGER":
        return struct.pack("<i", v)
    if r == "DATE":
        return struct.pack("<i", days(v))
    if r == "TIME_WITHOUT_TIME_ZONE":
        return struct.pack("<i", millis_of_day(v))
    if r == "BIGINT":
        return struct.pack("<q", v)
    if r == "FLOAT":
        return struct.pack("<f", v)
    if r == "DOUBLE":
        return struct.pack("<d", v)
    if r == "STRING":
        return v.encode()
    if r == "BYTES":
        return bytes(v)
    if r == "CHAR":  # writeChar: new byte[length], UTF-8 encoded into it
        raw = v.encode()
        return raw + b"\x00" * ((dt.length or 1) - len(raw))
    if r == "BINARY":  # writeBinary: zero-padded to length
        return bytes(v) + b"\x00" * ((dt.length or 1) - len(v))
    if r == "DECIMAL":
        u = unscaled(v, dt.scale or 0)
        return struct.pack("<q", u) if is_compact_decimal(dt) else big_endian_twos(u)
    if r in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        ms, nanos = ts_parts(v)
        return struct.pack("<q", ms) if is_compact_ts(dt) else struct.pack("<qi", ms, nanos)
    if r == "ARRAY":
        assert dt.element is not None
        return binary_array(dt.element, v, "indexed")
    if r == "MAP":
        return binary_map(dt, v, "indexed")
    if r == "ROW":
        return indexed_row(dt, v)
    raise TypeError(dt)


# ------------------------------------------------------------------ BinaryArray / BinaryMap


def _slot_size(dt: DataType) -> int:
    if dt.root in ("BOOLEAN", "TINYINT"):
        return 1
    if dt.root == "SMALLINT":
        return 2
    if dt.root in ("INTEGER", "FLOAT", "DATE", "TIME_WITHOUT_TIME_ZONE"):
        return 4
    return 8


def _round8(n: int) -> int:
    return (n + 7) & ~7


def binary_array(elem: DataType, values: list[Any], fmt: str) -> bytes:
    """``ArraySerializer.toBinaryArray`` with a ``BinaryArrayWriter``."""
    n = len(values)
    header = 4 + ((n + 31) // 32) * 4
    slot = _slot_size(elem)
    fixed = _round8(header + slot * n)
    buf = bytearray(fixed)
    struct.pack_into("<i", buf, 0, n)

    def slot_at(i: int) -> int:
        return header + slot * i

    def put_var(i: int, data: bytes) -> None:  # writeBytesToVarLenPart / writeSegments...
        cursor = len(buf)
        buf.extend(data + b"\x00" * (_round8(len(data)) - len(data)))
        struct.pack_into("<Q", buf, slot_at(i), (cursor << 32) | len(data))

    def put_bytes(i: int, data: bytes) -> None:  # AbstractBinaryWriter.writeBytes
        if len(data) <= 7:
            word = ((0x80 | len(data)) << 56) | int.from_bytes(data, "little")
            struct.pack_into("<Q", buf, slot_at(i), word)
        else:
            put_var(i, data)

    r = elem.root
    for i, v in enumerate(values):
        if v is None:
            buf[4 + (i >> 3)] |= 1 << (i & 7)
            continue  # setNullAt(i, type) writes zeros, which the buffer already holds
        if r == "BOOLEAN":
            buf[slot_at(i)] = 1 if v else 0
        elif r == "TINYINT":
            struct.pack_into("<b", buf, slot_at(i), v)
        elif r == "SMALLINT":
            struct.pack_into("<h", buf, slot_at(i), v)
        elif r == "INTEGER":
            struct.pack_into("<i", buf, slot_at(i), v)
        elif r == "DATE":
            struct.pack_into("<i", buf, slot_at(i), days(v))
        elif r == "TIME_WITHOUT_TIME_ZONE":
            struct.pack_into("<i", buf, slot_at(i), millis_of_day(v))
        elif r == "FLOAT":
            struct.pack_into("<f", buf, slot_at(i), v)
        elif r == "BIGINT":
            struct.pack_into("<q", buf, slot_at(i), v)
        elif r == "DOUBLE":
            struct.pack_into("<d", buf, slot_at(i), v)
        elif r in ("STRING", "CHAR"):
            put_bytes(i, v.encode())
        elif r in ("BYTES", "BINARY"):
            put_bytes(i, bytes(v))
        elif r == "DECIMAL":
            u = unscaled(v, elem.scale or 0)
            if is_compact_decimal(elem):
                struct.pack_into("<q", buf, slot_at(i), u)
            else:  # 16 bytes reserved, offset << 32 | length
                cursor = len(buf)
                raw = big_endian_twos(u)
                buf.extend(raw + b"\x00" * (16 - len(raw)))
                struct.pack_into("<Q", buf, slot_at(i), (cursor << 32) | len(raw))
        elif r in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
            ms, nanos = ts_parts(v)
            if is_compact_ts(elem):
                struct.pack_into("<q", buf, slot_at(i), ms)
            else:  # millis in the var part, offset << 32 | nanos in the slot
                cursor = len(buf)
                buf.extend(struct.pack("<q", ms))
                struct.pack_into("<Q", buf, slot_at(i), (cursor << 32) | nanos)
        elif r == "ARRAY":
            assert elem.element is not None
            put_var(i, binary_array(elem.element, v, fmt))
        elif r == "MAP":
            put_var(i, binary_map(elem, v, fmt))
        elif r == "ROW":
            put_var(i, compacted_row(elem, v) if fmt == "compacted" else indexed_row(elem, v))
        else:
            raise TypeError(elem)
    return bytes(buf)


def binary_map(
    map_type: DataType, pairs: list[tuple[Any, Any]] | dict[Any, Any], fmt: str
) -> bytes:
    items = list(pairs.items()) if isinstance(pairs, dict) else list(pairs)
    assert map_type.key is not None and map_type.value is not None
    keys = binary_array(map_type.key, [k for k, _ in items], fmt)
    values = binary_array(map_type.value, [v for _, v in items], fmt)
    return struct.pack("<i", len(keys)) + keys + values


# ------------------------------------------------------------------ batches


def log_record(change_type: int, row: bytes) -> bytes:
    """IndexedLogRecord / CompactedLogRecord.writeTo."""
    return struct.pack("<ib", len(row) + 1, change_type) + row


def log_batch(
    records: bytes,
    *,
    magic: int = 0,
    layout: str = "0.9",
    base_offset: int = 0,
    record_count: int,
    last_offset_delta: int | None = None,
    commit_timestamp: int = 0,
    schema_id: int = 1,
    append_only: bool = True,
    writer_id: int = -1,
    batch_sequence: int = -1,
    leader_epoch: int = 0,
    statistics: bytes = b"",
) -> bytes:
    """A log batch of any magic; ``layout`` picks the magic-1 layout ("0.9" or "1.0")."""
    if last_offset_delta is None:
        last_offset_delta = max(record_count - 1, 0)
    has_epoch = magic == 2 or (magic == 1 and layout == "0.9")
    has_stats = magic == 2 or (magic == 1 and layout == "1.0")
    after_crc = struct.pack(
        "<hBiqii",
        schema_id,
        1 if append_only else 0,
        last_offset_delta,
        writer_id,
        batch_sequence,
        record_count,
    )
    if has_stats:
        after_crc += struct.pack("<i", len(statistics)) + statistics
    elif statistics:
        raise ValueError("this magic has no statistics")
    after_crc += records
    crc = crc32c_python(after_crc)
    head = struct.pack("<q", commit_timestamp)
    if has_epoch:
        head += struct.pack("<i", leader_epoch)
    head += struct.pack("<I", crc)
    body = bytes([magic & 0xFF]) + head + after_crc
    return struct.pack("<qi", base_offset, len(body)) + body


def value_batch(records: list[tuple[int, bytes]]) -> bytes:
    """DefaultValueRecordBatch.Builder: [(schema_id, row bytes)]."""
    body = b"".join(struct.pack("<ih", len(r) + 2, sid) + r for sid, r in records)
    return struct.pack("<iBi", len(body) + 5, 0, len(records)) + body


def arrow_message(data: pa.RecordBatch, compression: str | None = None) -> bytes:
    """The encapsulated IPC RecordBatch message (as Arrow Java's MessageSerializer writes)."""
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_stream(sink, data.schema, options=options) as writer:
        writer.write_batch(data)
    reader = pa.ipc.MessageReader.open_stream(sink.getvalue())
    schema_msg = reader.read_next_message()
    assert schema_msg.type == "schema"
    batch_msg = reader.read_next_message()
    assert batch_msg.type == "record batch"
    return batch_msg.serialize().to_pybytes()

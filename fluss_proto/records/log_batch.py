"""Log record batches (``DefaultLogRecordBatch`` / ``LogRecordBatchFormat``) in a fetch blob.

All integers are little-endian. Common prefix::

    0  int64  base_offset
    8  int32  length            (batch size - 12)
    12 int8   magic
    13 int64  commit_timestamp  (ms, set by the server on append)

then, by magic (offsets from the batch start):

=====================  ======  ================  ================  ======
field                  V0      V1 @0.9 (epoch)   V1 @1.0 (stats)   V2@1.0
=====================  ======  ================  ================  ======
leader_epoch int32     -       21                -                 21
crc uint32             21      25                21                25
schema_id int16        25      29                25                29
attributes int8        27      31                27                31
last_offset_delta i32  28      32                28                32
writer_id int64        32      36                32                36
batch_sequence int32   40      44                40                44
record_count int32     44      48                44                48
statistics_length i32  -       -                 48                52
header size            48      52                52                56
=====================  ======  ================  ================  ======

- CRC-32C covers the bytes from ``schema_id`` to the end of the batch. It is stale after a
  server-side projection (``FileLogProjection`` rewrites length and Arrow metadata only), so
  pass ``check_crc=False`` when projection was pushed down.
- attributes bit 0 = append-only (ARROW batches without a change-type vector).
- With statistics (V1 @1.0, V2) ``statistics_length`` bytes of statistics follow the fixed
  header; the records area starts after them. Projection sets the length to 0.
- ``last_offset = base_offset + last_offset_delta``; the next fetch offset is one past it. A
  batch may have ``record_count == 0`` (and no records) and still use one offset.
- Both 0.9.1 and 1.0 write V0 (``CURRENT_LOG_MAGIC_VALUE``); 1.0 writes V1 when the table has
  ``table.statistics.columns``. Magic 1 is ambiguous, hence ``magic1_layout``.

A fetch blob is batches back to back; an incomplete batch at the end (byte-limited fetch) is
not an error: parsing stops before it (``MemorySegmentLogInputStream``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any

from fluss_proto.records.crc32c import crc32c
from fluss_proto.records.errors import (
    AmbiguousMagicError,
    CorruptBatchError,
    CrcMismatchError,
    TruncatedBatchError,
    UnknownMagicError,
)

__all__ = [
    "LOG_OVERHEAD",
    "ChangeType",
    "LogBatch",
    "LogBatches",
    "Magic1Layout",
    "decode_change_types",
    "iter_log_batches",
    "magic1_layout_for_api_keys",
    "magic1_layout_for_version",
    "parse_log_batch",
    "read_log_batches",
]

#: base_offset (8) + length (4): the bytes before ``length`` counts from.
LOG_OVERHEAD = 12
#: The smallest header (V0); a trailing fragment shorter than this is never a batch.
V0_HEADER_SIZE = 48
APPEND_ONLY_FLAG = 0x01
NO_WRITER_ID = -1
NO_BATCH_SEQUENCE = -1
NO_LEADER_EPOCH = -1


class ChangeType(IntEnum):
    """Row change kinds (``ChangeType.toByteValue``)."""

    APPEND_ONLY = 0
    INSERT = 1
    UPDATE_BEFORE = 2
    UPDATE_AFTER = 3
    DELETE = 4

    @property
    def short_string(self) -> str:
        return _SHORT[self]


_SHORT = {
    ChangeType.APPEND_ONLY: "+A",
    ChangeType.INSERT: "+I",
    ChangeType.UPDATE_BEFORE: "-U",
    ChangeType.UPDATE_AFTER: "+U",
    ChangeType.DELETE: "-D",
}
_CHANGE_TYPES = tuple(ChangeType)
_CHANGE_TYPE_BYTES = bytes(range(len(_CHANGE_TYPES)))


def decode_change_types(raw: bytes | bytearray | memoryview) -> list[ChangeType]:
    """A change-type vector (one byte per row) -> ChangeType list; other bytes are corrupt."""
    data = bytes(raw)
    if data.translate(None, _CHANGE_TYPE_BYTES):
        bad = next(b for b in data if b >= len(_CHANGE_TYPES))
        raise CorruptBatchError(f"unknown change type byte {bad}")
    return [_CHANGE_TYPES[b] for b in data]


class Magic1Layout(Enum):
    """What a magic-1 log batch holds after ``commit_timestamp``."""

    #: Fluss 0.9.x: a leader epoch (52-byte header).
    LEADER_EPOCH = "0.9"
    #: Fluss 1.0: a statistics length after ``record_count`` (52-byte header + statistics).
    STATISTICS = "1.0"


def magic1_layout_for_version(version: str) -> Magic1Layout:
    """The magic-1 layout of a Fluss server version such as ``"0.9.1-incubating"``."""
    parts = version.split(".")
    try:
        major, minor = int(parts[0]), int(parts[1].split("-")[0])
    except (IndexError, ValueError):
        raise ValueError(f"not a Fluss version: {version!r}") from None
    return Magic1Layout.LEADER_EPOCH if (major, minor) < (1, 0) else Magic1Layout.STATISTICS


def magic1_layout_for_api_keys(api_keys: Iterable[int]) -> Magic1Layout:
    """Guess the layout from the API keys a server advertises (ApiVersions).

    A server that serves any key introduced in 1.0 writes the 1.0 layout.
    """
    from fluss_proto.api_keys import API_INFO, ApiKey

    known = {int(k) for k in ApiKey}
    for key in api_keys:
        if key in known and API_INFO[ApiKey(key)].since == "1.0":
            return Magic1Layout.STATISTICS
    return Magic1Layout.LEADER_EPOCH


# Header fields from commit_timestamp (offset 13) on, per layout.
_COMMIT_TS_OFFSET = 13
_V0 = struct.Struct("<qIhBiqii")  # ts crc schema attrs delta writer seq count
_V1_EPOCH = struct.Struct("<qiIhBiqii")  # ts epoch crc ...
_V1_STATS = struct.Struct("<qIhBiqiii")  # ... count stats_len
_V2 = struct.Struct("<qiIhBiqiii")  # ts epoch crc ... count stats_len
_PREFIX = struct.Struct("<qiB")


@dataclass(frozen=True, slots=True)
class LogBatch:
    """One log record batch: its header fields and its (not yet decoded) records area."""

    base_offset: int
    #: Whole batch size in bytes, LOG_OVERHEAD included.
    size: int
    magic: int
    commit_timestamp: int
    #: -1 when the format has no leader epoch (V0, V1 at 1.0).
    leader_epoch: int
    crc: int
    schema_id: int
    attributes: int
    last_offset_delta: int
    writer_id: int
    batch_sequence: int
    record_count: int
    #: Fixed header size of this magic (statistics excluded).
    header_size: int
    #: Offset from the batch start of the first CRC-covered byte (``schema_id``).
    crc_start: int
    #: Raw statistics block (V1 at 1.0, V2); empty when absent.
    statistics: memoryview = field(repr=False)
    #: The records area: ARROW change types + IPC message, or INDEXED/COMPACTED records.
    records: memoryview = field(repr=False)
    #: Byte position of the batch inside the parsed blob.
    position: int = 0
    #: Caller-supplied context (e.g. the table bucket), used in error messages.
    bucket: Any = field(default=None, compare=False)

    @property
    def append_only(self) -> bool:
        return bool(self.attributes & APPEND_ONLY_FLAG)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        """Where the next fetch continues: ``last_offset + 1``.

        Use this, not ``record_count``, to advance: empty batches still take an offset.
        """
        return self.base_offset + self.last_offset_delta + 1

    @property
    def looks_like_arrow(self) -> bool:
        """Whether the records area holds an Arrow IPC message.

        The format is not in the batch and the server does not check it against the table's
        ``table.log.format`` (pyfluss 1.0, for one, appends Arrow batches to INDEXED tables).
        An Arrow message starts with the 0xFFFFFFFF continuation marker (after the change-type
        vector when not append-only); a row-format record starts with its positive length.
        """
        start = 0 if self.append_only else self.record_count
        return bytes(self.records[start : start + 4]) == b"\xff\xff\xff\xff"


@dataclass(frozen=True, slots=True)
class LogBatches:
    """Result of :func:`read_log_batches`."""

    batches: list[LogBatch]
    #: Bytes of the blob taken by complete batches; anything after is an incomplete batch.
    bytes_consumed: int
    #: Bytes left over at the end (an incomplete trailing batch), 0 when none.
    bytes_remaining: int

    @property
    def next_offset(self) -> int | None:
        """``next_offset`` of the last complete batch; None if there was none."""
        return self.batches[-1].next_offset if self.batches else None

    @property
    def truncated_tail(self) -> bool:
        return self.bytes_remaining > 0

    def __iter__(self) -> Iterator[LogBatch]:
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)


def parse_log_batch(
    data: bytes | bytearray | memoryview,
    position: int = 0,
    *,
    magic1_layout: Magic1Layout | None = None,
    check_crc: bool = True,
    bucket: Any = None,
) -> LogBatch:
    """Parse the complete batch starting at ``position``; raise if it is not all there."""
    view = memoryview(data).cast("B")
    remaining = len(view) - position
    if remaining < LOG_OVERHEAD + 1:
        raise TruncatedBatchError(
            f"log batch header needs at least {LOG_OVERHEAD + 1} bytes, {remaining} left",
            bucket=bucket,
            position=position,
        )
    base_offset, length, magic = _PREFIX.unpack_from(view, position)
    size = length + LOG_OVERHEAD
    if size > remaining:
        raise TruncatedBatchError(
            f"log batch of {size} bytes but only {remaining} left",
            bucket=bucket,
            offset=base_offset,
            position=position,
        )
    return _parse(view, position, base_offset, size, magic, magic1_layout, check_crc, bucket)


def _parse(
    view: memoryview,
    position: int,
    base_offset: int,
    size: int,
    magic: int,
    magic1_layout: Magic1Layout | None,
    check_crc: bool,
    bucket: Any,
) -> LogBatch:
    ctx = {"bucket": bucket, "offset": base_offset, "position": position}
    if magic == 0:
        st, has_epoch, has_stats, crc_start = _V0, False, False, 25
    elif magic == 2:
        st, has_epoch, has_stats, crc_start = _V2, True, True, 29
    elif magic == 1:
        if magic1_layout is None:
            raise AmbiguousMagicError(**ctx)
        if magic1_layout is Magic1Layout.LEADER_EPOCH:
            st, has_epoch, has_stats, crc_start = _V1_EPOCH, True, False, 29
        else:
            st, has_epoch, has_stats, crc_start = _V1_STATS, False, True, 25
    else:
        raise UnknownMagicError(magic, **ctx)
    header_size = _COMMIT_TS_OFFSET + st.size
    if size < header_size:
        raise TruncatedBatchError(
            f"log batch of {size} bytes is smaller than its magic-{magic} header "
            f"({header_size} bytes)",
            **ctx,
        )
    fields = st.unpack_from(view, position + _COMMIT_TS_OFFSET)
    commit_ts = fields[0]
    i = 1
    epoch = NO_LEADER_EPOCH
    if has_epoch:
        epoch = fields[1]
        i = 2
    crc, schema_id, attributes, delta, writer_id, seq, count = fields[i : i + 7]
    stats_len = fields[i + 7] if has_stats else 0
    if count < 0:
        raise CorruptBatchError(f"negative record count {count}", **ctx)
    if stats_len < 0 or header_size + stats_len > size:
        raise CorruptBatchError(
            f"statistics length {stats_len} does not fit in a batch of {size} bytes", **ctx
        )
    end = position + size
    if check_crc:
        computed = crc32c(view[position + crc_start : end])
        if computed != crc:
            raise CrcMismatchError(crc, computed, **ctx)
    records_start = position + header_size + stats_len
    return LogBatch(
        base_offset=base_offset,
        size=size,
        magic=magic,
        commit_timestamp=commit_ts,
        leader_epoch=epoch,
        crc=crc,
        schema_id=schema_id,
        attributes=attributes,
        last_offset_delta=delta,
        writer_id=writer_id,
        batch_sequence=seq,
        record_count=count,
        header_size=header_size,
        crc_start=crc_start,
        statistics=view[position + header_size : records_start],
        records=view[records_start:end],
        position=position,
        bucket=bucket,
    )


def iter_log_batches(
    data: bytes | bytearray | memoryview,
    *,
    magic1_layout: Magic1Layout | None = None,
    check_crc: bool = True,
    bucket: Any = None,
    allow_incomplete_tail: bool = True,
) -> Iterator[LogBatch]:
    """Yield the complete batches of a fetch blob, in order.

    Stops silently at an incomplete trailing batch (use :func:`read_log_batches` to learn how
    many bytes were consumed); with ``allow_incomplete_tail=False`` that raises
    :class:`TruncatedBatchError` instead.
    """
    view = memoryview(data).cast("B")
    total = len(view)
    position = 0
    while True:
        remaining = total - position
        if remaining == 0:
            return
        if remaining < LOG_OVERHEAD:
            break
        base_offset, length = struct.unpack_from("<qi", view, position)
        size = length + LOG_OVERHEAD
        if size <= LOG_OVERHEAD:
            raise CorruptBatchError(
                f"log batch with invalid length {length}",
                bucket=bucket,
                offset=base_offset,
                position=position,
            )
        if remaining < size or remaining < V0_HEADER_SIZE:
            break
        magic = view[position + LOG_OVERHEAD]
        if magic > 127:
            magic -= 256
        yield _parse(view, position, base_offset, size, magic, magic1_layout, check_crc, bucket)
        position += size
    if not allow_incomplete_tail:
        raise TruncatedBatchError(
            f"incomplete log batch at the end ({total - position} bytes)",
            bucket=bucket,
            position=position,
        )


def read_log_batches(
    data: bytes | bytearray | memoryview,
    *,
    magic1_layout: Magic1Layout | None = None,
    check_crc: bool = True,
    bucket: Any = None,
) -> LogBatches:
    """Parse every complete batch of a fetch blob; see :class:`LogBatches`."""
    view = memoryview(data).cast("B")
    batches = list(
        iter_log_batches(view, magic1_layout=magic1_layout, check_crc=check_crc, bucket=bucket)
    )
    consumed = sum(b.size for b in batches)
    return LogBatches(batches, consumed, len(view) - consumed)

"""Shared helpers of the row decoders: value conversion per output mode, buffer handling.

Two output modes:

- ``"python"``: plain Python values (``datetime`` for timestamps, truncated to microseconds;
  ``date``; ``time``; ``Decimal``...), see ``fluss_proto.records`` for the full table;
- ``"arrow"``: values ``pyarrow.array`` accepts for the Arrow type of the column as
  ``ArrowUtils`` maps it (timestamps/times/dates as integers in the Arrow unit, so nanoseconds
  survive; BINARY(n) padded to n bytes), used by the columnar path.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Final, Literal

from fluss_proto.records.errors import RowDecodeError

Mode = Literal["python", "arrow"]
Buffer = bytes | bytearray | memoryview

#: Exceptions that, raised while decoding untrusted bytes, mean "malformed input".
MALFORMED = (IndexError, struct.error, ValueError, ArithmeticError, KeyError)
#: Bytes of the types narrower than 8, the same in Java's BinaryArray and IndexedRow.
NARROW_SIZES: Final[Mapping[str, int]] = MappingProxyType(
    {
        "BOOLEAN": 1,
        "TINYINT": 1,
        "SMALLINT": 2,
        "INTEGER": 4,
        "FLOAT": 4,
        "DATE": 4,
        "TIME_WITHOUT_TIME_ZONE": 4,
    }
)

_EPOCH = datetime(1970, 1, 1)
_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_MILLIS_PER_DAY = 86_400_000


def as_bytes(data: Buffer, start: int = 0, end: int | None = None) -> tuple[bytes, int, int]:
    """Normalise input to ``(bytes, start, end)`` without copying when it already is bytes."""
    buf = data if isinstance(data, bytes) else bytes(data)
    size = len(buf)
    if end is None:
        end = size
    if not 0 <= start <= end <= size:
        raise RowDecodeError(f"row bounds [{start}, {end}) outside a buffer of {size} bytes")
    return buf, start, end


def truncated(what: str, pos: int) -> RowDecodeError:
    return RowDecodeError(f"{what} runs past the end of the row", position=pos)


# ------------------------------------------------------------------ varints (CompactedRow)


def _read_varint(
    buf: bytes, pos: int, end: int, last_shift: int, overlong_fails: bool
) -> tuple[int, int]:
    """Base-128 bits (unsigned, not yet masked) and the position after them. The byte at
    ``last_shift`` ends the read even with its continuation bit set, unless
    ``overlong_fails`` (then that is malformed)."""
    if pos >= end:
        raise truncated("varint", pos)
    result = 0
    shift = 0
    p = pos
    while True:
        if p >= end:
            raise truncated("varint", pos)
        b = buf[p]
        p += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, p
        if shift == last_shift:
            if overlong_fails:
                raise RowDecodeError("varint64 longer than 10 bytes", position=pos)
            return result, p
        shift += 7


def read_varint32(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Java ``CompactedRowReader.readInt``: base-128, up to 5 bytes, 32-bit two's complement.

    As in Java, the fifth byte is taken whole (only its low 4 bits matter) and its high bit is
    not looked at.
    """
    if pos < end and buf[pos] < 0x80:  # one byte: most values, no call
        return buf[pos], pos + 1
    result, p = _read_varint(buf, pos, end, 28, False)
    result &= 0xFFFFFFFF
    return (result - 0x100000000 if result & 0x80000000 else result), p


def read_varint64(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Java ``CompactedRowReader.readLong``: base-128, up to 10 bytes, 64-bit two's complement.

    A tenth byte that still has its continuation bit set is malformed (Java throws).
    """
    if pos < end and buf[pos] < 0x80:  # one byte: most values, no call
        return buf[pos], pos + 1
    result, p = _read_varint(buf, pos, end, 63, True)
    result &= 0xFFFFFFFFFFFFFFFF
    return (result - (1 << 64) if result & (1 << 63) else result), p


# ------------------------------------------------------------------ temporal conversions


def date_converter(mode: Mode) -> Callable[[int], Any] | None:
    """Days since 1970-01-01 -> ``date`` (python) or unchanged int (arrow: date32)."""
    if mode == "arrow":
        return None

    def to_date(days: int) -> date:
        try:
            return date.fromordinal(_EPOCH_ORDINAL + days)
        except (ValueError, OverflowError):
            raise RowDecodeError(f"DATE {days} days is outside Python's date range") from None

    return to_date


def time_converter(precision: int, mode: Mode) -> Callable[[int], Any] | None:
    """Milliseconds of the day -> ``time`` (python) or an int in the Arrow unit (arrow)."""
    if mode == "arrow":
        if precision == 0:
            return _trunc_div_1000
        if precision <= 3:
            return None
        if precision <= 6:
            return lambda ms: ms * 1000
        return lambda ms: ms * 1_000_000

    def to_time(ms: int) -> time:
        if not 0 <= ms < _MILLIS_PER_DAY:
            raise RowDecodeError(f"TIME {ms} ms is outside one day")
        s, milli = divmod(ms, 1000)
        m, s = divmod(s, 60)
        h, m = divmod(m, 60)
        return time(h, m, s, milli * 1000)

    return to_time


def _trunc_div_1000(v: int) -> int:
    """Java ``long / 1000`` (rounds toward zero)."""
    return v // 1000 if v >= 0 else -((-v) // 1000)


def timestamp_converter(root: str, precision: int, mode: Mode) -> Callable[[int, int], Any]:
    """``(epoch millis, nanos of milli)`` -> value.

    python: naive ``datetime`` for TIMESTAMP_WITHOUT_TIME_ZONE, UTC-aware for
    TIMESTAMP_WITH_LOCAL_TIME_ZONE; sub-microsecond nanos are dropped (datetime has no
    nanoseconds; use the columnar path to keep them).
    arrow: an int in the unit ArrowUtils picks for the precision (s, ms, us, ns), computed as
    the Java Arrow writers do.
    """
    if mode == "arrow":
        if precision == 0:
            return lambda ms, nanos: _trunc_div_1000(ms)
        if precision <= 3:
            return lambda ms, nanos: ms
        if precision <= 6:
            return lambda ms, nanos: ms * 1000 + nanos // 1000
        return lambda ms, nanos: ms * 1_000_000 + nanos

    epoch = _EPOCH_UTC if root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE" else _EPOCH

    def to_datetime(ms: int, nanos: int) -> datetime:
        try:
            return epoch + timedelta(microseconds=ms * 1000 + nanos // 1000)
        except OverflowError:
            raise RowDecodeError(f"timestamp {ms} ms is outside Python's datetime range") from None

    return to_datetime


def check_nanos(nanos: int) -> int:
    if not 0 <= nanos <= 999_999:
        raise RowDecodeError(f"nano-of-millisecond {nanos} outside [0, 999999]")
    return nanos


# ------------------------------------------------------------------ decimals


def decimal_from_unscaled(unscaled: int, scale: int) -> Decimal:
    """Exact ``unscaled * 10**-scale`` (no decimal context rounding)."""
    return Decimal(f"{unscaled}E-{scale}") if scale else Decimal(unscaled)


def decimal_from_bytes(raw: bytes, precision: int, scale: int) -> Decimal | None:
    """Java ``Decimal.fromUnscaledBytes``: big-endian two's complement (``BigInteger``).

    Empty input is malformed (Java throws). A value with more digits than ``precision`` gives
    None, as Java's ``fromBigDecimal`` returns null on precision overflow.
    """
    if not raw:
        raise RowDecodeError("non-compact DECIMAL with zero bytes")
    unscaled = int.from_bytes(raw, "big", signed=True)
    digits = len(str(abs(unscaled)))
    if digits > precision:
        return None
    return decimal_from_unscaled(unscaled, scale)


def pad_binary(length: int) -> Callable[[bytes], bytes]:
    """Arrow mode for BINARY(n): FixedSizeBinary(n) needs exactly n bytes."""

    def pad(value: bytes) -> bytes:
        if len(value) > length:
            raise RowDecodeError(f"BINARY({length}) value has {len(value)} bytes")
        return value.ljust(length, b"\x00")

    return pad

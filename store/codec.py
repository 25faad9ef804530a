"""Packed integer and float arrays for the per-poll series (stdlib only: array + zlib).

An offsets row holds every bucket of one poll in one value. A *key* holds the absolute
offsets; a *delta* holds the difference to a key of the same layout, so most values are
small (or 0 on idle buckets) and compress well. Unknown values (None) are a list of
positions beside the numbers.

Format (before zlib): 1 byte typecode of the numbers ('b', 'h', 'i' or 'q'), 4 bytes count
of unknown positions, the positions (uint32), the numbers; all little-endian, the numbers'
bytes *shuffled* (all first bytes, then all second bytes...): the high bytes of small
numbers are runs of zeros that zlib nearly removes. Floats (metrics) are float32, shuffled
the same way, with NaN for unknown.
"""

from __future__ import annotations

import math
import struct
import sys
import zlib
from array import array
from collections.abc import Sequence
from typing import Final

__all__ = [
    "apply_delta",
    "delta",
    "pack_floats",
    "pack_ints",
    "pack_text",
    "unpack_array",
    "unpack_floats",
    "unpack_ints",
    "unpack_text",
]

_WIDTHS: Final = (("b", 1 << 7), ("h", 1 << 15), ("i", 1 << 31), ("q", 1 << 63))
_LITTLE: Final = sys.byteorder == "little"
#: zlib level: 6 costs ~3x level 1 for ~10% smaller rows; the writer's budget is ms per poll.
_LEVEL: Final = 1


def _le(values: array) -> bytes:  # type: ignore[type-arg]
    if not _LITTLE:
        values.byteswap()
    return values.tobytes()


def _from_le(code: str, data: bytes) -> array:  # type: ignore[type-arg]
    values = array(code)
    values.frombytes(data)
    if not _LITTLE:
        values.byteswap()
    return values


def pack_ints(values: Sequence[int | None]) -> bytes:
    if None in values:
        unknown = array("I", (i for i, v in enumerate(values) if v is None))
        numbers: Sequence[int] = [0 if v is None else v for v in values]
    else:
        unknown, numbers = array("I"), values  # type: ignore[assignment]
    biggest = max(max(numbers, default=0), -min(numbers, default=0))
    code = next(c for c, limit in _WIDTHS if biggest < limit)
    body = code.encode() + struct.pack("<I", len(unknown)) + _le(unknown)
    return zlib.compress(body + _shuffle(_le(array(code, numbers)), code), _LEVEL)


def unpack_array(data: bytes) -> tuple[array, array]:  # type: ignore[type-arg]
    """The numbers (unknown ones as 0) and the positions of the unknown ones."""
    body = zlib.decompress(data)
    code = body[:1].decode()
    (n_unknown,) = struct.unpack_from("<I", body, 1)
    at = 5 + 4 * n_unknown
    return _from_le(code, _unshuffle(body[at:], code)), _from_le("I", body[5:at])


def unpack_ints(data: bytes) -> list[int | None]:
    numbers, unknown = unpack_array(data)
    values: list[int | None] = list(numbers)
    for i in unknown:
        values[i] = None
    return values


def delta(values: Sequence[int | None], key: Sequence[int | None]) -> list[int | None] | None:
    """``values - key`` position by position; None when a known value has no known key."""
    if len(values) != len(key):
        return None
    if None not in values and None not in key:
        return [v - k for v, k in zip(values, key, strict=True)]  # type: ignore[operator]
    out: list[int | None] = []
    for v, k in zip(values, key, strict=True):
        if v is None:
            out.append(None)
        elif k is None:
            return None
        else:
            out.append(v - k)
    return out


def apply_delta(deltas: Sequence[int | None], key: Sequence[int | None]) -> list[int | None]:
    return [None if d is None or k is None else k + d for d, k in zip(deltas, key, strict=True)]


def pack_floats(values: Sequence[float | None]) -> bytes:
    """float32 (7 significant digits: enough for gauges and rates); None is NaN (no metric
    is NaN: the scraper maps NaN to None)."""
    numbers = array("f", (math.nan if v is None else v for v in values))
    return zlib.compress(_shuffle(_le(numbers), "f"), _LEVEL)


def unpack_floats(data: bytes) -> list[float | None]:
    numbers = _from_le("f", _unshuffle(zlib.decompress(data), "f"))
    return [None if math.isnan(v) else v for v in numbers]


def _shuffle(data: bytes, code: str) -> bytes:
    width = array(code).itemsize
    if width == 1:
        return data
    return b"".join(data[i::width] for i in range(width))


def _unshuffle(data: bytes, code: str) -> bytes:
    width = array(code).itemsize
    if width == 1:
        return data
    n = len(data) // width
    out = bytearray(len(data))
    for i in range(width):
        out[i::width] = data[i * n : (i + 1) * n]
    return bytes(out)


def pack_text(text: str) -> bytes:
    """Layout bodies (schema 2): JSON lists of table ids repeat their shape, zlib takes a
    200-table layout from ~3 KB to a few hundred bytes. Level 6: written once per layout."""
    return zlib.compress(text.encode(), 6)


def unpack_text(body: bytes | str) -> str:
    """A layout body of either schema: compressed (2) or plain JSON text (1)."""
    return zlib.decompress(body).decode() if isinstance(body, bytes) else body

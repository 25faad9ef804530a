"""Packed integer and float arrays for the per-poll series (stdlib only: array + zlib).

An offsets row holds every bucket of one poll in one value. A *key* holds the absolute
offsets; a *delta* holds the difference to a key of the same layout, so most values are
small (or 0 on idle buckets) and compress well. Unknown values (None) are a list of
positions beside the numbers.

Format (before zlib): 1 byte typecode of the numbers ('b', 'h', 'i' or 'q'), 4 bytes count
of unknown positions, the positions (uint32), the numbers; all little-endian.
"""

from __future__ import annotations

import math
import struct
import sys
import zlib
from array import array
from collections.abc import Sequence
from typing import Final

__all__ = ["apply_delta", "delta", "pack_floats", "pack_ints", "unpack_floats", "unpack_ints"]

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
    unknown = array("I", (i for i, v in enumerate(values) if v is None))
    numbers = [0 if v is None else v for v in values]
    biggest = max((abs(v) for v in numbers), default=0)
    code = next(c for c, limit in _WIDTHS if biggest < limit)
    body = code.encode() + struct.pack("<I", len(unknown)) + _le(unknown)
    return zlib.compress(body + _le(array(code, numbers)), _LEVEL)


def unpack_ints(data: bytes) -> list[int | None]:
    body = zlib.decompress(data)
    code = body[:1].decode()
    (n_unknown,) = struct.unpack_from("<I", body, 1)
    at = 5 + 4 * n_unknown
    unknown = _from_le("I", body[5:at])
    values: list[int | None] = list(_from_le(code, body[at:]))
    for i in unknown:
        values[i] = None
    return values


def delta(values: Sequence[int | None], key: Sequence[int | None]) -> list[int | None] | None:
    """``values - key`` position by position; None when a known value has no known key."""
    if len(values) != len(key):
        return None
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
    """float64 little-endian; None is NaN (no metric is NaN: the scraper maps NaN to None)."""
    return _le(array("d", (math.nan if v is None else v for v in values)))


def unpack_floats(data: bytes) -> list[float | None]:
    return [None if math.isnan(v) else v for v in _from_le("d", data)]

"""CRC-32C (Castagnoli), as Java's ``java.util.zip.CRC32C`` computes it.

Reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF. The standard check
value is ``crc32c(b"123456789") == 0xE3069283``.

Pure Python, table-driven "slicing by 8": one loop iteration per 8 input bytes. That runs at
some tens of MB/s; when the optional ``google_crc32c`` or ``crc32c`` package is installed its
C implementation is used instead (same results).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

__all__ = ["crc32c", "crc32c_python"]

_POLY = 0x82F63B78


def _make_tables() -> tuple[tuple[int, ...], ...]:
    t0 = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        t0.append(c)
    tables = [t0]
    for _ in range(7):
        prev = tables[-1]
        tables.append([(prev[n] >> 8) ^ t0[prev[n] & 0xFF] for n in range(256)])
    return tuple(tuple(t) for t in tables)


_T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7 = _make_tables()
_WORDS = struct.Struct("<II")


def crc32c_python(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-32C of ``data``; pass a previous result as ``crc`` to continue a running CRC."""
    t0, t1, t2, t3, t4, t5, t6, t7 = _T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7
    crc = (crc ^ 0xFFFFFFFF) & 0xFFFFFFFF
    view = memoryview(data).cast("B")
    n8 = len(view) & ~7
    if n8:
        for lo, hi in _WORDS.iter_unpack(view[:n8]):
            x = crc ^ lo
            crc = (
                t7[x & 0xFF]
                ^ t6[(x >> 8) & 0xFF]
                ^ t5[(x >> 16) & 0xFF]
                ^ t4[x >> 24]
                ^ t3[hi & 0xFF]
                ^ t2[(hi >> 8) & 0xFF]
                ^ t1[(hi >> 16) & 0xFF]
                ^ t0[hi >> 24]
            )
    for b in view[n8:]:
        crc = t0[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _accelerated() -> Callable[[bytes | bytearray | memoryview], int] | None:
    try:  # pragma: no cover - depends on optional packages
        import google_crc32c  # type: ignore[import-not-found]

        def _google(data: bytes | bytearray | memoryview) -> int:
            return int(google_crc32c.value(bytes(data)))

        if _google(b"123456789") == 0xE3069283:
            return _google
    except Exception:  # pragma: no cover
        pass
    try:  # pragma: no cover - depends on optional packages
        import crc32c as _crc32c_pkg  # type: ignore[import-not-found]

        def _pkg(data: bytes | bytearray | memoryview) -> int:
            return int(_crc32c_pkg.crc32c(data))

        if _pkg(b"123456789") == 0xE3069283:
            return _pkg
    except Exception:  # pragma: no cover
        pass
    return None


_fast = _accelerated()


def crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC-32C of ``data`` (an unsigned 32-bit int)."""
    if _fast is not None:  # pragma: no cover - depends on optional packages
        return _fast(data)
    return crc32c_python(data)

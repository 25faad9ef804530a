"""Primary-key bytes and the bucket they live in, as Fluss computes them for a lookup.

Key bytes (``CompactedKeyEncoder``, used by every table without a lake format, and by
LANCE tables): the key columns' values in CompactedRow field encoding, one after the other,
with *no* null bitmap (a key column is never NULL):

===================================  =====================================================
type                                 bytes
===================================  =====================================================
BOOLEAN, TINYINT                     1 byte
SMALLINT                             2 bytes, little-endian
INTEGER, DATE, TIME                  base-128 varint of the 32-bit two's-complement value
BIGINT                               base-128 varint of the 64-bit value
FLOAT, DOUBLE                        4 / 8 bytes, little-endian IEEE 754
STRING, CHAR, BYTES, BINARY          varint length, then the bytes (UTF-8; no padding)
DECIMAL(p <= 18)                     varint64 of the unscaled value
DECIMAL(p > 18)                      varint length, then the unscaled value as big-endian
                                     two's complement in the fewest bytes (Java BigInteger)
TIMESTAMP(_LTZ)(p <= 3)              varint64 epoch milliseconds
TIMESTAMP(_LTZ)(p > 3)               varint64 epoch milliseconds, then varint32 nanoseconds
                                     of the millisecond
===================================  =====================================================

Bucket (``FlussBucketingFunction``): ``murmurHash(hashBytes(bucket key bytes)) % buckets``,
where ``hashBytes`` is Fluss's Murmur3-32 variant (seed 42; 4-byte little-endian words; the
tail bytes one at a time, each sign-extended, through the same mixing; then ``h ^ length``
and the 32-bit finaliser) and ``murmurHash`` mixes that int once more and takes its absolute
value (``Integer.MIN_VALUE`` -> 0). The bucket key bytes are the key bytes themselves when
the bucket key is the physical primary key; otherwise the bucket-key columns encoded the
same way (a proper prefix of the key bytes, which is what makes prefix lookups work).

**Two hashes in the wild.** Fluss's Java ``MurmurHashUtils`` reads each tail byte as a
signed Java ``byte`` (sign-extended); the Rust client (fluss-rust, which pyfluss 1.0 is)
reads it unsigned (``byte as u32``). Keys whose length is not a multiple of 4 and whose
tail holds a byte >= 0x80 can therefore hash to another bucket when the Rust client writes
them than when the Java client (Flink, the Java API) does, and each client's lookups only
look in its own bucket. :func:`bucket_candidates` gives both buckets (the Java one first)
so that a lookup finds the row whichever client wrote it.

Learnt from Fluss ``CompactedKeyEncoder``, ``CompactedRowWriter``, ``KeyEncoder``,
``MurmurHashUtils``, ``MathUtils`` and ``FlussBucketingFunction`` (v0.9.1-incubating and the
1.0 line, unchanged between them). Values come in as :func:`fluss_proto.literals.internal_value`
gives them. Pure.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any, Final

from fluss_proto.literals import unscaled_bytes
from fluss_proto.records.rowtype import DataType

__all__ = ["bucket_candidates", "bucket_of", "encode_key", "hash_bytes", "murmur_mix"]

_MASK32: Final = 0xFFFFFFFF
_C1: Final = 0xCC9E2D51
_C2: Final = 0x1B873593
_SEED: Final = 42
_SHORT = struct.Struct("<h")
_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")
_WORDS = struct.Struct("<I")


def encode_key(values: Sequence[Any], types: Sequence[DataType]) -> bytes:
    """The key bytes of ``values`` (internal values, see the module doc) of ``types``.

    Raises ``ValueError`` for a None (key columns are never NULL) or a type a key cannot
    have (FLOAT and DOUBLE are encoded; ARRAY, MAP and ROW are not key types in Fluss).
    """
    out = bytearray()
    for value, dt in zip(values, types, strict=True):
        if value is None:
            raise ValueError("a key column cannot be NULL")
        _write(out, value, dt)
    return bytes(out)


def _write(out: bytearray, value: Any, dt: DataType) -> None:
    root = dt.root
    if root == "BOOLEAN":
        out.append(1 if value else 0)
    elif root == "TINYINT":
        out.append(value & 0xFF)
    elif root == "SMALLINT":
        out += _SHORT.pack(value)
    elif root in ("INTEGER", "DATE", "TIME_WITHOUT_TIME_ZONE"):
        _varint(out, value & _MASK32)
    elif root == "BIGINT":
        _varint(out, value & 0xFFFFFFFFFFFFFFFF)
    elif root == "FLOAT":
        out += _FLOAT.pack(value)
    elif root == "DOUBLE":
        out += _DOUBLE.pack(value)
    elif root in ("STRING", "CHAR"):
        _bytes(out, value.encode("utf-8"))
    elif root in ("BYTES", "BINARY"):
        _bytes(out, bytes(value))
    elif root == "DECIMAL":
        unscaled = int(value)
        if (dt.precision or 10) <= 18:
            _varint(out, unscaled & 0xFFFFFFFFFFFFFFFF)
        else:
            _bytes(out, unscaled_bytes(unscaled))
    elif root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        millis, nanos = value
        _varint(out, millis & 0xFFFFFFFFFFFFFFFF)
        if (dt.precision if dt.precision is not None else 6) > 3:
            _varint(out, nanos & _MASK32)
    else:
        raise ValueError(f"a {root} column cannot be part of a key")


def _varint(out: bytearray, unsigned: int) -> None:
    while unsigned > 0x7F:
        out.append((unsigned & 0x7F) | 0x80)
        unsigned >>= 7
    out.append(unsigned)


def _bytes(out: bytearray, raw: bytes) -> None:
    _varint(out, len(raw))
    out += raw


# ---------------------------------------------------------------------------- bucketing


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK32


def _mix_k1(k1: int) -> int:
    k1 = (k1 * _C1) & _MASK32
    k1 = _rotl(k1, 15)
    return (k1 * _C2) & _MASK32


def _mix_h1(h1: int, k1: int) -> int:
    h1 ^= k1
    h1 = _rotl(h1, 13)
    return (h1 * 5 + 0xE6546B64) & _MASK32


def _fmix(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK32
    h ^= h >> 16
    return h


def hash_bytes(data: bytes, *, signed_tail: bool = True) -> int:
    """Fluss ``MurmurHashUtils.hashUnsafeBytes`` (seed 42), as an unsigned 32-bit int;
    ``signed_tail=False``: the Rust client's variant (tail bytes unsigned)."""
    length = len(data)
    aligned = length - length % 4
    h1 = _SEED
    for (word,) in _WORDS.iter_unpack(data[:aligned]):
        h1 = _mix_h1(h1, _mix_k1(word))
    for byte in data[aligned:]:
        if signed_tail and byte >= 128:  # Java's byte is signed
            byte -= 256
        h1 = _mix_h1(h1, _mix_k1(byte & _MASK32))
    return _fmix(h1 ^ length)


def murmur_mix(code: int) -> int:
    """Fluss ``MathUtils.murmurHash``: one more mixing round, then a non-negative int."""
    code = _mix_h1(0, _mix_k1(code & _MASK32))
    code = _fmix(code ^ 4)
    signed = code - (1 << 32) if code & 0x80000000 else code
    if signed >= 0:
        return signed
    return -signed if signed != -(2**31) else 0


def bucket_of(key: bytes, buckets: int, *, signed_tail: bool = True) -> int:
    """The bucket of a (bucket) key among ``buckets`` (``FlussBucketingFunction``; with
    ``signed_tail=False`` the Rust client's)."""
    if not key:
        raise ValueError("an empty key has no bucket")
    if buckets < 1:
        raise ValueError(f"a table has at least one bucket, not {buckets}")
    return murmur_mix(hash_bytes(key, signed_tail=signed_tail)) % buckets


def bucket_candidates(key: bytes, buckets: int) -> tuple[int, ...]:
    """The buckets a key may live in: the Java client's, then the Rust client's when it
    differs (see the module doc)."""
    java = bucket_of(key, buckets)
    rust = bucket_of(key, buckets, signed_tail=False)
    return (java,) if rust == java else (java, rust)

"""Bytes of the wire format written by hand (:func:`varint`, :func:`error_body`), so tests
do not check our encoder against itself."""

from __future__ import annotations

# =========================================================================== bytes


def varint(value: int) -> bytes:
    """Protobuf varint; negative values are sign-extended to 64 bits (10 bytes)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def error_body(code: int | None, message: str | bytes | None = None) -> bytes:
    """An ErrorResponse body: error_code (field 1) and error_message (field 2), each only
    when given."""
    out = b""
    if code is not None:
        out += b"\x08" + varint(code)
    if message is not None:
        raw = message.encode() if isinstance(message, str) else message
        out += b"\x12" + varint(len(raw)) + raw
    return out

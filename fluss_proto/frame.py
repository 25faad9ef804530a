"""Fluss RPC framing: request headers, response headers, length prefixes.

Pure functions and a sans-I/O reader; nothing here touches a socket.

Wire layout (all header integers big-endian):

- request:  ``int32 frame_length`` (= 8 + body), ``int16 api_key``, ``int16 api_version``,
  ``int32 request_id``, protobuf body;
- response: ``int32 frame_length``, ``int8 type``, then
  - type 0 SUCCESS_RESPONSE: ``int32 request_id`` + the API's response message;
  - type 1 ERROR_RESPONSE:   ``int32 request_id`` + an ``ErrorResponse`` message;
  - type 2 SERVER_FAILURE:   an ``ErrorResponse`` message only (no request id); the server
    closes the connection right after it.

``max_frame_bytes`` limits the declared ``frame_length`` (the bytes after the 4-byte prefix).

Every malformed input raises a :class:`~fluss_proto.errors.ProtocolError` subclass; callers
never see ``struct.error``, ``IndexError`` or ``UnicodeDecodeError`` from this module.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from fluss_proto.errors import DecodeError, FrameTooLargeError, ProtocolError

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "LENGTH_PREFIX_SIZE",
    "MAX_REQUEST_ID",
    "REQUEST_HEADER_SIZE",
    "FrameReader",
    "ResponseFrame",
    "ResponseKind",
    "decode_length_prefix",
    "decode_response",
    "encode_request",
    "parse_error_response",
]

LENGTH_PREFIX_SIZE = 4
REQUEST_HEADER_SIZE = 8  # api_key(2) + api_version(2) + request_id(4)
MAX_REQUEST_ID = 2**31 - 1
DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024

_INT16_MIN, _INT16_MAX = -(2**15), 2**15 - 1
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1

_REQUEST_HEADER = struct.Struct(">ihhi")  # frame_length, api_key, api_version, request_id
_LENGTH = struct.Struct(">i")
_REQUEST_ID = struct.Struct(">i")


class ResponseKind(enum.IntEnum):
    """The response type byte that follows the length prefix."""

    SUCCESS = 0
    ERROR = 1
    SERVER_FAILURE = 2


@dataclass(frozen=True, slots=True)
class ResponseFrame:
    """One decoded response frame.

    ``request_id`` is ``None`` only for ``SERVER_FAILURE``. ``body`` is the protobuf payload:
    the API's response message for SUCCESS, an ``ErrorResponse`` otherwise.
    """

    kind: ResponseKind
    request_id: int | None
    body: bytes

    def __repr__(self) -> str:  # never print bodies: they may hold tokens or user data
        return (
            f"ResponseFrame(kind={self.kind.name}, request_id={self.request_id}, "
            f"body=<{len(self.body)} bytes>)"
        )


# --------------------------------------------------------------------------- requests


def encode_request(api_key: int, api_version: int, request_id: int, body: bytes) -> bytes:
    """Build a complete request frame, length prefix included.

    Out-of-range header values are caller bugs and raise ``ValueError``.
    """
    if not _INT16_MIN <= api_key <= _INT16_MAX:
        raise ValueError(f"api_key {api_key} does not fit in int16")
    if not _INT16_MIN <= api_version <= _INT16_MAX:
        raise ValueError(f"api_version {api_version} does not fit in int16")
    if not _INT32_MIN <= request_id <= _INT32_MAX:
        raise ValueError(f"request_id {request_id} does not fit in int32")
    frame_length = REQUEST_HEADER_SIZE + len(body)
    if frame_length > _INT32_MAX:
        raise ValueError(f"request body of {len(body)} bytes is too large for one frame")
    return _REQUEST_HEADER.pack(frame_length, api_key, api_version, request_id) + bytes(body)


# --------------------------------------------------------------------------- responses

# Bytes between the type byte and the body, per response kind.
_ID_SIZE = {ResponseKind.SUCCESS: 4, ResponseKind.ERROR: 4, ResponseKind.SERVER_FAILURE: 0}


def decode_response(payload: bytes | bytearray | memoryview) -> ResponseFrame:
    """Decode a response frame *without* its 4-byte length prefix."""
    if len(payload) < 1:
        raise ProtocolError("empty response frame: the response type byte is missing")
    type_byte = payload[0]
    try:
        kind = ResponseKind(type_byte)
    except ValueError:
        raise ProtocolError(
            f"unknown response type {type_byte} (expected 0 SUCCESS, 1 ERROR or 2 SERVER_FAILURE)"
        ) from None
    if kind is ResponseKind.SERVER_FAILURE:
        return ResponseFrame(kind, None, bytes(payload[1:]))
    if len(payload) < 1 + _ID_SIZE[kind]:
        raise ProtocolError(
            f"{kind.name} response frame of {len(payload)} bytes is too short for its "
            f"request id (needs at least 5)"
        )
    (request_id,) = _REQUEST_ID.unpack_from(payload, 1)
    return ResponseFrame(kind, request_id, bytes(payload[5:]))


# --------------------------------------------------------------------------- length prefixes


def decode_length_prefix(
    prefix: bytes | bytearray | memoryview, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
) -> int:
    """Read the 4-byte big-endian frame length and check it against ``max_frame_bytes``."""
    if len(prefix) != LENGTH_PREFIX_SIZE:
        raise ProtocolError(f"a length prefix is 4 bytes, got {len(prefix)}")
    (length,) = _LENGTH.unpack_from(prefix)
    if length < 0:
        raise ProtocolError(f"negative frame length {length}")
    if length > max_frame_bytes:
        raise FrameTooLargeError(
            f"frame length {length} exceeds the maximum of {max_frame_bytes} bytes"
        )
    return length


class FrameReader:
    """Incremental splitter of a byte stream into frame payloads (sans-I/O).

    ``feed`` returns every payload completed by the new data, without its length prefix.
    After an error the stream is out of sync, so every later ``feed`` raises the same error.
    """

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        if max_frame_bytes < 0:
            raise ValueError("max_frame_bytes must not be negative")
        self.max_frame_bytes = max_frame_bytes
        self._buf = bytearray()
        self._need: int | None = None  # payload length of the frame being read, once known
        self._error: ProtocolError | None = None

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as a payload."""
        return len(self._buf)

    @property
    def at_boundary(self) -> bool:
        """True when no partial frame is buffered (an EOF here is a clean end of stream)."""
        return not self._buf and self._need is None

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes]:
        if self._error is not None:
            raise self._error
        self._buf += data
        out: list[bytes] = []
        try:
            while True:
                if self._need is None:
                    if len(self._buf) < LENGTH_PREFIX_SIZE:
                        break
                    self._need = decode_length_prefix(
                        self._buf[:LENGTH_PREFIX_SIZE], max_frame_bytes=self.max_frame_bytes
                    )
                    del self._buf[:LENGTH_PREFIX_SIZE]
                if len(self._buf) < self._need:
                    break
                out.append(bytes(self._buf[: self._need]))
                del self._buf[: self._need]
                self._need = None
        except ProtocolError as exc:
            self._error = exc
            self._buf.clear()
            raise
        return out


# --------------------------------------------------------------------------- ErrorResponse

# ErrorResponse { required int32 error_code = 1; optional string error_message = 2; }
# A hand decoder keeps this module free of the generated protobuf code.

_WT_VARINT, _WT_I64, _WT_LEN, _WT_I32 = 0, 1, 2, 5


def _read_varint(buf: memoryview, pos: int) -> tuple[int, int]:
    result = 0
    for i in range(10):
        if pos >= len(buf):
            raise DecodeError("ErrorResponse: truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return result, pos
    raise DecodeError("ErrorResponse: varint longer than 10 bytes")


def parse_error_response(body: bytes | bytearray | memoryview) -> tuple[int, str | None]:
    """Decode an ``ErrorResponse`` body into ``(error_code, error_message or None)``.

    Follows protobuf rules: unknown fields are skipped, the last occurrence of a field wins,
    and the required ``error_code`` must be present. Anything malformed raises DecodeError.
    """
    buf = memoryview(body).cast("B")
    pos = 0
    code: int | None = None
    message: str | None = None
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire_type = key >> 3, key & 0x7
        if field == 0:
            raise DecodeError("ErrorResponse: field number 0 is invalid")
        if key > 0xFFFFFFFF:  # protobuf tags are 32-bit: field numbers end at 2**29 - 1
            raise DecodeError("ErrorResponse: field number out of range")
        if wire_type == _WT_VARINT:
            value, pos = _read_varint(buf, pos)
            if field == 2:
                raise DecodeError("ErrorResponse: error_message has the wrong wire type")
            if field == 1:
                value &= 0xFFFFFFFF  # int32: keep the low 32 bits, then sign-extend
                code = value - (1 << 32) if value & 0x80000000 else value
        elif wire_type == _WT_LEN:
            length, pos = _read_varint(buf, pos)
            if length > len(buf) - pos:
                raise DecodeError("ErrorResponse: length-delimited field runs past the end")
            if field == 2:
                message = bytes(buf[pos : pos + length]).decode("utf-8", errors="replace")
            elif field == 1:
                raise DecodeError("ErrorResponse: error_code has the wrong wire type")
            pos += length
        elif wire_type in (_WT_I64, _WT_I32):
            if field in (1, 2):
                raise DecodeError(f"ErrorResponse: field {field} has the wrong wire type")
            size = 8 if wire_type == _WT_I64 else 4
            if size > len(buf) - pos:
                raise DecodeError("ErrorResponse: fixed-width field runs past the end")
            pos += size
        else:
            raise DecodeError(f"ErrorResponse: unsupported wire type {wire_type}")
    if code is None:
        raise DecodeError("ErrorResponse: the required error_code field is missing")
    return code, message

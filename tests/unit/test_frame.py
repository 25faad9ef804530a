"""Frame encoding/decoding: table-driven cases plus hypothesis fuzzing."""

from __future__ import annotations

import itertools
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fluss_proto.errors import DecodeError, FlussError, FrameTooLargeError, ProtocolError
from fluss_proto.frame import (
    DEFAULT_MAX_FRAME_BYTES,
    FrameReader,
    ResponseFrame,
    ResponseKind,
    decode_length_prefix,
    decode_response,
    encode_request,
    parse_error_response,
)
from tests._testutil.wire import error_body

# At least 2,000 examples per fuzz test; more when a bigger profile is loaded (`make fuzz`).
FUZZ = settings(
    max_examples=max(2000, settings.default.max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# --------------------------------------------------------------------------- helpers


def prefixed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


# --------------------------------------------------------------------------- encode_request


@pytest.mark.parametrize(
    ("api_key", "version", "request_id", "body", "expected"),
    [
        (1000, 0, 0, b"", "00000008 03e8 0000 00000000"),
        (1012, 0, 7, b"\x0a\x00", "0000000a 03f4 0000 00000007 0a00"),
        (1016, 2, 2**31 - 1, b"abc", "0000000b 03f8 0002 7fffffff 616263"),
        (1, 1, 256, bytearray(b"\x01"), "00000009 0001 0001 00000100 01"),
    ],
)
def test_encode_request(api_key, version, request_id, body, expected):
    assert encode_request(api_key, version, request_id, body) == bytes.fromhex(expected)


@pytest.mark.parametrize(
    ("api_key", "version", "request_id"),
    [
        (2**15, 0, 0),
        (-(2**15) - 1, 0, 0),
        (1000, 2**15, 0),
        (1000, 0, 2**31),
        (1000, 0, -(2**31) - 1),
    ],
)
def test_encode_request_rejects_out_of_range_header(api_key, version, request_id):
    with pytest.raises(ValueError):
        encode_request(api_key, version, request_id, b"")


# --------------------------------------------------------------------------- decode_response


@pytest.mark.parametrize(
    ("payload", "kind", "request_id", "body"),
    [
        (b"\x00\x00\x00\x00\x07hello", ResponseKind.SUCCESS, 7, b"hello"),
        (b"\x00\x00\x00\x00\x00", ResponseKind.SUCCESS, 0, b""),
        (b"\x00\x7f\xff\xff\xff\x01", ResponseKind.SUCCESS, 2**31 - 1, b"\x01"),
        (b"\x01\x00\x00\x01\x00\x08\x05", ResponseKind.ERROR, 256, b"\x08\x05"),
        (b"\x01\xff\xff\xff\xff", ResponseKind.ERROR, -1, b""),
        (b"\x02\x08\x01", ResponseKind.SERVER_FAILURE, None, b"\x08\x01"),
        (b"\x02", ResponseKind.SERVER_FAILURE, None, b""),
    ],
)
def test_decode_response(payload, kind, request_id, body):
    for form in (payload, bytearray(payload), memoryview(payload)):
        frame = decode_response(form)
        assert frame == ResponseFrame(kind, request_id, body)
        assert isinstance(frame.body, bytes)


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        (b"", "empty"),
        (b"\x03\x00\x00\x00\x01", "unknown response type 3"),
        (b"\xff", "unknown response type 255"),
        (b"\x00", "too short"),
        (b"\x00\x00\x00\x01", "too short"),
        (b"\x01\x00", "ERROR response frame of 2 bytes is too short"),
    ],
)
def test_decode_response_rejects(payload, fragment):
    with pytest.raises(ProtocolError, match=fragment):
        decode_response(payload)


def test_response_frame_repr_hides_body():
    frame = decode_response(b"\x00\x00\x00\x00\x01secret-token")
    assert "secret" not in repr(frame)
    assert "12 bytes" in repr(frame)


# --------------------------------------------------------------------------- length prefix


@pytest.mark.parametrize(
    ("prefix", "limit", "expected"),
    [
        (b"\x00\x00\x00\x00", 10, 0),
        (b"\x00\x00\x00\x05", 10, 5),
        (b"\x00\x00\x00\x0a", 10, 10),
        (b"\x04\x00\x00\x00", DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_FRAME_BYTES),
    ],
)
def test_decode_length_prefix(prefix, limit, expected):
    assert decode_length_prefix(prefix, max_frame_bytes=limit) == expected


@pytest.mark.parametrize(
    ("prefix", "limit", "error", "fragment"),
    [
        (b"\x00\x00\x00\x0b", 10, FrameTooLargeError, "exceeds the maximum of 10"),
        (b"\x7f\xff\xff\xff", DEFAULT_MAX_FRAME_BYTES, FrameTooLargeError, "2147483647"),
        (b"\x04\x00\x00\x01", DEFAULT_MAX_FRAME_BYTES, FrameTooLargeError, "67108865"),
        (b"\xff\xff\xff\xff", 10, ProtocolError, "negative frame length -1"),
        (b"\x80\x00\x00\x00", 10, ProtocolError, "negative"),
        (b"\x00\x00\x00", 10, ProtocolError, "got 3"),
    ],
)
def test_decode_length_prefix_rejects(prefix, limit, error, fragment):
    with pytest.raises(error, match=fragment) as info:
        decode_length_prefix(prefix, max_frame_bytes=limit)
    if error is ProtocolError:
        assert not isinstance(info.value, FrameTooLargeError)


# --------------------------------------------------------------------------- FrameReader


def test_frame_reader_splits_frames_across_chunks():
    stream = prefixed(b"\x00\x00\x00\x00\x01one") + prefixed(b"") + prefixed(b"\x02xyz")
    reader = FrameReader()
    out = []
    for i in range(len(stream)):
        out += reader.feed(stream[i : i + 1])
    assert out == [b"\x00\x00\x00\x00\x01one", b"", b"\x02xyz"]
    assert reader.at_boundary
    assert reader.buffered == 0


def test_frame_reader_many_frames_in_one_chunk_and_partial_tail():
    reader = FrameReader()
    out = reader.feed(prefixed(b"a") + prefixed(b"bb") + b"\x00\x00\x00\x03c")
    assert out == [b"a", b"bb"]
    assert not reader.at_boundary
    assert reader.buffered == 1
    assert reader.feed(b"dd") == [b"cdd"]
    assert reader.at_boundary


def test_frame_reader_partial_prefix_is_not_at_boundary():
    reader = FrameReader()
    assert reader.feed(b"\x00\x00") == []
    assert not reader.at_boundary


@pytest.mark.parametrize(
    ("stream", "error"),
    [
        (b"\x00\x00\x00\x11" + b"x" * 17, FrameTooLargeError),
        (b"\xff\xff\xff\xf0", ProtocolError),
    ],
)
def test_frame_reader_errors_poison_the_reader(stream, error):
    reader = FrameReader(max_frame_bytes=16)
    with pytest.raises(error):
        reader.feed(stream)
    with pytest.raises(error):
        reader.feed(prefixed(b"ok"))


def test_frame_reader_rejects_negative_limit():
    with pytest.raises(ValueError):
        FrameReader(max_frame_bytes=-1)


# --------------------------------------------------------------------------- ErrorResponse


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (error_body(5), (5, None)),
        (error_body(12, "not leader"), (12, "not leader")),
        (error_body(-1, "boom"), (-1, "boom")),
        (error_body(0, ""), (0, "")),
        (error_body(2**31 - 1), (2**31 - 1, None)),
        (error_body(-(2**31)), (-(2**31), None)),
        # a 5-byte encoding of -1 (low 32 bits only) is accepted like protobuf does
        (b"\x08\xff\xff\xff\xff\x0f", (-1, None)),
        # message first, code second
        (error_body(None, "m") + error_body(3), (3, "m")),
        # last occurrence wins
        (error_body(1, "a") + error_body(2, "b"), (2, "b")),
        # unknown fields of every skippable wire type
        (
            b"\x18\x96\x01"  # field 3 varint
            + (b"\x21" + b"\x00" * 8)  # field 4 fixed64
            + b"\x2a\x02hi"  # field 5 length-delimited
            + (b"\x35" + b"\x00" * 4)  # field 6 fixed32
            + error_body(7, "x"),
            (7, "x"),
        ),
        (error_body(46, "caf\u00e9 \u2603"), (46, "caf\u00e9 \u2603")),
        (error_body(46, b"bad \xff utf8"), (46, "bad \ufffd utf8")),
    ],
)
def test_parse_error_response(body, expected):
    assert parse_error_response(body) == expected
    assert parse_error_response(memoryview(body)) == expected


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"", "required error_code"),
        (error_body(None, "only a message"), "required error_code"),
        (b"\x08", "truncated varint"),
        (b"\x08\x80", "truncated varint"),
        (b"\x80", "truncated varint"),
        (b"\x08" + b"\x80" * 10 + b"\x01", "longer than 10 bytes"),
        (b"\x08\x01\x12\x05ab", "runs past the end"),
        (b"\x08\x01\x21\x00\x00", "runs past the end"),
        (b"\x08\x01\x1d\x00", "runs past the end"),
        (b"\x0b\x08\x01\x0c", "wire type 3"),
        (b"\x08\x01\x0c", "wire type 4"),
        (b"\x08\x01\x1e", "wire type 6"),
        (b"\x08\x01\x1f", "wire type 7"),
        (b"\x00\x01", "field number 0"),
        (b"\x0a\x00", "error_code has the wrong wire type"),
        (b"\x08\x01\x10\x01", "error_message has the wrong wire type"),
        (b"\x0d\x00\x00\x00\x00", "field 1 has the wrong wire type"),
    ],
)
def test_parse_error_response_rejects(body, fragment):
    with pytest.raises(DecodeError, match=fragment):
        parse_error_response(body)


int32s = st.integers(min_value=-(2**31), max_value=2**31 - 1)


@FUZZ
@given(code=int32s, message=st.none() | st.text())
def test_parse_error_response_roundtrip(code, message):
    assert parse_error_response(error_body(code, message)) == (code, message)


@settings(max_examples=300, deadline=None)
@given(code=int32s, message=st.none() | st.text())
def test_parse_error_response_matches_protobuf_runtime(code, message):
    pb2 = pytest.importorskip("fluss_proto._gen.fluss_rpc_pb2")
    msg = pb2.ErrorResponse(error_code=code)
    if message is not None:
        msg.error_message = message
    assert parse_error_response(msg.SerializeToString()) == (code, message)


# --------------------------------------------------------------------------- fuzz


@FUZZ
@given(st.binary(max_size=64))
def test_fuzz_decode_response_only_typed_errors(payload):
    try:
        frame = decode_response(payload)
    except FlussError:
        return
    assert frame.kind in ResponseKind
    assert (frame.request_id is None) == (frame.kind is ResponseKind.SERVER_FAILURE)
    assert payload.endswith(frame.body)
    header = 1 if frame.kind is ResponseKind.SERVER_FAILURE else 5
    assert len(frame.body) == len(payload) - header


@FUZZ
@given(st.binary(max_size=64))
def test_fuzz_parse_error_response_only_typed_errors(body):
    try:
        code, message = parse_error_response(body)
    except FlussError as exc:
        assert isinstance(exc, DecodeError)
        return
    assert -(2**31) <= code < 2**31
    assert message is None or isinstance(message, str)


def _run_reader(chunks: list[bytes], limit: int) -> tuple[list[bytes], type[FlussError] | None]:
    reader = FrameReader(max_frame_bytes=limit)
    frames: list[bytes] = []
    for chunk in chunks:
        try:
            frames += reader.feed(chunk)
        except FlussError as exc:
            return frames, type(exc)
    return frames, None


@FUZZ
@given(chunks=st.lists(st.binary(max_size=24), max_size=8), limit=st.integers(0, 40))
def test_fuzz_frame_reader_only_typed_errors_and_chunking_is_irrelevant(chunks, limit):
    chunked, chunked_error = _run_reader(chunks, limit)
    whole, whole_error = _run_reader([b"".join(chunks)], limit)
    assert chunked_error == whole_error
    if whole_error is None:
        assert chunked == whole
    for frame in chunked:
        assert len(frame) <= limit


@FUZZ
@given(
    payloads=st.lists(st.binary(max_size=40), max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=10),
)
def test_fuzz_frame_reader_reassembles_valid_streams(payloads, cuts):
    stream = b"".join(prefixed(p) for p in payloads)
    points = sorted({0, len(stream), *(c for c in cuts if c <= len(stream))})
    chunks = [stream[a:b] for a, b in itertools.pairwise(points)]
    frames, error = _run_reader(chunks, 40)
    assert error is None
    assert frames == payloads

"""Fuzzing helpers shared by the protocol fuzz tests: byte mutations (:func:`mutated`) and
the rule that a decoder either accepts a complete message or raises a typed error
(:func:`decode_or_typed_error`)."""

from __future__ import annotations

from google.protobuf.message import Message
from hypothesis import strategies as st

from fluss_proto import messages
from fluss_proto.api_keys import ApiKey
from fluss_proto.errors import DecodeError


@st.composite
def mutated(draw: st.DrawFn, data: bytes, pool: tuple[bytes, ...] = ()) -> bytes:
    """``data`` with 1-4 mutations: bit flips, byte sets, truncation, insertions, splices
    with another sample, deletions, duplication."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "set", "truncate", "insert", "splice", "delete", "dup"]))
        n = len(out)
        i = draw(st.integers(0, n))
        if op == "flip" and n:
            out[min(i, n - 1)] ^= 1 << draw(st.integers(0, 7))
        elif op == "set" and n:
            out[min(i, n - 1)] = draw(st.sampled_from([0, 0x7F, 0x80, 0xFF, 1, 8, 0x12]))
        elif op == "truncate":
            del out[i:]
        elif op == "insert":
            out[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif op == "splice" and pool:
            other = draw(st.sampled_from(pool))
            j = draw(st.integers(0, len(other)))
            k = draw(st.integers(j, len(other)))
            out[i : draw(st.integers(i, n))] = other[j:k]
        elif op == "delete" and n:
            del out[i : draw(st.integers(i, n))]
        elif op == "dup":
            j = draw(st.integers(i, n))
            out[j:j] = out[i:j]
    return bytes(out)


def assert_strings_are_str(message: Message) -> None:
    """Every set string field holds text (upb hands out bytes for invalid UTF-8)."""
    for field, value in message.ListFields():
        values = value if field.is_repeated else [value]
        if field.type == field.TYPE_STRING:
            assert all(isinstance(v, str) for v in values), field.full_name
        elif field.message_type is not None:
            for sub in values:
                assert_strings_are_str(sub)


def decode_or_typed_error(api: ApiKey, body: bytes) -> None:
    try:
        message = messages.decode_response(api, body)
    except DecodeError:
        return
    # Accepted bodies are complete messages, with text in string fields, that survive a
    # round trip.
    assert message.IsInitialized()
    assert_strings_are_str(message)
    again = messages.decode_response(api, message.SerializeToString())
    assert again == message

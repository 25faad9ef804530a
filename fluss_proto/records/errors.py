"""Typed errors of the record decoders.

Every error a decoder in ``fluss_proto.records`` raises on purpose is a
:class:`RecordDecodeError`, itself a ``fluss_proto.errors.DecodeError``. Each carries optional
context so a caller can say where the bytes came from:

- ``bucket``: whatever the caller passed in (a table bucket object, an int, a string); never
  interpreted here;
- ``offset``: the log offset of the batch (its base offset) or of the record, when known;
- ``position``: the byte position inside the buffer handed to the decoder.

Messages are built from numbers and type names only, never from row contents.
"""

from __future__ import annotations

from typing import Any

from fluss_proto.errors import DecodeError

__all__ = [
    "AmbiguousMagicError",
    "CorruptBatchError",
    "CrcMismatchError",
    "RecordDecodeError",
    "RowDecodeError",
    "TruncatedBatchError",
    "UnknownMagicError",
]


class RecordDecodeError(DecodeError):
    """A record batch, record or row could not be decoded."""

    def __init__(
        self,
        message: str,
        *,
        bucket: Any = None,
        offset: int | None = None,
        position: int | None = None,
    ) -> None:
        self.detail = message
        self.bucket = bucket
        self.offset = offset
        self.position = position
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.bucket is not None:
            where.append(f"bucket={self.bucket}")
        if self.offset is not None:
            where.append(f"offset={self.offset}")
        if self.position is not None:
            where.append(f"position={self.position}")
        return f"{self.detail} [{' '.join(where)}]" if where else self.detail

    def with_context(
        self,
        *,
        bucket: Any = None,
        offset: int | None = None,
        position: int | None = None,
    ) -> RecordDecodeError:
        """Fill in context fields that are still unset (in place) and return self."""
        if self.bucket is None and bucket is not None:
            self.bucket = bucket
        if self.offset is None and offset is not None:
            self.offset = offset
        if self.position is None and position is not None:
            self.position = position
        self.args = (self._render(),)
        return self


class CorruptBatchError(RecordDecodeError):
    """A batch header is inconsistent (size smaller than its header, negative counts...)."""


class TruncatedBatchError(CorruptBatchError):
    """A batch (or its header, or a record inside it) ends before its declared size."""


class CrcMismatchError(CorruptBatchError):
    """The stored CRC-32C of a log batch differs from the one computed over its bytes."""

    def __init__(
        self,
        stored: int,
        computed: int,
        *,
        bucket: Any = None,
        offset: int | None = None,
        position: int | None = None,
    ) -> None:
        self.stored = stored
        self.computed = computed
        super().__init__(
            f"log batch CRC mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}",
            bucket=bucket,
            offset=offset,
            position=position,
        )


class UnknownMagicError(RecordDecodeError):
    """The batch magic (format version) is not one this decoder knows."""

    def __init__(
        self,
        magic: int,
        what: str = "log batch",
        *,
        bucket: Any = None,
        offset: int | None = None,
        position: int | None = None,
    ) -> None:
        self.magic = magic
        super().__init__(
            f"unknown {what} magic {magic}", bucket=bucket, offset=offset, position=position
        )


class AmbiguousMagicError(UnknownMagicError):
    """A magic-1 log batch was met but the caller did not say which layout the server uses.

    Fluss 0.9.x puts a leader epoch in magic 1; Fluss 1.0 puts a statistics length there.
    """

    def __init__(
        self, *, bucket: Any = None, offset: int | None = None, position: int | None = None
    ) -> None:
        self.magic = 1
        RecordDecodeError.__init__(
            self,
            "log batch magic 1 has two layouts (0.9 leader epoch, 1.0 statistics); "
            "pass magic1_layout to choose",
            bucket=bucket,
            offset=offset,
            position=position,
        )


class RowDecodeError(RecordDecodeError):
    """A row (CompactedRow, IndexedRow, BinaryArray, BinaryMap) is malformed."""

"""Typed errors raised by fluss_proto.

Two families:
- client-side failures (bad frames, timeouts, closed connections, unsupported APIs);
- ``ServerError``: an error code the Fluss server sent, mapped to a subclass per code in
  ``error_codes`` (unknown codes become ``UnknownServerCodeError``, never a crash).

Every error message is built from fields we control; secrets are never part of them.

This module is the one home of fluss_proto's own error classes (the per-code server errors
are generated in ``error_codes``; the record decoders' errors, which carry batch positions,
live in ``records.errors``). Every class name ends in ``Error``; the older names
(``ConnectionFailure``, ``UnsupportedByServer``, ``NoMessagesForApi``,
``ReadOnlyViolation``) stay as aliases.
"""

from __future__ import annotations

__all__ = [
    "AuthenticationError",
    "ConnectTimeoutError",
    "ConnectionClosedError",
    "ConnectionFailedError",
    "ConnectionFailure",
    "CoordinatorUnknownError",
    "DecodeError",
    "FilterError",
    "FlussError",
    "FrameTooLargeError",
    "InputError",
    "LiteralError",
    "LookupKeyError",
    "NoBucketAnswerError",
    "NoMessagesForApi",
    "NoMessagesForApiError",
    "PreviewArgumentError",
    "ProtocolError",
    "ReadOnlyViolation",
    "ReadOnlyViolationError",
    "RequestTimeoutError",
    "SchemaMismatchError",
    "ServerError",
    "ServerSilentError",
    "TableJsonError",
    "UnknownNodeError",
    "UnreachableError",
    "UnsupportedByServer",
    "UnsupportedByServerError",
    "UnsupportedTableError",
    "short_reason",
]


def short_reason(exc: BaseException | str, limit: int = 200) -> str:
    """The first line of an error (or of a text), at most ``limit`` characters: for log
    lines and texts that gather many failures."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:limit]


class FlussError(Exception):
    """Base of every error fluss_proto raises on purpose."""

    retriable: bool = False


class ProtocolError(FlussError):
    """The peer sent bytes that do not follow the Fluss protocol (the stream is not trusted)."""


class FrameTooLargeError(ProtocolError):
    """A frame's declared length is above the configured maximum."""


class DecodeError(ProtocolError):
    """A message body, record batch or row could not be decoded."""


class ConnectionFailedError(FlussError):
    """The connection failed or was closed; pending requests fail with this."""

    retriable = True


class ConnectionClosedError(ConnectionFailedError):
    """The connection was closed (by us, by the peer, or after a fatal error)."""


class UnreachableError(ConnectionFailedError):
    """No connection could be opened to any of the given servers."""


class ConnectTimeoutError(UnreachableError):
    """No TCP connection within the connect timeout (a black-holed address or network)."""


class CoordinatorUnknownError(UnreachableError):
    """No server could name the coordinator (none answered, or none knows it yet)."""


class UnknownNodeError(UnreachableError):
    """A tablet server id that the cluster metadata does not list (even after a refresh)."""


class RequestTimeoutError(FlussError):
    """No response arrived within the request timeout."""

    retriable = True


class ServerSilentError(RequestTimeoutError):
    """A server gave no answer within ``seconds`` (a request or the handshake timed out).

    A client that quarantines silent servers raises it at once for every later request to
    ``address`` until its next round (``FlussClient.new_round``): one hung server costs
    one wait per round, not one per request."""

    def __init__(self, address: str, seconds: float, api: str, *, again: bool = False) -> None:
        self.address = address
        self.seconds = seconds
        self.api = api
        self.again = again
        where = "earlier in this round, not asked again" if again else api
        super().__init__(f"{address} gave no answer within {seconds:g} s ({where})")

    def repeated(self) -> ServerSilentError:
        """The error a later request to the same server fails with, at once."""
        return ServerSilentError(self.address, self.seconds, self.api, again=True)


class UnsupportedByServerError(FlussError):
    """The server does not advertise the API (or version) the caller asked for."""

    def __init__(self, api: str, server: str, detail: str = "") -> None:
        self.api = api
        self.server = server
        msg = f"{api} is not supported by server {server}"
        super().__init__(f"{msg}: {detail}" if detail else msg)


class AuthenticationError(FlussError):
    """SASL authentication failed; the message carries the server's reason, never a password."""


class NoMessagesForApiError(FlussError, LookupError):
    """fluss_proto has no message definitions for this API (it is not in the .proto)."""


class ReadOnlyViolationError(FlussError):
    """A mutating API was requested on a client created without write capability."""


class ServerError(FlussError):
    """An error code returned by a Fluss server.

    Subclasses per code live in ``fluss_proto.error_codes``; use ``error_codes.from_code``.
    """

    code: int = -1
    name: str = "UNKNOWN_SERVER_ERROR"

    def __init__(
        self,
        message: str | None = None,
        *,
        api: str | None = None,
        server: str | None = None,
        code: int | None = None,
    ) -> None:
        if code is not None:
            self.code = code
        self.message = message or ""
        self.api = api
        self.server = server
        where = " ".join(
            p for p in (f"api={api}" if api else "", f"server={server}" if server else "") if p
        )
        text = f"{self.name} ({self.code})"
        if self.message:
            text += f": {self.message}"
        if where:
            text += f" [{where}]"
        super().__init__(text)


class PreviewArgumentError(FlussError, ValueError):
    """The request does not fit the table (e.g. a partition for a non-partitioned table)."""


class InputError(FlussError, ValueError):
    """A value the caller gave does not fit the table: a lookup key, a filter, a literal.
    Raised before anything is sent; the message is one line."""


class LiteralError(InputError):
    """A value cannot be read as its column's type (``column``, ``type``, ``reason``)."""

    def __init__(self, column: str, type_text: str, reason: str) -> None:
        self.column = column
        self.type_text = type_text
        self.reason = reason
        super().__init__(f"column {column!r} ({type_text}): {reason}")


class LookupKeyError(InputError):
    """A lookup key does not fit the table: a key column missing or unknown, a prefix the
    table's bucket key does not allow, a table without a primary key."""


class FilterError(InputError):
    """A filter expression is malformed or does not fit the table's columns.

    ``position`` is the 0-based character offset the problem was found at (None when it
    concerns the whole expression); the message says it as ``at character N``.
    """

    def __init__(self, reason: str, position: int | None = None) -> None:
        self.reason = reason
        self.position = position
        where = f" at character {position + 1}" if position is not None else ""
        super().__init__(f"filter{where}: {reason}")


class UnsupportedTableError(FlussError):
    """The table needs something fluss_proto does not implement (e.g. a lake format's key
    encoding); nothing was sent."""


class NoBucketAnswerError(FlussError):
    """The leader's reply did not mention a bucket that was asked for."""


class SchemaMismatchError(DecodeError):
    """A column kept its id across schemas but changed type (Fluss refuses that too)."""


class TableJsonError(DecodeError):
    """A table, schema, type or database JSON document is malformed.

    ``path`` says where (``schema.columns[3].data_type``; ``<root>`` for the document itself),
    ``reason`` what is wrong, ``column`` the name of the top-level column involved, if any.
    """

    def __init__(self, path: str, reason: str, *, column: str | None = None) -> None:
        self.path = path or "<root>"
        self.reason = reason
        self.column = column
        text = f"{self.path}: {reason}"
        if column is not None:
            text += f" (column {column!r})"
        super().__init__(text)


# Older names (before every class ended in "Error"); kept so existing imports work.
ConnectionFailure = ConnectionFailedError
UnsupportedByServer = UnsupportedByServerError
NoMessagesForApi = NoMessagesForApiError
ReadOnlyViolation = ReadOnlyViolationError

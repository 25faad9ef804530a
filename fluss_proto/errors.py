"""Typed errors raised by fluss_proto.

Two families:
- client-side failures (bad frames, timeouts, closed connections, unsupported APIs);
- ``ServerError``: an error code the Fluss server sent, mapped to a subclass per code in
  ``error_codes`` (unknown codes become ``UnknownServerCodeError``, never a crash).

Every error message is built from fields we control; secrets are never part of them.
"""

from __future__ import annotations


class FlussError(Exception):
    """Base of every error fluss_proto raises on purpose."""

    retriable: bool = False


class ProtocolError(FlussError):
    """The peer sent bytes that do not follow the Fluss protocol (the stream is not trusted)."""


class FrameTooLargeError(ProtocolError):
    """A frame's declared length is above the configured maximum."""


class DecodeError(ProtocolError):
    """A message body, record batch or row could not be decoded."""


class ConnectionFailure(FlussError):
    """The connection failed or was closed; pending requests fail with this."""

    retriable = True


class ConnectionClosedError(ConnectionFailure):
    """The connection was closed (by us, by the peer, or after a fatal error)."""


class UnreachableError(ConnectionFailure):
    """No connection could be opened to any of the given servers."""


class CoordinatorUnknownError(UnreachableError):
    """No server could name the coordinator (none answered, or none knows it yet)."""


class UnknownNodeError(UnreachableError):
    """A tablet server id that the cluster metadata does not list (even after a refresh)."""


class RequestTimeoutError(FlussError):
    """No response arrived within the request timeout."""

    retriable = True


class UnsupportedByServer(FlussError):
    """The server does not advertise the API (or version) the caller asked for."""

    def __init__(self, api: str, server: str, detail: str = "") -> None:
        self.api = api
        self.server = server
        msg = f"{api} is not supported by server {server}"
        super().__init__(f"{msg}: {detail}" if detail else msg)


class AuthenticationError(FlussError):
    """SASL authentication failed; the message carries the server's reason, never a password."""


class NoMessagesForApi(FlussError, LookupError):
    """fluss_proto has no message definitions for this API (it is not in the .proto)."""


class ReadOnlyViolation(FlussError):
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

"""Small helpers for reading replies, shared by admin, gather and scan.

One copy of each: optional protobuf fields, a reply's own error code, wrapping a stray
exception into a typed error, whether an error calls for a metadata refresh, and whether
another server may answer instead.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from fluss_proto.api_keys import ApiKey
from fluss_proto.error_codes import from_code
from fluss_proto.errors import ConnectionFailedError, FlussError, ServerError

__all__ = ["as_fluss_error", "body_error", "needs_refresh", "opt", "server_failed"]


def opt(msg: Message, name: str) -> Any:
    """The value of an optional field, or None when it is not set."""
    return getattr(msg, name) if msg.HasField(name) else None


def body_error(resp: Message, api: ApiKey, server: str) -> FlussError | None:
    """The typed error a reply (or a per-bucket entry) carries in ``error_code``, if any."""
    code = opt(resp, "error_code")
    if not code:
        return None
    return from_code(code, opt(resp, "error_message"), api=api.name, server=server)


def needs_refresh(err: BaseException | None) -> bool:
    """Errors that a metadata refresh (and a new leader) may cure."""
    return bool(getattr(err, "refresh_metadata", False)) or isinstance(err, ConnectionFailedError)


def server_failed(exc: BaseException) -> bool:
    """A failure of the server rather than of the request (another server may answer)."""
    return not isinstance(exc, ServerError) or exc.retriable


def as_fluss_error(exc: BaseException) -> FlussError:
    """``exc`` as a FlussError (wrapped when it is another Exception).

    Cancellation, KeyboardInterrupt and other BaseExceptions are re-raised, never wrapped:
    they are not per-item failures.
    """
    if isinstance(exc, FlussError):
        return exc
    if isinstance(exc, Exception):
        wrapped = FlussError(f"{type(exc).__name__}: {exc}")
        wrapped.__cause__ = exc
        return wrapped
    raise exc

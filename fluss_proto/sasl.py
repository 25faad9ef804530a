"""SASL/PLAIN authentication over Fluss's AUTHENTICATE API (1038).

The exchange, as the Fluss sources define it and as a 0.9.1 server was seen to answer it:

1. (after API_VERSIONS, which a SASL listener accepts before authentication)
   ``AuthenticateRequest{protocol="PLAIN", token=b"\\0" + username + b"\\0" + password}``.
   ``protocol`` carries the SASL *mechanism name*, upper case: a 0.9.1 server answers a
   lower-case ``"plain"`` with UNKNOWN_SERVER_ERROR (-1) and a stack trace.
2. Success: a SUCCESS frame whose ``AuthenticateResponse`` has ``challenge`` present and
   empty (body bytes ``0a 00``). PLAIN is then complete on both sides: one round trip.
   (Fluss's Java client loops while the server sends challenges and the client side is
   not complete; PLAIN is complete after its first token, so the loop is one round.)
3. Failure: ERROR_RESPONSE 46 AUTHENTICATE_EXCEPTION, e.g. "Authentication failed: Invalid
   username or password" (wrong password or unknown user alike), "SASL server enables
   [PLAIN] while protocol of client is '...'", or, on a PLAINTEXT listener, "Authenticate
   protocol not match: protocol of server is 'PLAINTEXT' while protocol of client is
   'PLAIN'". The server keeps the connection open; we close it.
4. 51 RETRIABLE_AUTHENTICATE_EXCEPTION: the server re-initialises its authenticator; the
   handshake restarts after a short backoff, a bounded number of times.

Until authentication completes, a SASL listener answers every other API (API_VERSIONS
excepted) with 46 "The connection has not completed authentication yet...".

Secrets: :class:`SaslPlain` never shows the password in ``repr``/``str``; nothing in this
module logs or formats the token, and error texts carry only the username, the server
address and the server's reason.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, NoReturn

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.errors import AuthenticationError, DecodeError, ServerError, short_reason
from fluss_proto.messages import decode_response, encode_request

if TYPE_CHECKING:
    from fluss_proto.connection import Connection

__all__ = ["MAX_AUTH_RETRIES", "PLAIN", "SaslPlain", "authenticate"]

log = logging.getLogger(__name__)

PLAIN = "PLAIN"
#: How often the handshake restarts after RETRIABLE_AUTHENTICATE_EXCEPTION (51).
MAX_AUTH_RETRIES = 3
_RETRY_BACKOFF = 0.1  # seconds, doubled per retry
_REASON_LIMIT = 300
_CODE_RETRIABLE_AUTH = 51


class SaslPlain:
    """SASL/PLAIN credentials. The password is kept out of every repr and str.

    ``username`` and ``password`` must be non-empty and free of NUL characters (NUL
    separates the fields of the PLAIN token).
    """

    __slots__ = ("__password", "_username")
    mechanism = PLAIN

    def __init__(self, username: str, password: str) -> None:
        if not isinstance(username, str) or not isinstance(password, str):
            raise TypeError("SaslPlain takes a str username and a str password")
        if not username or "\0" in username:
            raise ValueError("SASL username must be non-empty and contain no NUL character")
        if not password or "\0" in password:
            # Deliberately says nothing about the value.
            raise ValueError("SASL password must be non-empty and contain no NUL character")
        self._username = username
        self.__password = password

    @property
    def username(self) -> str:
        return self._username

    def initial_response(self) -> bytes:
        """The PLAIN token: empty authzid, NUL, username, NUL, password (UTF-8)."""
        return b"\0" + self._username.encode() + b"\0" + self.__password.encode()

    def __repr__(self) -> str:
        return f"SaslPlain(username={self._username!r}, password=<hidden>)"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SaslPlain):
            return NotImplemented
        return (self._username, self.__password) == (other._username, other.__password)

    def __hash__(self) -> int:
        return hash((SaslPlain, self._username))

    def __reduce__(self) -> NoReturn:
        raise TypeError("SaslPlain credentials are not picklable")


def _reason(exc: ServerError) -> str:
    return short_reason((exc.message or exc.name).strip() or exc.name, _REASON_LIMIT)


async def authenticate(
    conn: Connection,
    credentials: SaslPlain,
    *,
    timeout: float | None = None,
    version: int = 0,
) -> None:
    """Run the SASL handshake on ``conn`` (which must not have sent other APIs yet,
    API_VERSIONS apart).

    Raises :class:`~fluss_proto.errors.AuthenticationError` carrying the server's reason
    when the server refuses (the caller should close the connection), and lets connection
    failures and timeouts through unchanged.
    """
    server = conn.address
    who = f"SASL {credentials.mechanism} authentication as {credentials.username!r} to {server}"
    retries = 0
    while True:
        try:
            await _exchange(conn, credentials, timeout=timeout, version=version, who=who)
            log.debug("%s succeeded", who)
            return
        except ServerError as exc:
            if exc.code == _CODE_RETRIABLE_AUTH and retries < MAX_AUTH_RETRIES:
                delay = _RETRY_BACKOFF * (2**retries)
                retries += 1
                log.info(
                    "%s: retriable failure (%s); retry %d in %.1fs",
                    who,
                    _reason(exc),
                    retries,
                    delay,
                )
                await asyncio.sleep(delay)
                continue
            raise AuthenticationError(f"{who} failed: {_reason(exc)}") from exc


async def _exchange(
    conn: Connection, credentials: SaslPlain, *, timeout: float | None, version: int, who: str
) -> None:
    """One handshake.

    Fluss's Java client (``ServerConnection``) loops: a response with a challenge is answered
    with the mechanism's next token unless the client side is already complete; a response
    without one is accepted only when the client side is complete. PLAIN is complete on the
    client side as soon as its initial token is sent, so the loop always ends after the
    first response, whether its challenge is present-and-empty (what the server sends) or
    absent. Only an ERROR_RESPONSE (raised by ``conn.request``) means failure.
    """
    request = pb.AuthenticateRequest(
        protocol=credentials.mechanism, token=credentials.initial_response()
    )
    body = await conn.request(
        ApiKey.AUTHENTICATE,
        version,
        encode_request(ApiKey.AUTHENTICATE, request),
        timeout=timeout,
        api_name=ApiKey.AUTHENTICATE.name,
    )
    try:
        response = decode_response(ApiKey.AUTHENTICATE, body)
    except DecodeError as exc:
        raise AuthenticationError(f"{who} failed: {exc}") from None
    assert isinstance(response, pb.AuthenticateResponse)
    if response.challenge:
        log.debug("%s: ignoring a %d-byte challenge after completion", who, len(response.challenge))

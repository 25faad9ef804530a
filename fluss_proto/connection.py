"""One asyncio connection to one Fluss server.

Shape:

- one reader task reads frames and completes the future of the matching request id;
- ``request`` may be called from many tasks at once (pipelining); request ids count up from
  0 and wrap after 2**31-1, skipping ids still in use;
- writes go through a lock, and each frame is handed to the transport in one ``write`` call,
  so frames never interleave;
- a per-request timeout raises ``RequestTimeoutError``; the id is remembered for a while so
  a late response is dropped silently instead of being taken for a protocol violation;
- anything that puts the byte stream out of sync (oversized or garbage frame, a response for
  an id that was never sent, a SERVER_FAILURE, EOF) closes the connection and fails every
  pending request with that error. After that every ``request`` raises
  ``ConnectionClosedError``.

Nothing here logs or formats request or response bodies.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from types import TracebackType
from typing import NamedTuple, Protocol

from fluss_proto._inflight import ABANDONED_IDS_KEPT as ABANDONED_IDS_KEPT  # re-exported
from fluss_proto._inflight import InFlight
from fluss_proto.cluster import format_address
from fluss_proto.errors import (
    ConnectionClosedError,
    ConnectTimeoutError,
    FlussError,
    ProtocolError,
    RequestTimeoutError,
    ServerError,
    UnreachableError,
)
from fluss_proto.frame import (
    DEFAULT_MAX_FRAME_BYTES,
    FrameReader,
    ResponseFrame,
    ResponseKind,
    decode_response,
    encode_request,
    parse_error_response,
)

__all__ = ["Connection", "ErrorFromCode", "WireRequest", "default_error_from_code"]

log = logging.getLogger(__name__)


_CLOSE_WAIT_SECONDS = 1.0
_STREAM_LIMIT = 1 << 20  # asyncio StreamReader buffer high-water mark
_READ_CHUNK = 1 << 18  # most bytes taken from the StreamReader per read
_warned_error_codes = False


class WireRequest(NamedTuple):
    """One request of :meth:`Connection.request_many` (a tuple: gather builds thousands)."""

    api_key: int
    api_version: int
    body: bytes
    #: Names the API in error texts; ``api_key=N`` when None.
    api_name: str | None = None


class ErrorFromCode(Protocol):
    def __call__(
        self, code: int, message: str | None, *, api: str | None = None, server: str | None = None
    ) -> ServerError: ...


def default_error_from_code(
    code: int, message: str | None, *, api: str | None = None, server: str | None = None
) -> ServerError:
    """Map a server error code to its typed exception via ``fluss_proto.error_codes``.

    Imported lazily; if that module does not exist, a plain ``ServerError`` carrying the code
    is returned.
    """
    global _warned_error_codes
    try:
        from fluss_proto.error_codes import from_code
    except ImportError as exc:
        if exc.name != "fluss_proto.error_codes" and not _warned_error_codes:
            _warned_error_codes = True
            log.warning(
                "fluss_proto.error_codes failed to import (%s); using plain ServerError", exc
            )
        return ServerError(message, api=api, server=server, code=code)
    return from_code(code, message, api=api, server=server)


class Connection:
    """A pipelined request/response connection to one Fluss server.

    Create with :meth:`open`; always :meth:`close` it (or use ``async with``).

    Past 350 lines on purpose: one socket's writes, reader and shutdown share its state, and
    :meth:`request` / :meth:`request_many` each handle timeouts, cancellation and a lost
    transport; the request-id bookkeeping is held in an :class:`~fluss_proto._inflight.InFlight`.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        host: str,
        port: int,
        request_timeout: float | None = 30.0,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        label: str | None = None,
        error_from_code: ErrorFromCode | None = None,
    ) -> None:
        """Wrap an already-open stream pair (used by :meth:`open`; needs a running loop)."""
        self.host = host
        self.port = port
        self.address = format_address(host, port)
        self.label = label or self.address
        self.request_timeout = request_timeout
        self.max_frame_bytes = max_frame_bytes
        self._error_from_code: ErrorFromCode = error_from_code or default_error_from_code
        self._reader = reader
        self._writer = writer
        self._loop = asyncio.get_running_loop()
        self._inflight = InFlight()
        self._write_lock = asyncio.Lock()
        self._closed = False
        self._close_reason: BaseException | None = None
        self._reader_task = self._loop.create_task(
            self._read_loop(), name=f"fluss-reader[{self.label}]"
        )

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(
        cls,
        host: str,
        port: int,
        *,
        connect_timeout: float | None = 10.0,
        request_timeout: float | None = 30.0,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        label: str | None = None,
        error_from_code: ErrorFromCode | None = None,
    ) -> Connection:
        """Open a TCP connection; failures become ``UnreachableError`` naming host:port."""
        address = format_address(host, port)
        try:
            async with asyncio.timeout(connect_timeout):
                reader, writer = await asyncio.open_connection(host, port, limit=_STREAM_LIMIT)
        except TimeoutError:
            raise ConnectTimeoutError(
                f"could not connect to {address}: timed out after {connect_timeout}s"
            ) from None
        except OSError as exc:
            raise UnreachableError(f"could not connect to {address}: {exc}") from exc
        except (OverflowError, ValueError) as exc:
            # A port outside 0..65535 or a host no resolver accepts (e.g. one holding a NUL
            # byte), typically from server metadata: not a bug of the caller.
            raise UnreachableError(f"could not connect to {address}: {exc}") from exc
        log.debug("connected to %s", address)
        return cls(
            reader,
            writer,
            host=host,
            port=port,
            request_timeout=request_timeout,
            max_frame_bytes=max_frame_bytes,
            label=label,
            error_from_code=error_from_code,
        )

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def in_flight(self) -> int:
        """Requests sent (or being sent) and still waiting for their response."""
        return len(self._inflight)

    async def close(self) -> None:
        """Close the connection; every pending request fails with ConnectionClosedError.

        Idempotent, and safe to call after the connection failed by itself.
        """
        self._shutdown(ConnectionClosedError(f"connection to {self._where()} was closed"))
        if self._reader_task is not asyncio.current_task():
            try:
                await self._reader_task
            except asyncio.CancelledError:
                # Our own cancellation of the reader is expected; a cancellation of the task
                # calling close() must propagate.
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
        try:
            async with asyncio.timeout(_CLOSE_WAIT_SECONDS):
                await self._writer.wait_closed()
        except (TimeoutError, OSError):
            self._writer.transport.abort()

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"open, {len(self._inflight)} in flight"
        return f"<Connection {self._where()} {state}>"

    # ------------------------------------------------------------------ requests

    async def request(
        self,
        api_key: int,
        api_version: int,
        body: bytes,
        *,
        timeout: float | None = None,
        api_name: str | None = None,
    ) -> bytes:
        """Send one request and return the body of its SUCCESS response.

        ``timeout`` overrides the connection's ``request_timeout`` (``None`` = use it); it
        covers waiting to write as well as waiting for the response.

        Raises: the ``ServerError`` for an ERROR_RESPONSE (the connection stays open);
        ``RequestTimeoutError``; ``ConnectionClosedError``; ``ProtocolError`` when the stream
        broke; the ``ServerError`` of a SERVER_FAILURE.
        """
        api = api_name or f"api_key={api_key}"
        self._raise_if_closed()
        request_id = self._inflight.allocate()
        data = encode_request(api_key, api_version, request_id, body)
        future: asyncio.Future[ResponseFrame] = self._loop.create_future()
        self._inflight.track(request_id, future)
        limit = self.request_timeout if timeout is None else timeout
        deadline = asyncio.timeout(limit)
        written = False
        try:
            async with deadline:
                async with self._write_lock:
                    if not future.done():  # not failed by a close while we waited
                        self._write_frame(data)
                        written = True
                        await self._writer.drain()
                frame = await future
        except TimeoutError as exc:
            if not deadline.expired():  # an OSError subclass raised by the transport
                error = self._lost_while_sending(api, future, exc)
                self._forget(request_id, future, written)
                raise error from exc
            self._forget(request_id, future, written)
            raise RequestTimeoutError(
                f"{api} to {self._where()} timed out after {limit}s (request id {request_id})"
            ) from None
        except OSError as exc:  # drain() on a dead transport
            error = self._lost_while_sending(api, future, exc)
            self._forget(request_id, future, written)
            raise error from exc
        except BaseException:  # cancellation, or the failure the reader set on the future
            self._forget(request_id, future, written)
            raise

        result = self._frame_result(frame, api)
        if isinstance(result, FlussError):
            raise result
        return result

    async def request_many(
        self,
        items: Sequence[WireRequest],
        *,
        timeout: float | None = None,
    ) -> list[bytes | FlussError]:
        """Send :class:`WireRequest` items (or plain ``(api_key, api_version, body,
        api_name)`` tuples) in one write; wait for all.

        The batch form of :meth:`request`: one write and one drain for all the frames, and no
        task per request. Each result is that request's SUCCESS body or its typed error (an
        error frame, a timeout, the connection lost), in the order of ``items``; one failure
        does not fail the others. ``timeout`` bounds the whole batch. Cancellation forgets
        every request of the batch (their late answers are dropped) and propagates.

        Raises ``ConnectionClosedError`` (nothing sent) when the connection is closed already.
        """
        self._raise_if_closed()
        names = [name or f"api_key={key}" for key, _, _, name in items]
        ids: list[int] = []
        futures: list[asyncio.Future[ResponseFrame]] = []
        chunks: list[bytes] = []
        for api_key, api_version, body, _ in items:
            request_id = self._inflight.allocate()
            chunks.append(encode_request(api_key, api_version, request_id, body))
            future: asyncio.Future[ResponseFrame] = self._loop.create_future()
            self._inflight.track(request_id, future)
            ids.append(request_id)
            futures.append(future)
        limit = self.request_timeout if timeout is None else timeout
        deadline = asyncio.timeout(limit)
        results: list[bytes | FlussError | None] = [None] * len(futures)
        written = False
        try:
            async with deadline:
                async with self._write_lock:
                    if not self._closed:  # not failed by a close while we waited
                        self._write_frame(b"".join(chunks))
                        written = True
                        await self._writer.drain()
                for i, future in enumerate(futures):
                    try:
                        frame = await future
                    except FlussError as exc:  # the connection failed: set by _shutdown
                        results[i] = exc
                        continue
                    results[i] = self._frame_result(frame, names[i])
        except TimeoutError as exc:
            if not deadline.expired():  # an OSError subclass raised by the transport
                self._lost_batch(names, futures, results, exc)
            for i in range(len(futures)):
                if results[i] is None:
                    results[i] = RequestTimeoutError(
                        f"{names[i]} to {self._where()} timed out after {limit}s "
                        f"(request id {ids[i]})"
                    )
        except OSError as exc:  # drain() on a dead transport
            self._lost_batch(names, futures, results, exc)
        except BaseException:  # cancellation
            for request_id, future in zip(ids, futures, strict=True):
                self._forget(request_id, future, written)
            raise
        for request_id, future in zip(ids, futures, strict=True):
            # a timeout cancels the future being awaited; the others may still be pending
            if not future.done() or future.cancelled() or future.exception() is not None:
                self._forget(request_id, future, written)
        return [
            r if r is not None else self._unanswered(n) for r, n in zip(results, names, strict=True)
        ]

    def _frame_result(self, frame: ResponseFrame, api: str) -> bytes | FlussError:
        if frame.kind is ResponseKind.SUCCESS:
            return frame.body
        try:
            code, message = parse_error_response(frame.body)
        except FlussError as exc:
            return exc
        return self._server_error(code, message, api)

    def _lost_batch(
        self,
        names: Sequence[str],
        futures: Sequence[asyncio.Future[ResponseFrame]],
        results: list[bytes | FlussError | None],
        exc: OSError,
    ) -> None:
        """The transport failed while sending a batch: every request without an answer yet
        gets the reason (the connection is shut down)."""
        for i, future in enumerate(futures):
            if results[i] is None:
                if future.done() and not future.cancelled() and future.exception() is None:
                    results[i] = self._frame_result(future.result(), names[i])
                else:
                    results[i] = self._lost_while_sending(names[i], future, exc)

    def _unanswered(self, api: str) -> FlussError:  # pragma: no cover - defensive
        return ConnectionClosedError(f"{api} to {self._where()} got no answer")

    def _server_error(self, code: int, message: str | None, api: str | None) -> FlussError:
        """The typed error for an error frame; code 0 (NONE) in one is a protocol violation
        (``from_code`` refuses 0, and its ValueError must not escape to callers)."""
        if code == 0:
            what = f" to {api}" if api else ""
            return ProtocolError(
                f"{self._where()} sent an error frame{what} carrying error code 0 (NONE)"
            )
        return self._error_from_code(code, message, api=api, server=self.address)

    def _lost_while_sending(
        self, api: str, future: asyncio.Future[ResponseFrame], exc: OSError
    ) -> FlussError:
        self._shutdown(ConnectionClosedError(f"connection to {self._where()} lost: {exc}"))
        if future.done() and not future.cancelled():
            reason = future.exception()
            if isinstance(reason, FlussError):  # e.g. the SERVER_FAILURE that preceded it
                return reason
        return ConnectionClosedError(
            f"connection to {self._where()} lost while sending {api}: {exc}"
        )

    def _write_frame(self, data: bytes) -> None:
        # StreamWriter.write hands the whole frame to the transport synchronously, so a
        # cancellation cannot land half-way through one. If write itself fails, though, we
        # cannot know how much of the frame went out: the stream is no longer trustworthy.
        try:
            self._writer.write(data)
        except BaseException as exc:
            self._shutdown(
                ConnectionClosedError(
                    f"writing to {self._where()} failed part-way; connection closed"
                ),
                abort=True,
            )
            raise ConnectionClosedError(
                f"writing to {self._where()} failed part-way: {type(exc).__name__}"
            ) from exc

    def _forget(
        self, request_id: int, future: asyncio.Future[ResponseFrame], written: bool
    ) -> None:
        """Stop waiting for a request that timed out, was cancelled or failed."""
        # Written to an open connection: the server will probably still answer.
        self._inflight.forget(request_id, future, answer_expected=written and not self._closed)

    def _raise_if_closed(self) -> None:
        if self._closed:
            reason = self._close_reason
            if isinstance(reason, ConnectionClosedError):
                raise ConnectionClosedError(str(reason)) from reason
            raise ConnectionClosedError(
                f"connection to {self._where()} is closed after an error: {reason}"
            ) from reason

    def _where(self) -> str:
        return self.label if self.label == self.address else f"{self.label} ({self.address})"

    # ------------------------------------------------------------------ reading

    async def _read_loop(self) -> None:
        # Reads whatever the socket has (up to _READ_CHUNK) and splits it with a FrameReader:
        # one await per chunk instead of two per frame, which matters with hundreds of
        # small responses in flight.
        reader = self._reader
        frames = FrameReader(self.max_frame_bytes)
        error: BaseException
        try:
            while True:
                chunk = await reader.read(_READ_CHUNK)
                if not chunk:
                    if frames.at_boundary:
                        error = ConnectionClosedError(
                            f"connection to {self._where()} was closed by the server"
                        )
                    else:
                        error = ConnectionClosedError(
                            f"connection to {self._where()} was closed by the server in the "
                            f"middle of a frame ({frames.buffered} bytes of it read)"
                        )
                    break
                for payload in frames.feed(chunk):
                    self._dispatch(decode_response(payload))
        except FlussError as exc:
            error = exc
        except OSError as exc:
            error = ConnectionClosedError(f"connection to {self._where()} lost: {exc}")
        except asyncio.CancelledError:
            self._shutdown(ConnectionClosedError(f"connection to {self._where()} was closed"))
            raise
        except Exception as exc:  # a bug (here or in an error_from_code hook)
            log.exception("unexpected error in the reader of %s", self._where())
            error = ConnectionClosedError(
                f"internal error while reading from {self._where()}: {type(exc).__name__}"
            )
            error.__cause__ = exc
        if not self._closed:
            if isinstance(error, ConnectionClosedError):
                log.debug("%s", error)
            else:
                log.warning("closing connection to %s: %s", self._where(), error)
        self._shutdown(error, abort=not isinstance(error, ConnectionClosedError))

    def _dispatch(self, frame: ResponseFrame) -> None:
        if frame.kind is ResponseKind.SERVER_FAILURE:
            code, message = parse_error_response(frame.body)
            raise self._server_error(code, message, None)
        request_id = frame.request_id
        assert request_id is not None
        try:
            future = self._inflight.take(request_id)
        except KeyError:
            raise ProtocolError(
                f"{self._where()} sent a response for request id {request_id}, "
                f"which is not in flight"
            ) from None
        if future is not None and not future.done():
            future.set_result(frame)

    # ------------------------------------------------------------------ shutdown

    def _shutdown(self, reason: BaseException, *, abort: bool = False) -> None:
        """Mark closed, fail every pending request with ``reason``, close the transport.

        Synchronous and idempotent; awaiting the reader task is left to :meth:`close`.
        """
        if self._closed:
            return
        self._closed = True
        self._close_reason = reason
        self._inflight.fail_all(reason)
        if abort:
            self._writer.transport.abort()
        else:
            self._writer.close()
        if not self._reader_task.done() and self._reader_task is not asyncio.current_task():
            self._reader_task.cancel()

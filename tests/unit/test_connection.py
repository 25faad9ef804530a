"""Connection tests against a scripted fake Fluss server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import struct
import sys

import pytest

from fluss_proto import connection as connection_module
from fluss_proto.connection import Connection, default_error_from_code
from fluss_proto.errors import (
    ConnectionClosedError,
    DecodeError,
    FrameTooLargeError,
    ProtocolError,
    RequestTimeoutError,
    ServerError,
    UnreachableError,
)
from fluss_proto.frame import MAX_REQUEST_ID
from tests._testutil.fakes import (
    Peer,
    PeerHandler,
    PeerServer,
    echo_of,
    hang,
)
from tests._testutil.unstarved import Stopwatch

pytestmark = pytest.mark.timeout(10)


# --------------------------------------------------------------------------- basics


async def test_round_trip_sends_exact_header_and_body():
    async def handler(peer: Peer) -> None:
        await peer.echo_forever()

    async with PeerServer(handler) as server, await server.connect() as conn:
        assert not conn.closed
        assert await conn.request(1012, 3, b"abc") == struct.pack(">hhi", 1012, 3, 0) + b"abc"
        assert await conn.request(1000, 0, b"") == struct.pack(">hhi", 1000, 0, 1)
        assert conn.in_flight == 0
    assert conn.closed


async def test_request_ids_count_up_from_zero_and_wrap():
    seen: list[int] = []

    async def handler(peer: Peer) -> None:
        while True:
            req = await peer.read_request()
            seen.append(req.request_id)
            peer.success(req.request_id, b"")

    async with PeerServer(handler) as server, await server.connect() as conn:
        for _ in range(3):
            await conn.request(1000, 0, b"")
        conn._inflight.next_id = MAX_REQUEST_ID - 1
        for _ in range(3):
            await conn.request(1000, 0, b"")
    assert seen == [0, 1, 2, MAX_REQUEST_ID - 1, MAX_REQUEST_ID, 0]


async def test_id_allocation_skips_ids_in_use():
    async with PeerServer(hang) as server, await server.connect() as conn:
        loop = asyncio.get_running_loop()
        conn._inflight.pending[0] = loop.create_future()
        conn._inflight.abandoned[1] = None
        conn._inflight.next_id = MAX_REQUEST_ID
        assert [conn._inflight.allocate() for _ in range(3)] == [MAX_REQUEST_ID, 2, 3]
        conn._inflight.pending.pop(0).cancel()


async def test_pipelined_requests_answered_in_reverse_order():
    count = 200

    async def handler(peer: Peer) -> None:
        reqs = [await peer.read_request() for _ in range(count)]
        for req in reversed(reqs):
            peer.success(req.request_id, b"re:" + req.body)
        await peer.writer.drain()
        await hang(peer)

    async with PeerServer(handler) as server, await server.connect() as conn:
        results = await asyncio.gather(
            *(conn.request(1012, 0, str(i).encode()) for i in range(count))
        )
        assert results == [b"re:" + str(i).encode() for i in range(count)]
        assert conn.in_flight == 0
        assert not conn.closed


async def test_out_of_order_pair():
    async def handler(peer: Peer) -> None:
        first = await peer.read_request()
        second = await peer.read_request()
        peer.success(second.request_id, b"second")
        await peer.writer.drain()
        await asyncio.sleep(0.05)
        peer.success(first.request_id, b"first")
        await hang(peer)

    async with PeerServer(handler) as server, await server.connect() as conn:
        slow = asyncio.create_task(conn.request(1015, 0, b"fetch"))
        await asyncio.sleep(0.01)
        fast = await conn.request(1012, 0, b"meta")
        assert fast == b"second"
        assert not slow.done()
        assert await slow == b"first"


# --------------------------------------------------------------------------- error frames


async def test_error_response_raises_server_error_and_keeps_connection():
    async def handler(peer: Peer) -> None:
        req = await peer.read_request()
        peer.error(req.request_id, 12, "not the leader")
        req = await peer.read_request()
        peer.error(req.request_id, 46)
        await peer.echo_forever()

    calls = []

    def hook(code, message, *, api=None, server=None):
        calls.append((code, message, api, server))
        return ServerError(message, api=api, server=server, code=code)

    async with PeerServer(handler) as server, await server.connect(error_from_code=hook) as conn:
        with pytest.raises(ServerError) as info:
            await conn.request(1012, 0, b"", api_name="GetMetadata")
        assert info.value.code == 12
        assert info.value.message == "not the leader"
        assert info.value.server == f"127.0.0.1:{server.port}"
        with pytest.raises(ServerError):
            await conn.request(1038, 0, b"")
        assert calls == [
            (12, "not the leader", "GetMetadata", f"127.0.0.1:{server.port}"),
            (46, None, "api_key=1038", f"127.0.0.1:{server.port}"),
        ]
        assert not conn.closed
        assert await conn.request(1000, 0, b"ok") == struct.pack(">hhi", 1000, 0, 2) + b"ok"


async def test_error_response_with_default_hook():
    async def handler(peer: Peer) -> None:
        req = await peer.read_request()
        peer.error(req.request_id, 15, "no such table")
        await hang(peer)

    async with PeerServer(handler) as server, await server.connect() as conn:
        with pytest.raises(ServerError) as info:
            await conn.request(1007, 0, b"", api_name="GetTableInfo")
        assert info.value.code == 15
        assert info.value.api == "GetTableInfo"
        assert info.value.server == f"127.0.0.1:{server.port}"
        assert "no such table" in str(info.value)


async def test_garbage_error_body_fails_only_that_request():
    async def handler(peer: Peer) -> None:
        req = await peer.read_request()
        peer.frame(b"\x01" + struct.pack(">i", req.request_id) + b"\x08")
        await peer.echo_forever()

    async with PeerServer(handler) as server, await server.connect() as conn:
        with pytest.raises(DecodeError):
            await conn.request(1012, 0, b"")
        assert not conn.closed
        assert await conn.request(1000, 0, b"") == struct.pack(">hhi", 1000, 0, 1)


async def test_server_failure_fails_everything_and_closes():
    async def handler(peer: Peer) -> None:
        for _ in range(3):
            await peer.read_request()
        peer.failure(-1, "frame too long")
        await hang(peer)

    async with PeerServer(handler) as server, await server.connect() as conn:
        results = await asyncio.gather(
            *(conn.request(1012, 0, b"") for _ in range(3)), return_exceptions=True
        )
        for result in results:
            assert isinstance(result, ServerError)
            assert result.code == -1
            assert "frame too long" in str(result)
        assert conn.closed
        assert conn.in_flight == 0
        with pytest.raises(ConnectionClosedError) as info:
            await conn.request(1012, 0, b"")
        assert isinstance(info.value.__cause__, ServerError)


async def test_server_failure_with_garbage_body():
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        peer.frame(b"\x02\xff")
        await hang(peer)

    async with PeerServer(handler) as server, await server.connect() as conn:
        with pytest.raises(DecodeError):
            await conn.request(1012, 0, b"")
        assert conn.closed


# --------------------------------------------------------------------------- broken streams


async def _expect_fatal(handler: PeerHandler, error: type[Exception], match: str, **kw) -> None:
    async with PeerServer(handler) as server, await server.connect(**kw) as conn:
        results = await asyncio.gather(
            conn.request(1012, 0, b"a"), conn.request(1012, 0, b"b"), return_exceptions=True
        )
        for result in results:
            assert isinstance(result, error), result
            assert match in str(result)
        assert conn.closed
        assert conn.in_flight == 0
        with pytest.raises(ConnectionClosedError):
            await conn.request(1012, 0, b"")


async def test_unknown_request_id_is_a_protocol_error():
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        await peer.read_request()
        peer.success(4242, b"")
        await hang(peer)

    await _expect_fatal(handler, ProtocolError, "request id 4242")


async def test_huge_length_prefix():
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        await peer.read_request()
        peer.raw(b"\x7f\xff\xff\xff")
        await hang(peer)

    await _expect_fatal(handler, FrameTooLargeError, "2147483647")


async def test_frame_over_configured_limit():
    async def handler(peer: Peer) -> None:
        req = await peer.read_request()
        await peer.read_request()
        peer.success(req.request_id, b"x" * 12)  # payload 17 bytes
        await hang(peer)

    await _expect_fatal(handler, FrameTooLargeError, "maximum of 16", max_frame_bytes=16)


async def test_negative_length_prefix():
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        await peer.read_request()
        peer.raw(b"\xff\xff\xff\xfe")
        await hang(peer)

    await _expect_fatal(handler, ProtocolError, "negative frame length")


async def test_unknown_response_type():
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        await peer.read_request()
        peer.frame(b"\x07\x00\x00\x00\x00")
        await hang(peer)

    await _expect_fatal(handler, ProtocolError, "unknown response type 7")


async def test_close_mid_frame():
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        await peer.read_request()
        peer.raw(struct.pack(">i", 100) + b"\x00" * 10)

    await _expect_fatal(handler, ConnectionClosedError, "middle of a frame")


async def test_eof_between_frames():
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        await peer.read_request()

    await _expect_fatal(handler, ConnectionClosedError, "closed by the server")


async def test_logs_never_contain_bodies(caplog):
    async def handler(peer: Peer) -> None:
        req = await peer.read_request()
        peer.success(req.request_id + 1, b"hunter2-response")
        await hang(peer)

    async with PeerServer(handler) as server, await server.connect() as conn:
        with pytest.raises(ProtocolError):
            await conn.request(1038, 0, b"\x00user\x00hunter2")
    assert "hunter2" not in caplog.text


# --------------------------------------------------------------------------- timeouts


async def test_request_timeout_when_never_answered():
    async with PeerServer(hang) as server, await server.connect() as conn:
        watch = Stopwatch()  # less the CPU waits of a starved run (nice 19)
        with pytest.raises(RequestTimeoutError, match=r"GetMetadata .* timed out after 0.2s"):
            await conn.request(1012, 0, b"", timeout=0.2, api_name="GetMetadata")
        assert watch.elapsed() < 1.0
        assert not conn.closed
        assert conn.in_flight == 0


async def test_connection_default_request_timeout():
    async with PeerServer(hang) as server, await server.connect(request_timeout=0.1) as conn:
        with pytest.raises(RequestTimeoutError, match=r"0\.1s"):
            await conn.request(1012, 0, b"")


async def test_late_response_after_timeout_is_discarded():
    async def handler(peer: Peer) -> None:
        first = await peer.read_request()
        second = await peer.read_request()  # only sent after `first` timed out
        peer.success(first.request_id, b"late")
        peer.success(second.request_id, b"fresh")
        await peer.echo_forever()

    async with PeerServer(handler) as server, await server.connect() as conn:
        with pytest.raises(RequestTimeoutError):
            await conn.request(1015, 0, b"", timeout=0.1)
        assert await conn.request(1012, 0, b"") == b"fresh"
        assert not conn.closed
        assert conn._inflight.abandoned == {}
        assert await conn.request(1000, 0, b"") == struct.pack(">hhi", 1000, 0, 2)


# --------------------------------------------------------------------------- close / cancel


async def test_close_fails_pending_and_is_idempotent():
    received = asyncio.Event()
    count = 0

    async def handler(peer: Peer) -> None:
        nonlocal count
        while True:
            await peer.read_request()
            count += 1
            if count == 5:
                received.set()

    async with PeerServer(handler) as server:
        conn = await server.connect()
        tasks = [asyncio.create_task(conn.request(1012, 0, b"")) for _ in range(5)]
        await asyncio.wait_for(received.wait(), 2)
        assert conn.in_flight == 5
        await conn.close()
        assert conn.closed
        for task in tasks:
            with pytest.raises(ConnectionClosedError):
                await task
        await conn.close()
        with pytest.raises(ConnectionClosedError, match="closed"):
            await conn.request(1012, 0, b"")
        assert "closed" in repr(conn)


async def test_async_with_closes():
    async def handler(peer: Peer) -> None:
        await peer.echo_forever()

    async with PeerServer(handler) as server:
        async with await server.connect() as conn:
            await conn.request(1000, 0, b"")
        assert conn.closed


async def test_cancel_after_write_forgets_the_id():
    got_first = asyncio.Event()

    async def handler(peer: Peer) -> None:
        first = await peer.read_request()
        got_first.set()
        second = await peer.read_request()
        peer.success(first.request_id, b"for the cancelled one")
        peer.success(second.request_id, b"second")
        await peer.echo_forever()

    async with PeerServer(handler) as server, await server.connect() as conn:
        task = asyncio.create_task(conn.request(1015, 0, b""))
        await asyncio.wait_for(got_first.wait(), 2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert conn.in_flight == 0
        assert await conn.request(1012, 0, b"") == b"second"
        assert not conn.closed


async def test_cancel_before_write_sends_nothing():
    seen: list[int] = []

    async def handler(peer: Peer) -> None:
        while True:
            req = await peer.read_request()
            seen.append(req.request_id)
            peer.success(req.request_id, b"")

    async with PeerServer(handler) as server, await server.connect() as conn:
        async with conn._write_lock:
            task = asyncio.create_task(conn.request(1012, 0, b""))
            await asyncio.sleep(0.01)
            assert conn.in_flight == 1
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert conn.in_flight == 0
        await conn.request(1012, 0, b"")
        assert not conn.closed
        assert conn._inflight.abandoned == {}
    assert seen == [1]


async def test_timeout_while_waiting_to_write():
    async with PeerServer(hang) as server, await server.connect() as conn:
        async with conn._write_lock:
            with pytest.raises(RequestTimeoutError):
                await conn.request(1012, 0, b"", timeout=0.05)
        assert conn.in_flight == 0
        assert conn._inflight.abandoned == {}
        assert not conn.closed


async def test_write_failing_part_way_closes_the_connection(monkeypatch):
    got_first = asyncio.Event()

    async def handler(peer: Peer) -> None:
        await peer.read_request()
        got_first.set()
        await hang(peer)

    async with PeerServer(handler) as server, await server.connect() as conn:
        pending = asyncio.create_task(conn.request(1012, 0, b""))
        await asyncio.wait_for(got_first.wait(), 2)

        def broken_write(data: bytes) -> None:
            raise RuntimeError("boom")

        monkeypatch.setattr(conn._writer, "write", broken_write)
        with pytest.raises(ConnectionClosedError, match="part-way"):
            await conn.request(1012, 0, b"")
        assert conn.closed
        with pytest.raises(ConnectionClosedError):
            await pending


# --------------------------------------------------------------------------- open


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_open_refused_is_unreachable():
    port = _free_port()
    with pytest.raises(UnreachableError, match=f"127.0.0.1:{port}"):
        await Connection.open("127.0.0.1", port, connect_timeout=1, request_timeout=1)


async def test_open_timeout_is_unreachable(monkeypatch):
    async def never(*args: object, **kwargs: object):
        await asyncio.Event().wait()

    monkeypatch.setattr(connection_module.asyncio, "open_connection", never)
    with pytest.raises(UnreachableError, match=r"10\.0\.0\.1:9123: timed out after 0.1s"):
        await Connection.open("10.0.0.1", 9123, connect_timeout=0.1, request_timeout=1)


async def test_label_appears_in_errors():
    async with PeerServer(hang) as server, await server.connect(label="coordinator") as conn:
        with pytest.raises(RequestTimeoutError, match=rf"coordinator \(127.0.0.1:{server.port}\)"):
            await conn.request(1012, 0, b"", timeout=0.05)


# --------------------------------------------------------------------------- error hook


def test_default_error_from_code_without_error_codes_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "fluss_proto.error_codes", None)
    err = default_error_from_code(99, "msg", api="X", server="h:1")
    assert type(err) is ServerError
    assert (err.code, err.message, err.api, err.server) == (99, "msg", "X", "h:1")


def test_default_error_from_code_with_error_codes_module():
    error_codes = pytest.importorskip("fluss_proto.error_codes")
    err = default_error_from_code(12, None, api="X", server="h:1")
    assert isinstance(err, ServerError)
    assert err.code == 12
    assert type(err) is type(error_codes.from_code(12, None))


# --------------------------------------------------------------------------- batches


async def test_request_many_is_one_write_and_takes_answers_in_any_order():
    reads: list[int] = []

    async def handler(peer: Peer) -> None:
        reqs = [await peer.read_request() for _ in range(4)]
        reads.append(len(reqs))
        for req in reversed(reqs):  # answer out of order
            if req.api_key == 1001:
                peer.error(req.request_id, 7, "Table 'db.t' does not exist.")
            else:
                peer.success(req.request_id, echo_of(req))
        await peer.echo_forever()

    async with PeerServer(handler) as server, await server.connect() as conn:
        sent: list[bytes] = []
        original = conn._writer.write
        conn._writer.write = lambda data: (sent.append(data), original(data))[1]  # type: ignore[method-assign]
        items = [
            (1000, 0, b"a", "A"),
            (1001, 0, b"b", "B"),
            (1002, 1, b"", None),
            (1003, 2, b"d", "D"),
        ]
        results = await conn.request_many(items)
        assert len(sent) == 1  # every frame in one write
        assert results[0] == struct.pack(">hhi", 1000, 0, 0) + b"a"
        assert isinstance(results[1], ServerError) and results[1].code == 7
        assert results[1].api == "B" and "does not exist" in str(results[1])
        assert results[2] == struct.pack(">hhi", 1002, 1, 2)
        assert results[3] == struct.pack(">hhi", 1003, 2, 3) + b"d"
        assert conn.in_flight == 0 and not conn.closed
        assert await conn.request(1000, 0, b"") == struct.pack(">hhi", 1000, 0, 4)


async def test_request_many_times_out_only_the_unanswered_and_drops_their_late_answers():
    release = asyncio.Event()

    async def handler(peer: Peer) -> None:
        first, second = await peer.read_request(), await peer.read_request()
        peer.success(first.request_id, b"quick")
        await release.wait()
        peer.success(second.request_id, b"late")  # after the timeout: dropped silently
        await peer.echo_forever()

    async with PeerServer(handler) as server, await server.connect() as conn:
        results = await conn.request_many([(1, 0, b"", "Q"), (2, 0, b"", "S")], timeout=0.2)
        assert results[0] == b"quick"
        assert isinstance(results[1], RequestTimeoutError) and "S to" in str(results[1])
        release.set()
        assert await conn.request(1000, 0, b"x") == struct.pack(">hhi", 1000, 0, 2) + b"x"
        assert not conn.closed


async def test_request_many_on_a_connection_lost_mid_batch_fails_the_rest_typed():
    async def handler(peer: Peer) -> None:
        first = await peer.read_request()
        await peer.read_request()
        peer.success(first.request_id, b"one")
        await peer.writer.drain()
        peer.writer.transport.abort()

    async with PeerServer(handler) as server, await server.connect() as conn:
        results = await conn.request_many([(1, 0, b"", None), (2, 0, b"", None)])
        assert results[0] == b"one"
        assert isinstance(results[1], ConnectionClosedError)
        assert conn.closed
        with pytest.raises(ConnectionClosedError):
            await conn.request_many([(1, 0, b"", None)])


async def test_request_many_cancelled_forgets_the_batch_and_keeps_the_connection():
    got = asyncio.Event()

    async def handler(peer: Peer) -> None:
        reqs = [await peer.read_request() for _ in range(3)]
        got.set()
        await asyncio.sleep(0.2)
        for req in reqs:  # late answers to a cancelled batch
            peer.success(req.request_id, b"late")
        await peer.echo_forever()

    async with PeerServer(handler) as server, await server.connect() as conn:
        task = asyncio.create_task(conn.request_many([(1, 0, b"", None)] * 3))
        await got.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert conn.in_flight == 0
        await asyncio.sleep(0.3)  # the late answers arrive and are dropped
        assert not conn.closed
        assert await conn.request(1000, 0, b"") == struct.pack(">hhi", 1000, 0, 3)

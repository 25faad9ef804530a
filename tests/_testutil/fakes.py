"""Fake Fluss servers and the checks that go with them.

- :class:`PeerServer` / :class:`Peer`: a raw server that hands each connection to a
  scripted coroutine (connection tests);
- :class:`FakeServer` / :class:`FakeCluster`: servers that answer API requests through
  handlers, with ApiVersions, SASL/PLAIN and standby coordinators (client, admin, gather);
- :func:`no_asyncio_complaints`: an autouse fixture to import into a test module;
- :func:`local_description`: a running local cluster's description."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import struct
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client import (
    FlussClient,
)
from fluss_proto.connection import Connection
from konsole.localcluster.cluster import ClusterDescription, ProcessInfo, SaslInfo
from tests._testutil.loopback import LoopbackServer, read_request
from tests._testutil.wire import error_body

#: The connect and request timeouts of clients made here unless a test gives its own. The
#: fakes answer at once, but the tests without a server run at nice 19 beside the live
#: ones and a client there can wait seconds for a CPU slice (CI: "timed out after 2.0s"
#: connecting to a fake that was up). A test of a timeout passes its own, shorter one.
FAKE_TIMEOUT_S = 10.0

# =========================================================================== raw peer server


@dataclass
class Req:
    api_key: int
    version: int
    request_id: int
    body: bytes


class Peer:
    """The server side of one accepted connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def read_request(self) -> Req:
        (length,) = struct.unpack(">i", await self.reader.readexactly(4))
        payload = await self.reader.readexactly(length)
        api_key, version, request_id = struct.unpack_from(">hhi", payload)
        return Req(api_key, version, request_id, payload[8:])

    def raw(self, data: bytes) -> None:
        self.writer.write(data)

    def frame(self, payload: bytes) -> None:
        self.writer.write(struct.pack(">i", len(payload)) + payload)

    def success(self, request_id: int, body: bytes) -> None:
        self.frame(b"\x00" + struct.pack(">i", request_id) + body)

    def error(self, request_id: int, code: int, message: str | None = None) -> None:
        self.frame(b"\x01" + struct.pack(">i", request_id) + error_body(code, message))

    def failure(self, code: int, message: str | None = None) -> None:
        self.frame(b"\x02" + error_body(code, message))

    async def echo_forever(self) -> None:
        while True:
            req = await self.read_request()
            self.success(req.request_id, echo_of(req))


def echo_of(req: Req) -> bytes:
    return struct.pack(">hhi", req.api_key, req.version, req.request_id) + req.body


PeerHandler = Callable[[Peer], Awaitable[None]]


class PeerServer:
    """A fake server whose every accepted connection is handed to ``handler`` as a Peer."""

    def __init__(self, handler: PeerHandler) -> None:
        self.handler = handler
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> PeerServer:
        self._server = await asyncio.start_server(self._on_client, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self.handler(Peer(reader, writer))
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.CancelledError:
            # Finish normally: Python 3.11's start_server callback calls task.exception() on
            # the handler task, which raises (and gets logged) when the task was cancelled.
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            self._tasks.discard(task)

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def connect(self, **kwargs: object) -> Connection:
        kwargs.setdefault("connect_timeout", FAKE_TIMEOUT_S)
        kwargs.setdefault("request_timeout", FAKE_TIMEOUT_S)
        return await Connection.open("127.0.0.1", self.port, **kwargs)  # type: ignore[arg-type]


async def hang(_: Peer) -> None:
    await asyncio.Event().wait()


# =========================================================================== API fake servers


@dataclass
class Frame:
    api_key: int
    version: int
    request_id: int
    body: bytes


@dataclass
class Err:
    code: int
    message: str | None = None


DROP = object()  # no reply, like a Fluss server for an API it does not serve
CLOSE = object()  # close the connection

Handler = Callable[["FakeServer", Frame], Any]


def default_apis(server_type: int, *, fluss_1_0: bool = False) -> dict[int, tuple[int, int]]:
    """What a server of that type advertises (private APIs included, as Fluss does)."""
    out = {}
    for key, spec in API_INFO.items():
        if spec.since == "1.0" and not fluss_1_0:
            continue
        served = spec.served_by == "both" or spec.served_by == (
            "coordinator" if server_type == 1 else "tablet"
        )
        if served:
            high = spec.max_version if fluss_1_0 or key is not ApiKey.PUT_KV else 1
            out[int(key)] = (0, high)
    return out


class FakeServer(LoopbackServer):
    """One fake Fluss server. ``handlers`` map an api key to ``handler(server, frame)``
    returning a response message, an :class:`Err`, ``DROP``, ``CLOSE`` or a list of those.
    While ``silent`` it accepts connections and reads requests but answers none (a
    SIGSTOPped server whose kernel still accepts)."""

    def __init__(
        self,
        server_type: int,
        *,
        apis: dict[int, tuple[int, int]] | None = None,
        handlers: dict[int, Handler] | None = None,
        sasl: dict[str, str] | None = None,
        standby: bool = False,
        advertise_type: bool = True,
    ) -> None:
        super().__init__()
        self.server_type = server_type
        self.apis = dict(apis) if apis is not None else default_apis(server_type)
        self.handlers: dict[int, Handler] = dict(handlers or {})
        self.sasl = sasl
        self.standby = standby
        self.advertise_type = advertise_type
        self.frames: list[Frame] = []
        self.bytes_received = 0
        self.connections = 0
        self.silent = False

    def count(self, api: ApiKey) -> int:
        return sum(1 for f in self.frames if f.api_key == api)

    def apis_seen(self) -> list[int]:
        return [f.api_key for f in self.frames]

    async def _converse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        state = {"authenticated": self.sasl is None}
        for _ in range(1_000_000):  # bounded: no test sends this many requests
            api_key, version, request_id, body, size = await read_request(reader)
            self.bytes_received += size
            frame = Frame(api_key, version, request_id, body)
            self.frames.append(frame)
            if self.silent:
                continue
            reply = self._dispatch(frame, state)
            if asyncio.iscoroutine(reply):
                # answered later, while the next requests are read (like a real server)
                self._track(asyncio.create_task(self._reply_later(writer, request_id, reply)))
                continue
            if self._write(writer, request_id, reply):
                return
            await writer.drain()

    @staticmethod
    def _write(writer: asyncio.StreamWriter, request_id: int, reply: Any) -> bool:
        """Write the reply frames; True when the connection is to be closed."""
        for item in reply if isinstance(reply, list) else [reply]:
            if item is DROP:
                continue
            if item is CLOSE:
                return True
            if isinstance(item, Err):
                data = b"\x01" + struct.pack(">i", request_id)
                data += error_body(item.code, item.message)
            else:
                assert isinstance(item, Message)
                data = b"\x00" + struct.pack(">i", request_id) + item.SerializeToString()
            writer.write(struct.pack(">i", len(data)) + data)
        return False

    async def _reply_later(
        self, writer: asyncio.StreamWriter, request_id: int, pending: Any
    ) -> None:
        try:
            if self._write(writer, request_id, await pending):
                writer.close()
        except (asyncio.CancelledError, ConnectionError):
            pass

    def _dispatch(self, frame: Frame, state: dict[str, bool]) -> Any:
        key = frame.api_key
        if key == ApiKey.API_VERSIONS:
            resp = pb.ApiVersionsResponse()
            for api, (low, high) in sorted(self.apis.items()):
                resp.api_versions.add(api_key=api, min_version=low, max_version=high)
            if self.advertise_type:
                resp.server_type = self.server_type
            return resp
        if key == ApiKey.AUTHENTICATE and key in self.handlers:
            return self.handlers[key](self, frame)
        if key == ApiKey.AUTHENTICATE:
            return self._authenticate(frame, state)
        if not state["authenticated"]:
            return Err(46, "The connection has not completed authentication yet.")
        if key not in self.apis:
            return DROP
        if self.standby:
            return Err(65, "This coordinator server is not the current leader.")
        handler = self.handlers.get(key)
        if handler is not None:
            return handler(self, frame)
        if key == ApiKey.LIST_DATABASES:
            return pb.ListDatabasesResponse(database_name=["fluss"])
        return Err(-1, f"fake has no handler for {key}")

    def _authenticate(self, frame: Frame, state: dict[str, bool]) -> Any:
        req = pb.AuthenticateRequest.FromString(frame.body)
        if self.sasl is None:
            return Err(
                46,
                "Authenticate protocol not match: protocol of server is 'PLAINTEXT' while "
                f"protocol of client is '{req.protocol}'",
            )
        if req.protocol != "PLAIN":
            return Err(
                46, f"SASL server enables [PLAIN] while protocol of client is '{req.protocol}'"
            )
        parts = req.token.split(b"\0")
        if len(parts) == 3 and self.sasl.get(parts[1].decode()) == parts[2].decode():
            state["authenticated"] = True
            return pb.AuthenticateResponse(challenge=b"")
        return Err(46, "Authentication failed: Invalid username or password")


class FakeCluster:
    """A coordinator and tablet servers whose GetMetadata describes each other."""

    def __init__(
        self,
        tablets: int = 2,
        *,
        tablet_apis: dict[int, tuple[int, int]] | None = None,
        sasl: dict[str, str] | None = None,
        fluss_1_0: bool = False,
    ) -> None:
        self.coordinator = FakeServer(1, sasl=sasl, apis=default_apis(1, fluss_1_0=fluss_1_0))
        self.tablets = [
            FakeServer(
                2,
                sasl=sasl,
                apis=tablet_apis
                if tablet_apis is not None
                else default_apis(2, fluss_1_0=fluss_1_0),
            )
            for _ in range(tablets)
        ]
        self.extra: list[FakeServer] = []
        self.active: FakeServer | None = self.coordinator
        self.alive: set[int] = set(range(tablets))
        for server in self.servers:
            server.handlers.setdefault(ApiKey.GET_METADATA, self.metadata)

    @property
    def servers(self) -> list[FakeServer]:
        return [self.coordinator, *self.tablets, *self.extra]

    def add(self, server: FakeServer) -> FakeServer:
        server.handlers.setdefault(ApiKey.GET_METADATA, self.metadata)
        self.extra.append(server)
        return server

    def metadata(self, _server: FakeServer, frame: Frame) -> pb.MetadataResponse:
        req = pb.MetadataRequest.FromString(frame.body)
        resp = pb.MetadataResponse()
        if self.active is not None:
            resp.coordinator_server.MergeFrom(
                pb.PbServerNode(node_id=0, host="127.0.0.1", port=self.active.port)
            )
        for i, ts in enumerate(self.tablets):
            if i in self.alive:
                resp.tablet_servers.add(node_id=i, host="127.0.0.1", port=ts.port, rack=f"r{i}")
        for n, path in enumerate(req.table_path):
            table = resp.table_metadata.add(
                table_id=100 + n,
                schema_id=1,
                table_json=b"{}",
                created_time=1,
                modified_time=2,
            )
            table.table_path.CopyFrom(path)
            table.bucket_metadata.add(bucket_id=0, leader_id=1, replica_id=[1, 0], leader_epoch=3)
            table.bucket_metadata.add(bucket_id=1, replica_id=[0])
        return resp

    async def __aenter__(self) -> FakeCluster:
        for server in self.servers:
            await server.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for server in self.servers:
            await server.stop()


async def connect(bootstrap: str | list[str], **kwargs: Any) -> FlussClient:
    kwargs.setdefault("connect_timeout", FAKE_TIMEOUT_S)
    kwargs.setdefault("request_timeout", FAKE_TIMEOUT_S)
    kwargs.setdefault("retry_backoff", 0.01)
    return await FlussClient.connect(bootstrap, **kwargs)


# =========================================================================== fixtures and checks


@pytest.fixture(autouse=True)
def no_asyncio_complaints(caplog):
    """No 'Task was destroyed', 'exception was never retrieved' or similar loop errors."""
    caplog.set_level(logging.DEBUG)
    yield
    gc.collect()
    records = caplog.get_records("setup") + caplog.get_records("call") + caplog.records
    bad = [r for r in records if r.name == "asyncio" and r.levelno >= logging.WARNING]
    assert not bad, [r.getMessage() for r in bad]


def all_text(exc: BaseException) -> str:
    """str, repr and the formatted traceback (with the cause chain) of an exception."""
    return str(exc) + repr(exc) + "".join(traceback.format_exception(exc))


def local_description(bootstrap: str, *processes: ProcessInfo) -> ClusterDescription:
    """A running local cluster's description, as ``LocalCluster.status()`` returns it."""
    return ClusterDescription(
        version="0.9.1-incubating",
        fluss_home=None,
        run_dir="/tmp/run",
        running=True,
        bootstrap_servers=bootstrap,
        internal_bootstrap_servers=bootstrap,
        sasl=SaslInfo(False),
        zookeeper="127.0.0.1:2181",
        ready_seconds=1.0,
        processes=processes,
    )


def fake_running_local_cluster(
    monkeypatch: pytest.MonkeyPatch, endpoint: str = "127.0.0.1:35783"
) -> None:
    """``konsole.localcluster.LocalCluster(run_dir).status()`` describes a running cluster
    whose one coordinator (and bootstrap) is ``endpoint``, whatever the run dir."""
    import konsole.localcluster

    class FakeLocal:
        def __init__(self, run_dir: Any) -> None:
            self.run_dir = run_dir

        def status(self) -> ClusterDescription:
            coordinator = ProcessInfo(
                role="coordinator",
                id=0,
                pid=1,
                alive=True,
                ports={},
                log="log",
                metrics_url="http://127.0.0.1:50235/metrics",
                endpoint=endpoint,
            )
            return local_description(endpoint, coordinator)

    monkeypatch.setattr(konsole.localcluster, "LocalCluster", FakeLocal)

"""Shared test helpers: protobuf byte helpers and fake Fluss servers.

- :func:`varint`, :func:`error_body`: bytes of the wire format, written by hand so tests do
  not check our encoder against itself;
- :class:`PeerServer` / :class:`Peer`: a raw server that hands each connection to a
  scripted coroutine (connection tests);
- :class:`FakeServer` / :class:`FakeCluster`: servers that answer API requests through
  handlers, with ApiVersions, SASL/PLAIN and standby coordinators (client, admin, gather);
- :func:`no_asyncio_complaints`: an autouse fixture to import into a test module.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import math
import struct
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client import (
    ClusterMetadata,
    FlussClient,
    ServerApiVersions,
    ServerNode,
    TablePath,
)
from fluss_proto.connection import Connection
from fluss_proto.error_codes import (
    UnknownServerError,
)
from fluss_proto.errors import DecodeError, RequestTimeoutError, UnsupportedByServer
from fluss_proto.records import DataType, as_row_type, to_arrow_schema
from konsole.localcluster.cluster import ClusterDescription, ProcessInfo, SaslInfo
from tests.unit import records_encoder as enc
from tests.unit.records_encoder import Ts

# =========================================================================== bytes


def varint(value: int) -> bytes:
    """Protobuf varint; negative values are sign-extended to 64 bits (10 bytes)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def error_body(code: int | None, message: str | bytes | None = None) -> bytes:
    """An ErrorResponse body: error_code (field 1) and error_message (field 2), each only
    when given."""
    out = b""
    if code is not None:
        out += b"\x08" + varint(code)
    if message is not None:
        raw = message.encode() if isinstance(message, str) else message
        out += b"\x12" + varint(len(raw)) + raw
    return out


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
        kwargs.setdefault("connect_timeout", 2.0)
        kwargs.setdefault("request_timeout", 2.0)
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


class FakeServer:
    """One fake Fluss server. ``handlers`` map an api key to ``handler(server, frame)``
    returning a response message, an :class:`Err`, ``DROP``, ``CLOSE`` or a list of those."""

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
        self.server_type = server_type
        self.apis = dict(apis) if apis is not None else default_apis(server_type)
        self.handlers: dict[int, Handler] = dict(handlers or {})
        self.sasl = sasl
        self.standby = standby
        self.advertise_type = advertise_type
        self.frames: list[Frame] = []
        self.bytes_received = 0
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def count(self, api: ApiKey) -> int:
        return sum(1 for f in self.frames if f.api_key == api)

    def apis_seen(self) -> list[int]:
        return [f.api_key for f in self.frames]

    async def start(self) -> FakeServer:
        self._server = await asyncio.start_server(self._on_client, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        state = {"authenticated": self.sasl is None}
        try:
            while True:
                (length,) = struct.unpack(">i", await reader.readexactly(4))
                payload = await reader.readexactly(length)
                self.bytes_received += 4 + length
                api_key, version, request_id = struct.unpack_from(">hhi", payload)
                frame = Frame(api_key, version, request_id, payload[8:])
                self.frames.append(frame)
                reply = self._dispatch(frame, state)
                if asyncio.iscoroutine(reply):
                    # answered later, while the next requests are read (like a real server)
                    later = asyncio.create_task(self._reply_later(writer, request_id, reply))
                    self._tasks.add(later)
                    later.add_done_callback(self._tasks.discard)
                    continue
                if self._write(writer, request_id, reply):
                    break
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.CancelledError:
            pass  # finish normally (3.11's start_server inspects the task's exception)
        finally:
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()
            self._tasks.discard(task)

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
    kwargs.setdefault("connect_timeout", 2.0)
    kwargs.setdefault("request_timeout", 2.0)
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


# =========================================================================== scan fakes
# A table model answering ScanKv, LimitScan, FetchLog, ListOffsets and metadata like Fluss
# servers, with real record bytes (see tests/unit/test_scan.py for what it follows).

TABLE = TablePath("db", "t")
TABLE_ID = 100

COLUMNS_V1 = [
    {"name": "id", "data_type": {"type": "BIGINT", "nullable": False}, "id": 0},
    {"name": "name", "data_type": {"type": "STRING"}, "id": 1},
    {"name": "amount", "data_type": {"type": "DECIMAL", "precision": 10, "scale": 2}, "id": 2},
    {"name": "ts", "data_type": {"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 6}, "id": 3},
]
COLUMNS_V2 = [*COLUMNS_V1, {"name": "note", "data_type": {"type": "STRING"}, "id": 4}]


def schema_doc(columns: list[dict[str, Any]], pk: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {"version": 1, "columns": columns, "highest_field_id": len(columns)}
    if pk:
        doc["primary_key"] = ["id"]
    return doc


def row_values(i: int, schema_id: int) -> dict[str, Any]:
    row = {
        "id": i,
        "name": f"n{i}",
        "amount": Decimal(i) / 4,
        "ts": datetime(2024, 1, 1, 0, 0, 0, i),
    }
    if schema_id == 2:
        row["note"] = f"note{i}"
    return row


@dataclass
class Bucket:
    """One bucket's content: KV rows (PK) and/or log batches."""

    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (schema_id, row)
    batches: list[tuple[int, int, bytes]] = field(default_factory=list)  # (base, next, bytes)
    earliest: int = 0
    #: offsets below this are only in remote storage
    remote_end: int = 0

    @property
    def latest(self) -> int:
        return self.batches[-1][1] if self.batches else self.earliest


class FakeScanCluster:
    """The client seam of fluss_proto.scan: call / call_many / metadata / api_versions_of."""

    def __init__(
        self,
        *,
        pk: bool,
        buckets: int = 3,
        partitions: dict[int, str] | None = None,
        schema_id: int = 1,
        scan_kv_nodes: set[int] | None = None,
    ) -> None:
        self.pk = pk
        self.nodes = (1, 2, 3)
        self.scan_kv_nodes = set(self.nodes) if scan_kv_nodes is None else scan_kv_nodes
        self.partitions = partitions
        self.schema_id = schema_id
        self.schemas = {
            1: schema_doc(COLUMNS_V1, pk),
            2: schema_doc(COLUMNS_V2, pk),
        }
        keys = [None] if partitions is None else list(partitions)
        self.data: dict[tuple[int | None, int], Bucket] = {
            (p, b): Bucket() for p in keys for b in range(buckets)
        }
        self.leaders: dict[tuple[int | None, int], int] = {
            k: self.nodes[k[1] % len(self.nodes)] for k in self.data
        }
        #: Leaders the first GetMetadata reply names instead (stale metadata).
        self.stale_leaders: dict[tuple[int | None, int], int] = {}
        self.metadata_replies = 0
        self.calls: list[tuple[ApiKey, int | None, Message]] = []
        # ScanKv server state
        self.sessions: dict[bytes, dict[str, Any]] = {}
        self.next_session = 0
        self.page_rows = 4
        self.honour_limit = True
        self.max_per_bucket = 8
        #: (bucket key) -> call_seq_id at which that bucket's session expires (once each)
        self.expire_at: dict[tuple[int | None, int], list[int]] = {}
        self.expire_code = 66
        self.too_many: set[tuple[int | None, int]] = set()
        #: (api, bucket key) pairs whose requests never get an answer
        self.hang: set[tuple[ApiKey, tuple[int | None, int]]] = set()
        self.hang_scan_kv_at_seq: dict[tuple[int | None, int], int] = {}
        self.fetch_errors: dict[tuple[int | None, int], int] = {}
        self.overrides: dict[ApiKey, Callable[[int | None, Any], Any]] = {}

    # -- data helpers
    def row_type(self, schema_id: int) -> Any:
        return as_row_type(self.schemas[schema_id])

    def put_rows(self, key: tuple[int | None, int], ids: list[int], schema_id: int = 1) -> None:
        bucket = self.data[key]
        for i in ids:
            bucket.rows.append((schema_id, row_values(i, schema_id)))
        bucket.rows.sort(key=lambda r: r[1]["id"])

    def append_log(
        self,
        key: tuple[int | None, int],
        ids: list[int],
        *,
        schema_id: int = 1,
        change_types: list[int] | None = None,
    ) -> None:
        bucket = self.data[key]
        base = bucket.latest
        rows = [row_values(i, schema_id) for i in ids]
        schema = to_arrow_schema(self.schemas[schema_id])
        data = pa.RecordBatch.from_pylist(rows, schema=schema)
        payload = enc.arrow_message(data)
        if change_types is not None:
            payload = bytes(change_types) + payload
        blob = enc.log_batch(
            payload,
            base_offset=base,
            record_count=len(ids),
            schema_id=schema_id,
            append_only=change_types is None,
        )
        bucket.batches.append((base, base + len(ids), blob))

    def sent(self, api: ApiKey) -> list[tuple[int | None, Any]]:
        return [(n, r) for a, n, r in self.calls if a == api]

    # -- the client seam
    @property
    def metadata(self) -> ClusterMetadata:
        return ClusterMetadata(
            coordinator=ServerNode(0, "127.0.0.1", 9000),
            tablet_servers={n: ServerNode(n, "127.0.0.1", 9100 + n) for n in self.nodes},
        )

    def api_versions_of(self, node: int | None = None, *, coordinator: bool = False) -> Any:
        versions = {
            int(k): (0, spec.max_version)
            for k, spec in API_INFO.items()
            if spec.since != "1.0" or node in self.scan_kv_nodes
        }
        if node not in self.scan_kv_nodes:
            versions.pop(int(ApiKey.SCAN_KV), None)
        return ServerApiVersions(f"127.0.0.1:{9100 + (node or 0)}", 2, versions, 0.0)

    async def call(
        self,
        api: ApiKey | int,
        request: Message,
        *,
        node: int | None = None,
        coordinator: bool = False,
        timeout: float | None = None,
    ) -> Message:
        api = ApiKey(api)
        copy = type(request)()
        copy.CopyFrom(request)
        self.calls.append((api, node, copy))
        if api is ApiKey.SCAN_KV and node not in self.scan_kv_nodes:
            raise UnsupportedByServer(api.name, f"node {node}", "the server does not offer it")
        handler = self.overrides.get(api) or getattr(self, f"_h_{api.name.lower()}")
        result = handler(node, copy)
        if asyncio.iscoroutine(result):
            try:
                result = await asyncio.wait_for(result, timeout)
            except TimeoutError:
                raise RequestTimeoutError(f"{api.name} to node {node} timed out") from None
        return result

    async def call_many(self, items: Any, *, timeout: float | None = None) -> list[Any]:
        async def one(target: Any, api: Any, req: Message) -> Any:
            try:
                return await self.call(api, req, node=target, timeout=timeout)
            except Exception as exc:
                return exc

        return list(await asyncio.gather(*(one(*item) for item in items)))

    # -- handlers
    def _table_json(self) -> bytes:
        doc = {
            "version": 1,
            "schema": self.schemas[self.schema_id],
            "partition_key": ["name"] if self.partitions is not None else [],
            "bucket_key": ["id"],
            "bucket_count": len({b for _, b in self.data}),
            "properties": {"table.replication.factor": "1"},
            "custom_properties": {},
        }
        if self.partitions is not None and self.pk:
            doc["schema"] = dict(doc["schema"], primary_key=["id", "name"])
        return json.dumps(doc).encode()

    def _bucket_md(self, key: tuple[int | None, int], into: Any) -> None:
        leader = self.leaders[key]
        if self.metadata_replies == 0 and key in self.stale_leaders:
            leader = self.stale_leaders[key]
        into.add(bucket_id=key[1], leader_id=leader, replica_id=list(self.nodes))

    def _h_get_metadata(self, node: Any, req: pb.MetadataRequest) -> Message:
        resp = pb.MetadataResponse()
        for n in self.nodes:
            resp.tablet_servers.add(node_id=n, host="127.0.0.1", port=9100 + n)
        for path in req.table_path:
            if (path.database_name, path.table_name) != tuple(TABLE):
                raise UnknownServerError(
                    f"wrapped TableNotExistException: Table '{path.database_name}."
                    f"{path.table_name}' does not exist."
                )
            tm = resp.table_metadata.add(
                table_id=TABLE_ID,
                schema_id=self.schema_id,
                table_json=self._table_json(),
                created_time=1,
                modified_time=2,
            )
            tm.table_path.CopyFrom(path)
            if self.partitions is None:
                for key in sorted(self.data):
                    self._bucket_md(key, tm.bucket_metadata)
        for pid in req.partitions_id:
            assert self.partitions is not None
            pm = resp.partition_metadata.add(
                table_id=TABLE_ID, partition_name=self.partitions[pid], partition_id=pid
            )
            for key in sorted(k for k in self.data if k[0] == pid):
                self._bucket_md(key, pm.bucket_metadata)
        self.metadata_replies += 1
        return resp

    def _h_list_partition_infos(self, node: Any, req: Any) -> Message:
        resp = pb.ListPartitionInfosResponse()
        for pid, name in (self.partitions or {}).items():
            info = resp.partitions_info.add(partition_id=pid)
            info.partition_spec.partition_key_values.add(key="name", value=name)
        return resp

    def _h_get_table_schema(self, node: Any, req: pb.GetTableSchemaRequest) -> Message:
        sid = req.schema_id if req.HasField("schema_id") else self.schema_id
        return pb.GetTableSchemaResponse(
            schema_id=sid, schema_json=json.dumps(self.schemas[sid]).encode()
        )

    def _check_leader(self, node: Any, key: tuple[int | None, int]) -> int | None:
        return None if self.leaders[key] == node else 12

    def _value_batch(self, rows: list[tuple[int, dict[str, Any]]]) -> bytes:
        return enc.value_batch(
            [(sid, enc.compacted_row(self.row_type(sid), row)) for sid, row in rows]
        )

    def _h_limit_scan(self, node: Any, req: pb.LimitScanRequest) -> Any:
        key = (req.partition_id if req.HasField("partition_id") else None, req.bucket_id)
        if (ApiKey.LIMIT_SCAN, key) in self.hang:
            return asyncio.Event().wait()
        code = self._check_leader(node, key)
        if code:
            return pb.LimitScanResponse(error_code=code, error_message="not the leader")
        bucket = self.data[key]
        if self.pk:
            rows = bucket.rows[: req.limit]
            return pb.LimitScanResponse(is_log_table=False, records=self._value_batch(rows))
        start = max(bucket.earliest, bucket.latest - req.limit)
        blob = b"".join(b for base, nxt, b in bucket.batches if nxt > start)
        return pb.LimitScanResponse(is_log_table=True, records=blob)

    def _h_scan_kv(self, node: Any, req: pb.ScanKvRequest) -> Any:
        resp = pb.ScanKvResponse()
        if req.close_scanner:
            self.sessions.pop(req.scanner_id, None)
            resp.has_more_results = False
            return resp
        if req.HasField("bucket_scan_req"):
            br = req.bucket_scan_req
            key = (br.partition_id if br.HasField("partition_id") else None, br.bucket_id)
            if key in self.too_many or (
                sum(1 for s in self.sessions.values() if s["key"] == key) >= self.max_per_bucket
            ):
                return pb.ScanKvResponse(error_code=69, error_message="too many scanners")
            if self._check_leader(node, key):
                return pb.ScanKvResponse(error_code=12, error_message="not the leader")
            if req.call_seq_id != 0 or req.batch_size_bytes <= 0:
                return pb.ScanKvResponse(error_code=68, error_message="bad open")
            rows = list(self.data[key].rows)
            if br.limit > 0 and self.honour_limit:
                rows = rows[: br.limit]
            if not rows:
                return pb.ScanKvResponse(has_more_results=False, log_offset=0)
            sid = f"{self.next_session:032x}".encode()
            self.next_session += 1
            session = {"key": key, "rows": rows, "pos": 0, "seq": -1, "node": node}
            self.sessions[sid] = session
            resp.log_offset = 7
        else:
            sid = req.scanner_id
            session = self.sessions.get(sid)
            if session is None:
                return pb.ScanKvResponse(error_code=67, error_message="unknown scanner")
            key = session["key"]
        if req.call_seq_id != session["seq"] + 1:
            return pb.ScanKvResponse(error_code=68, error_message="out of order")
        expiries = self.expire_at.get(key, [])
        if expiries and req.call_seq_id == expiries[0]:
            expiries.pop(0)
            self.sessions.pop(sid, None)
            return pb.ScanKvResponse(error_code=self.expire_code, error_message="expired")
        if self.hang_scan_kv_at_seq.get(key) == req.call_seq_id:
            return asyncio.Event().wait()
        session["seq"] = req.call_seq_id
        page = session["rows"][session["pos"] : session["pos"] + self.page_rows]
        session["pos"] += len(page)
        resp.scanner_id = sid
        resp.records = self._value_batch(page)
        resp.has_more_results = session["pos"] < len(session["rows"])
        if not resp.has_more_results:
            del self.sessions[sid]
        return resp

    def _h_list_offsets(self, node: Any, req: pb.ListOffsetsRequest) -> Message:
        pid = req.partition_id if req.HasField("partition_id") else None
        resp = pb.ListOffsetsResponse()
        for b in req.bucket_id:
            key = (pid, b)
            item = resp.buckets_resp.add(bucket_id=b)
            if self.leaders[key] != node:
                item.error_code = 12
                continue
            bucket = self.data[key]
            item.offset = bucket.earliest if req.offset_type == 0 else bucket.latest
        return resp

    def _h_fetch_log(self, node: Any, req: pb.FetchLogRequest) -> Any:
        resp = pb.FetchLogResponse()
        hang = False
        for t in req.tables_req:
            tr = resp.tables_resp.add(table_id=t.table_id)
            first = True
            for b in t.buckets_req:
                pid = b.partition_id if b.HasField("partition_id") else None
                key = (pid, b.bucket_id)
                if (ApiKey.FETCH_LOG, key) in self.hang:
                    hang = True
                item = tr.buckets_resp.add(bucket_id=b.bucket_id, log_start_offset=0)
                if pid is not None:
                    item.partition_id = pid
                if key in self.fetch_errors:
                    item.error_code = self.fetch_errors[key]
                    continue
                if self.leaders[key] != node:
                    item.error_code = 12
                    continue
                bucket = self.data[key]
                item.high_watermark = bucket.latest
                if b.fetch_offset < bucket.remote_end:
                    info = item.remote_log_fetch_info
                    info.remote_log_tablet_dir = "/remote/db/t-100/0"
                    info.remote_log_segments.add(
                        remote_log_segment_id="seg-1",
                        remote_log_start_offset=bucket.earliest,
                        remote_log_end_offset=bucket.remote_end,
                        segment_size_in_bytes=1000,
                    )
                    info.first_start_pos = 0
                    continue
                blob = b"".join(data for base, nxt, data in bucket.batches if nxt > b.fetch_offset)
                if len(blob) > b.max_fetch_bytes:
                    whole = b""
                    if first and blob:  # minOneMessage: the first bucket gets a whole batch
                        for _base, nxt, data in bucket.batches:
                            if nxt > b.fetch_offset:
                                whole = data
                                break
                    blob = blob[: max(b.max_fetch_bytes, len(whole))]
                item.records = blob
                if blob:
                    first = False
        if hang:
            return asyncio.Event().wait()
        return resp


def kv_cluster(**kwargs: Any) -> FakeScanCluster:
    fake = FakeScanCluster(pk=True, **kwargs)
    for b in range(3):
        fake.put_rows((None, b), [b * 100 + i for i in range(10)])
    return fake


def ids(preview: Any) -> list[int]:
    return preview.table.column("id").to_pylist()


# =========================================================================== decoder comparisons
# Differential tests compare a fast path with its reference (columnar vs row at a time,
# fluss_proto vs pyarrow) through these.


def _cell(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, list):
        return [_cell(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_cell(x) for x in v)
    if isinstance(v, dict):
        return {k: _cell(x) for k, x in v.items()}
    return v


def _storage_type(t: pa.DataType) -> pa.DataType:
    """``t`` with every temporal type replaced by its integer storage, so that values
    Python's datetime cannot hold (e.g. a timestamp of -2**63 ms) still compare."""
    if pa.types.is_timestamp(t) or pa.types.is_time64(t) or pa.types.is_date64(t):
        return pa.int64()
    if pa.types.is_time32(t) or pa.types.is_date32(t):
        return pa.int32()
    if pa.types.is_map(t):
        key, item = t.key_field, t.item_field
        return pa.map_(
            pa.field(key.name, _storage_type(key.type), key.nullable),
            pa.field(item.name, _storage_type(item.type), item.nullable),
        )
    if pa.types.is_list(t):
        f = t.value_field
        return pa.list_(pa.field(f.name, _storage_type(f.type), f.nullable))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _storage_type(f.type), f.nullable) for f in t])
    return t


def _values(column: pa.ChunkedArray) -> Any:
    return _cell(column.cast(_storage_type(column.type)).to_pylist())


def assert_same_table(got: pa.Table, want: pa.Table) -> None:
    """Equal schemas and values (NaN equal to NaN, as Table.equals does not do)."""
    assert got.schema == want.schema
    assert got.num_rows == want.num_rows
    for name in want.column_names:
        a, b = got.column(name), want.column(name)
        # NaN (also nested in lists, maps, structs) is compared as a value
        assert a.equals(b) or _values(a) == _values(b), (name, a, b)
    try:
        want.validate(full=True)
    except pa.ArrowInvalid:  # e.g. a TIME outside one day: pyarrow.array takes it as it is
        got.validate()
    else:
        got.validate(full=True)


def outcome(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """``("ok", table)`` or ``("error", type, message)``; only DecodeErrors are expected."""
    try:
        return ("ok", fn(*args, **kwargs))
    except DecodeError as exc:
        return ("error", type(exc), str(exc))


def assert_same_outcome(got: tuple[Any, ...], want: tuple[Any, ...]) -> None:
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        assert_same_table(got[1], want[1])
    else:
        assert got[1:] == want[1:]


# =========================================================================== record cases


T = DataType
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
I32_MIN, I32_MAX = -(2**31), 2**31 - 1

#: (type, values), one case per scalar type: every value is written, decoded and compared
#: (None = NULL). Shared by the row decoder tests and the columnar-vs-reference tests.
SCALAR_CASES: list[tuple[DataType, list[Any]]] = [
    (T("BOOLEAN"), [True, False, None]),
    (T("TINYINT"), [0, 1, -1, -128, 127, None]),
    (T("SMALLINT"), [0, -1, -32768, 32767, None]),
    (T("INTEGER"), [0, 1, 127, 128, -1, I32_MIN, I32_MAX, 300, None]),
    (T("BIGINT"), [0, 1, -1, I64_MIN, I64_MAX, 2**35, -(2**35), None]),
    (
        T("FLOAT"),
        [0.0, 1.5, -2.25, float("inf"), float("-inf"), 3.4028234663852886e38, None],
    ),
    (T("DOUBLE"), [0.0, -0.0, 1e-300, -1.7976931348623157e308, 5e-324, float("inf"), None]),
    (T("STRING"), ["", "a", "1234567", "12345678", "ünïcödé ✓ 😀", "x" * 300, None]),
    (T("CHAR", length=5), ["", "ab", "abcde", None]),
    (
        T("BYTES"),
        [b"", b"\x00", bytes(range(7)), bytes(range(8)), bytes(range(256)) * 2, None],
    ),
    (T("BINARY", length=4), [b"abcd", b"\x00\x01\x02\x03", None]),
    (
        T("DECIMAL", precision=10, scale=2),
        [Decimal("0.00"), Decimal("12.34"), Decimal("-99999999.99"), Decimal("-0.01"), None],
    ),
    (
        T("DECIMAL", precision=18, scale=0),
        [Decimal(10**18 - 1), Decimal(-(10**18) + 1), None],
    ),
    (
        T("DECIMAL", precision=38, scale=10),
        [
            Decimal("0E-10"),
            Decimal("1234567890123456789012345678.0123456789"),
            Decimal("-9999999999999999999999999999.9999999999"),
            Decimal("-0.0000000001"),
            None,
        ],
    ),
    (
        T("DECIMAL", precision=20, scale=0),
        [Decimal(-1), Decimal(2**63), Decimal(-(2**64)), Decimal(10**20 - 1)],
    ),
    (
        T("DATE"),
        [date(1970, 1, 1), date(1969, 12, 31), date(1, 1, 1), date(9999, 12, 31), None],
    ),
    (
        T("TIME", precision=3),
        [time(0), time(23, 59, 59, 999000), time(12, 0, 0, 1000), None],
    ),
    (T("TIME", precision=0), [time(1, 2, 3), None]),
    (
        T("TIMESTAMP", precision=3),
        [
            datetime(1970, 1, 1),
            datetime(2024, 2, 29, 12, 0, 0, 123000),
            datetime(1969, 12, 31, 23, 59, 59, 999000),
            datetime(1, 1, 1),
            datetime(9999, 12, 31, 23, 59, 59, 999000),
            None,
        ],
    ),
    (
        T("TIMESTAMP", precision=6),
        [datetime(2024, 1, 1, 0, 0, 0, 1), datetime(1900, 1, 1, 0, 0, 0, 999999), None],
    ),
    (
        T("TIMESTAMP", precision=9),
        [Ts(0, 999_999), Ts(-1, 1), Ts(-86_400_001, 123_456), Ts(1_704_067_200_123, 456_789)],
    ),
    (
        T("TIMESTAMP_LTZ", precision=3),
        [datetime(2024, 1, 1, tzinfo=UTC), datetime(1960, 6, 1, 1, 2, 3, tzinfo=UTC), None],
    ),
    (T("TIMESTAMP_LTZ", precision=9), [Ts(-5, 999_999), Ts(1, 0), None]),
]


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

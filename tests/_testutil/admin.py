"""A fake FlussClient for the admin and gather tests: tables, partitions, offsets and the
coordinator APIs answered from memory (:class:`FakeClient`, :func:`standard`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client import (
    COORDINATOR,
    ClusterMetadata,
    ServerNode,
    TablePath,
)
from fluss_proto.error_codes import (
    PartitionNotExistError,
    TableNotExistError,
    UnknownServerError,
    from_code,
)
from fluss_proto.errors import ConnectionClosedError, UnsupportedByServer

Key = tuple[int, int | None, int]


# =========================================================================== the fake


def table_json(*, buckets: int, pk: bool = False, partition_keys: Iterable[str] = ()) -> bytes:
    columns = [{"name": "id", "data_type": {"type": "BIGINT", "nullable": False}, "id": 0}]
    columns.append({"name": "region", "data_type": {"type": "STRING"}, "id": 1})
    schema: dict[str, Any] = {"version": 1, "columns": columns, "highest_field_id": 1}
    if pk:
        schema["primary_key"] = ["id", *partition_keys]
    doc = {
        "version": 1,
        "schema": schema,
        "partition_key": list(partition_keys),
        "bucket_key": ["id"],
        "bucket_count": buckets,
        "properties": {"table.replication.factor": "2"},
        "custom_properties": {},
    }
    return json.dumps(doc).encode()


@dataclass
class FakeTable:
    table_id: int
    buckets: int
    pk: bool = False
    #: partition id -> (name, spec) for partitioned tables
    partitions: dict[int, tuple[str, dict[str, str]]] | None = None

    @property
    def partition_keys(self) -> list[str]:
        if not self.partitions:
            return []
        return list(next(iter(self.partitions.values()))[1])


Handler = Callable[[int | str | None, Message], Any]


@dataclass
class FakeClient:
    """Answers like a 3-tablet-server Fluss cluster (coordinator = node 0 on port 9000)."""

    tables: dict[TablePath, FakeTable] = field(default_factory=dict)
    databases: list[str] = field(default_factory=list)
    tablets: tuple[int, ...] = (0, 1, 2)
    #: Where a bucket's leader really is; defaults to (bucket_id + partition_id) % 3.
    leaders: dict[Key, int | None] = field(default_factory=dict)
    #: The first ``stale_metadata`` GetMetadata replies report these leaders instead.
    stale_leaders: dict[Key, int | None] = field(default_factory=dict)
    stale_metadata: int = 0
    #: (earliest, latest) per bucket; default (0, 10 * (bucket + 1)).
    offsets: dict[Key, tuple[int, int]] = field(default_factory=dict)
    #: Per-bucket error codes for ListOffsets / GetTableStats / FetchLog, whatever node
    #: is asked.
    bucket_errors: dict[Key, int] = field(default_factory=dict)
    #: Per-bucket error codes for FetchLog only (e.g. 48: no READ permission).
    fetch_errors: dict[Key, int] = field(default_factory=dict)
    #: Nodes whose connection fails.
    down: set[int | str] = field(default_factory=set)
    #: API keys each target does not advertise.
    unadvertised: dict[int | str, set[ApiKey]] = field(default_factory=dict)
    fluss_1_0: bool = False
    overrides: dict[ApiKey, Handler] = field(default_factory=dict)
    #: Called before every batch (``call`` is a batch of one): lets a test change the
    #: cluster between steps.
    before_batch: Callable[[int], None] | None = None
    batches: list[list[tuple[Any, ApiKey, Message]]] = field(default_factory=list)
    metadata_replies: int = 0

    # -- what FlussAdmin uses
    @property
    def metadata(self) -> ClusterMetadata:
        return ClusterMetadata(
            coordinator=ServerNode(0, "127.0.0.1", 9000),
            tablet_servers={n: ServerNode(n, "127.0.0.1", 9100 + n, f"r{n}") for n in self.tablets},
        )

    async def call(
        self,
        api: ApiKey | int,
        request: Message,
        *,
        node: int | None = None,
        coordinator: bool = False,
        timeout: float | None = None,
    ) -> Message:
        target: int | str | None = COORDINATOR if coordinator else node
        [result] = await self.call_many([(target, api, request)], timeout=timeout)
        if isinstance(result, BaseException):
            raise result
        return result

    async def call_many(
        self, items: Iterable[tuple[int | str | None, ApiKey | int, Message]], *, timeout=None
    ) -> list[Message | BaseException]:
        items = [(t, ApiKey(a), r) for t, a, r in items]
        if self.before_batch is not None:
            self.before_batch(len(self.batches))
        self.batches.append(items)
        out: list[Message | BaseException] = []
        for target, api, request in items:
            assert not API_INFO[api].mutating, api
            try:
                out.append(self._answer(target, api, request))
            except Exception as exc:
                out.append(exc)
        return out

    # -- helpers for tests
    def sent(self, api: ApiKey) -> list[tuple[Any, Message]]:
        return [(t, r) for batch in self.batches for t, a, r in batch if a == api]

    def leader(self, key: Key) -> int | None:
        if key in self.leaders:
            return self.leaders[key]
        return (key[2] + (key[1] or 0)) % len(self.tablets)

    # -- the server side
    def _advertises(self, target: int | str | None, api: ApiKey) -> bool:
        spec = API_INFO[api]
        if spec.since == "1.0" and not self.fluss_1_0:
            return False
        if api in self.unadvertised.get(target if target is not None else -1, set()):
            return False
        if target == COORDINATOR:
            return spec.served_by in ("coordinator", "both")
        return spec.served_by in ("tablet", "both")

    def _answer(self, target: int | str | None, api: ApiKey, req: Any) -> Message:
        where = "coordinator" if target == COORDINATOR else f"node {target}"
        if target in self.down:
            raise ConnectionClosedError(f"{where} is down")
        if not self._advertises(target, api):
            raise UnsupportedByServer(api.name, where, "the server does not offer it")
        if api in self.overrides:
            return self.overrides[api](target, req)
        handler = getattr(self, f"_h_{api.name.lower()}", None)
        if handler is None:
            raise UnknownServerError(f"fake has no handler for {api.name}")
        return handler(target, req)

    def _h_api_versions(self, target: Any, req: Any) -> Message:
        resp = pb.ApiVersionsResponse(server_type=1 if target == COORDINATOR else 2)
        for key in ApiKey:
            if self._advertises(target, key):
                resp.api_versions.add(api_key=int(key), min_version=0, max_version=0)
        return resp

    def _h_list_databases(self, target: Any, req: Any) -> Message:
        return pb.ListDatabasesResponse(database_name=self.databases)

    def _h_list_tables(self, target: Any, req: Any) -> Message:
        if req.database_name not in self.databases:
            raise from_code(4, f"Database {req.database_name} does not exist.")
        names = [p.table for p in self.tables if p.database == req.database_name]
        return pb.ListTablesResponse(table_name=names)

    def _bucket_md(self, key: Key, into: Any, stale: bool) -> None:
        leader = self.stale_leaders.get(key, self.leader(key)) if stale else self.leader(key)
        b = into.add(bucket_id=key[2], replica_id=[0, 1, 2][: len(self.tablets)], leader_epoch=3)
        if leader is not None:
            b.leader_id = leader

    def _h_get_metadata(self, target: Any, req: Any) -> Message:
        stale = self.metadata_replies < self.stale_metadata
        self.metadata_replies += 1
        resp = pb.MetadataResponse()
        resp.coordinator_server.MergeFrom(pb.PbServerNode(node_id=0, host="127.0.0.1", port=9000))
        for n in self.tablets:
            resp.tablet_servers.add(node_id=n, host="127.0.0.1", port=9100 + n, rack=f"r{n}")
        by_id = {t.table_id: (p, t) for p, t in self.tables.items()}
        for pp in req.table_path:
            path = TablePath(pp.database_name, pp.table_name)
            t = self.tables.get(path)
            if t is None:
                raise UnknownServerError(
                    f"org.apache.fluss.exception.FlussRuntimeException: Failed to get tables "
                    f"'[{path}]'.\n\tat ...\nCaused by: org.apache.fluss.exception."
                    f"TableNotExistException: Table '{path}' does not exist."
                )
            tm = resp.table_metadata.add(
                table_id=t.table_id,
                schema_id=1,
                table_json=table_json(buckets=t.buckets, pk=t.pk, partition_keys=t.partition_keys),
                created_time=11,
                modified_time=12,
            )
            tm.table_path.CopyFrom(pp)
            if not t.partitions:
                for b in range(t.buckets):
                    self._bucket_md((t.table_id, None, b), tm.bucket_metadata, stale)
        ids = list(req.partitions_id)
        for pp in req.partitions_path:
            t = self.tables.get(TablePath(pp.database_name, pp.table_name))
            named = [i for i, (n, _) in (t.partitions or {}).items() if n == pp.partition_name]
            if t is None or not named:
                raise PartitionNotExistError(f"partition {pp.partition_name} does not exist")
            ids.extend(named)
        for pid in ids:
            found = [(p, t) for p, t in by_id.values() if t.partitions and pid in t.partitions]
            if not found:
                raise PartitionNotExistError(f"The partition id '{pid}' does not exist")
            _, t = found[0]
            pm = resp.partition_metadata.add(
                table_id=t.table_id, partition_id=pid, partition_name=t.partitions[pid][0]
            )
            for b in range(t.buckets):
                self._bucket_md((t.table_id, pid, b), pm.bucket_metadata, stale)
        return resp

    def _h_list_partition_infos(self, target: Any, req: Any) -> Message:
        path = TablePath(req.table_path.database_name, req.table_path.table_name)
        t = self.tables.get(path)
        if t is None:
            raise TableNotExistError(f"Table '{path}' does not exist.")
        if not t.partitions:
            raise from_code(37, f"Table '{path}' is not a partitioned table.")
        resp = pb.ListPartitionInfosResponse()
        for pid, (_name, spec) in t.partitions.items():
            info = resp.partitions_info.add(partition_id=pid)
            for k, v in spec.items():
                info.partition_spec.partition_key_values.add(key=k, value=v)
        return resp

    def _h_get_table_info(self, target: Any, req: Any) -> Message:
        path = TablePath(req.table_path.database_name, req.table_path.table_name)
        t = self.tables.get(path)
        if t is None:
            raise TableNotExistError(f"Table '{path}' does not exist.")
        return pb.GetTableInfoResponse(
            table_id=t.table_id,
            schema_id=1,
            table_json=table_json(buckets=t.buckets, pk=t.pk, partition_keys=t.partition_keys),
            created_time=11,
            modified_time=12,
        )

    def _per_bucket(self, target: Any, key: Key, out: Any) -> bool:
        """Fill an error into ``out`` when this node cannot answer for ``key``."""
        code = self.bucket_errors.get(key)
        if code is None and self.leader(key) != target:
            code = 12
        if code is not None:
            out.error_code = code
            out.error_message = f"bucket {key} error {code} at node {target}"
            return True
        return False

    def _h_list_offsets(self, target: Any, req: Any) -> Message:
        assert req.follower_server_id == -1
        resp = pb.ListOffsetsResponse()
        pid = req.partition_id if req.HasField("partition_id") else None
        for b in req.bucket_id:
            key = (req.table_id, pid, b)
            item = resp.buckets_resp.add(bucket_id=b)
            if self._per_bucket(target, key, item):
                continue
            earliest, latest = self.offsets.get(key, (0, 10 * (b + 1)))
            if req.offset_type == 2 and req.startTimestamp > 10**12:
                item.error_code, item.error_message = 38, "timestamp in the future"
                item.ClearField("offset")
                continue
            item.offset = {0: earliest, 1: latest, 2: earliest}[req.offset_type]
        return resp

    def _h_fetch_log(self, target: Any, req: Any) -> Message:
        """Like a 0.9.1 leader: the high watermark per bucket, no log start offset; the
        fetch offset must be -2 (earliest) or within [earliest, latest]."""
        assert req.follower_server_id == -1 and req.max_bytes == 0
        assert req.HasField("min_bytes") and req.max_wait_ms == 0
        resp = pb.FetchLogResponse()
        for tr in req.tables_req:
            out = resp.tables_resp.add(table_id=tr.table_id)
            for b in tr.buckets_req:
                pid = b.partition_id if b.HasField("partition_id") else None
                key = (tr.table_id, pid, b.bucket_id)
                item = out.buckets_resp.add(bucket_id=b.bucket_id)
                if pid is not None:
                    item.partition_id = pid
                if key in self.fetch_errors:
                    item.error_code = self.fetch_errors[key]
                    item.error_message = f"fetch of {key} refused"
                    continue
                if self._per_bucket(target, key, item):
                    continue
                earliest, latest = self.offsets.get(key, (0, 10 * (b.bucket_id + 1)))
                if b.fetch_offset != -2 and not earliest <= b.fetch_offset <= latest:
                    item.error_code, item.error_message = 19, "out of range"
                    continue
                item.high_watermark, item.log_start_offset = latest, 0
        return resp

    def _h_get_table_stats(self, target: Any, req: Any) -> Message:
        resp = pb.GetTableStatsResponse()
        for b in req.buckets_req:
            pid = b.partition_id if b.HasField("partition_id") else None
            key = (req.table_id, pid, b.bucket_id)
            item = resp.buckets_resp.add(bucket_id=b.bucket_id)
            if pid is not None:
                item.partition_id = pid
            if not self._per_bucket(target, key, item):
                item.row_count = 100 + b.bucket_id
        return resp


def db_with(client: FakeClient, db: str, n_tables: int, *, first_id: int = 1) -> None:
    client.databases.append(db)
    for i in range(n_tables):
        client.tables[TablePath(db, f"t{i:03d}")] = FakeTable(first_id + i, buckets=3)


def standard() -> FakeClient:
    client = FakeClient()
    client.databases.append("db")
    client.tables[TablePath("db", "log")] = FakeTable(1, buckets=6)
    client.tables[TablePath("db", "pk")] = FakeTable(2, buckets=2, pk=True)
    client.tables[TablePath("db", "part")] = FakeTable(
        3, buckets=2, partitions={7: ("eu", {"region": "eu"}), 8: ("us", {"region": "us"})}
    )
    return client

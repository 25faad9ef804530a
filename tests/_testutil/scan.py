"""A table model answering ScanKv, LimitScan, FetchLog, ListOffsets and metadata like Fluss
servers, with real record bytes (:class:`FakeScanCluster`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa
from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client import (
    ClusterMetadata,
    ServerApiVersions,
    ServerNode,
    TablePath,
)
from fluss_proto.error_codes import (
    UnknownServerError,
)
from fluss_proto.errors import RequestTimeoutError, UnsupportedByServer
from fluss_proto.records import as_row_type, to_arrow_schema
from tests._testutil import records_encoder as enc

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
        #: Called when a ScanKv request starts to hang (hang_scan_kv_at_seq): a test acts
        #: on that moment, not on a time it guesses.
        self.on_scan_kv_hang: Callable[[], object] | None = None
        self.fetch_errors: dict[tuple[int | None, int], int] = {}
        self.overrides: dict[ApiKey, Callable[[int | None, Any], Any]] = {}
        #: Body compression of appended Arrow log batches ("zstd", "lz4"; None: raw).
        self.log_compression: str | None = None

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
        payload = enc.arrow_message(data, self.log_compression)
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
            if self.on_scan_kv_hang is not None:
                self.on_scan_kv_hang()
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

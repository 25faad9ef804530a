"""fluss_proto.scan (table previews) and `konsole preview` against a fake cluster.

The fake answers like Fluss servers, from a small table model, with real record bytes built
by ``records_encoder``: ScanKv follows ``TabletService.scanKv`` / ``ScannerManager`` (call
sequence ids from 0, sessions dropped after the last page, close accepted for any id, per
bucket session cap), LimitScan follows ``Replica.limitKvScan`` / ``limitLogScan``, FetchLog
returns whole batches from the one *containing* the fetch offset, cut at the byte budget (so
the reply may end in a fragment), or ``remote_log_fetch_info`` for offsets below the local
log. ScanKv exists only in Fluss 1.0, which is not available as a server: these fakes are
the only place its sessions are exercised.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from click.testing import CliRunner
from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client import ClusterMetadata, ServerApiVersions, ServerNode, TablePath
from fluss_proto.error_codes import (
    LogOffsetOutOfRangeError,
    PartitionNotExistError,
    ScannerExpiredError,
    TooManyScannersError,
    UnknownScannerIdError,
    UnknownServerError,
    from_code,
)
from fluss_proto.errors import RequestTimeoutError, UnsupportedByServer
from fluss_proto.records import CompactedRowDecoder, as_row_type, to_arrow_schema
from fluss_proto.scan import (
    BucketStatus,
    PreviewArgumentError,
    ScanMethod,
    _fair_quota,
    preview_table,
)
from fluss_proto.types import parse_schema
from tests.unit import records_encoder as enc

pytestmark = pytest.mark.timeout(30)

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


# =========================================================================== ScanKv


async def test_scan_kv_pages_with_call_seq_ids_and_never_closes_a_drained_session() -> None:
    fake = kv_cluster()
    result = await preview_table(fake, "db.t", limit=100, batch_size_bytes=4096)
    assert sorted(ids(result)) == sorted(b * 100 + i for b in range(3) for i in range(10))
    # Key order inside each bucket, buckets in order.
    assert ids(result) == [b * 100 + i for b in range(3) for i in range(10)]
    report = result.report
    assert report.complete and not report.limit_cut
    assert {b.method for b in report.buckets} == {ScanMethod.SCAN_KV}
    assert [b.rows_read for b in report.buckets] == [10, 10, 10]
    sent = [r for _, r in fake.sent(ApiKey.SCAN_KV)]
    assert not any(r.close_scanner for r in sent)
    per_session: dict[bytes, list[int]] = {}
    for r in sent:
        if r.HasField("bucket_scan_req"):
            assert r.call_seq_id == 0 and r.batch_size_bytes == 4096
            assert r.bucket_scan_req.limit == 100
        else:
            per_session.setdefault(r.scanner_id, []).append(r.call_seq_id)
    assert all(seqs == [1, 2] for seqs in per_session.values())  # 10 rows, 4 per page
    assert not fake.sessions
    # Types stay Fluss's: decimal128 and microsecond timestamps; _bucket is added.
    schema = result.table.schema
    assert schema.field("amount").type == pa.decimal128(10, 2)
    assert schema.field("ts").type == pa.timestamp("us")
    assert schema.field("id").nullable is False
    assert schema.names[-1] == "_bucket" and "_offset" not in schema.names
    assert result.table.column("_bucket").to_pylist() == [b for b in range(3) for _ in range(10)]
    first = result.table.slice(0, 1).to_pylist()[0]
    assert first["amount"] == Decimal("0.00") and first["ts"] == datetime(2024, 1, 1)


async def test_scan_kv_closes_a_session_it_stops_early_and_shares_the_limit() -> None:
    fake = kv_cluster()
    fake.honour_limit = False  # the server would go on: we must close
    result = await preview_table(fake, "db.t", limit=6)
    assert result.table.num_rows == 6
    assert result.report.limit_cut
    assert [b.rows_returned for b in result.report.buckets] == [2, 2, 2]
    closes = [r for _, r in fake.sent(ApiKey.SCAN_KV) if r.close_scanner]
    assert len(closes) == 3
    assert all(r.scanner_id and not r.HasField("bucket_scan_req") for r in closes)
    assert not fake.sessions
    assert sum(b.sessions_closed for b in result.report.buckets) == 3


@pytest.mark.parametrize(
    ("code", "error"), [(66, ScannerExpiredError), (67, UnknownScannerIdError)]
)
async def test_expired_session_is_reopened_once(code: int, error: type) -> None:
    fake = kv_cluster()
    fake.expire_code = code
    fake.expire_at[(None, 1)] = [2]
    result = await preview_table(fake, "db.t", limit=100)
    b1 = result.report.buckets[1]
    assert b1.status is BucketStatus.SCANNED and b1.reopened
    assert ids(result).count(105) == 1 and len(ids(result)) == 30  # no duplicates
    opens = [r for n, r in fake.sent(ApiKey.SCAN_KV) if r.HasField("bucket_scan_req")]
    assert len(opens) == 4
    assert not any(r.close_scanner for _, r in fake.sent(ApiKey.SCAN_KV))  # nothing to close

    fake = kv_cluster()
    fake.expire_code = code
    fake.expire_at[(None, 1)] = [1, 1]
    result = await preview_table(fake, "db.t", limit=100)
    b1 = result.report.buckets[1]
    assert b1.status is BucketStatus.FAILED and isinstance(b1.error, error)
    # The first session's page was dropped (a new session is a new snapshot); the second
    # session's page is kept and shown, as for any bucket that failed half-way.
    assert b1.rows_read == 4
    assert not result.report.complete and result.report.failed == (b1,)
    assert len(ids(result)) == 24


async def test_too_many_scanners_is_reported_for_that_bucket_only() -> None:
    fake = kv_cluster()
    fake.too_many.add((None, 2))
    result = await preview_table(fake, "db.t", limit=100)
    b0, b1, b2 = result.report.buckets
    assert b0.status is b1.status is BucketStatus.SCANNED
    assert b2.status is BucketStatus.FAILED and isinstance(b2.error, TooManyScannersError)
    assert b2.error.code == 69 and b2.method is ScanMethod.SCAN_KV
    assert b2.requests == 3  # the open and two retries after a back-off
    assert sorted(set(result.table.column("_bucket").to_pylist())) == [0, 1]
    assert "bucket-2 [ScanKv] failed" in "\n".join(result.report.summary_lines())


async def test_deadline_times_out_a_bucket_keeps_its_rows_and_closes_its_session() -> None:
    fake = kv_cluster()
    fake.hang_scan_kv_at_seq[(None, 1)] = 1  # first page arrives, the second never does
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = await preview_table(fake, "db.t", limit=100, deadline_s=0.5)
    assert loop.time() - started < 3
    b0, b1, b2 = result.report.buckets
    assert b1.status is BucketStatus.TIMED_OUT and isinstance(b1.error, RequestTimeoutError)
    assert b1.rows_read == 4 and b1.rows_returned == 4  # what it had is still shown
    assert b0.status is b2.status is BucketStatus.SCANNED
    assert result.report.timed_out == (b1,) and not result.report.complete
    assert not result.report.nothing_read
    closes = [(n, r) for n, r in fake.sent(ApiKey.SCAN_KV) if r.close_scanner]
    assert len(closes) == 1 and closes[0][0] == fake.leaders[(None, 1)]


async def test_a_hanging_bucket_is_timed_out_never_empty() -> None:
    fake = FakeScanCluster(pk=False)
    for b in range(3):
        fake.append_log((None, b), [b * 100 + i for i in range(5)])
    fake.hang.add((ApiKey.LIMIT_SCAN, (None, 0)))
    result = await preview_table(fake, "db.t", deadline_s=0.3)
    b0 = result.report.buckets[0]
    assert b0.status is BucketStatus.TIMED_OUT and b0.rows_read == 0
    assert result.report.empty == ()
    assert len(ids(result)) == 10


async def test_cancelling_the_preview_closes_open_sessions() -> None:
    fake = kv_cluster()
    fake.hang_scan_kv_at_seq[(None, 0)] = 1
    task = asyncio.ensure_future(preview_table(fake, "db.t", deadline_s=30))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if any(r.call_seq_id == 1 for _, r in fake.sent(ApiKey.SCAN_KV)):
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    closes = [r for _, r in fake.sent(ApiKey.SCAN_KV) if r.close_scanner]
    assert len(closes) == 1


async def test_leaders_without_scan_kv_get_limit_scan() -> None:
    fake = kv_cluster(scan_kv_nodes={2})  # bucket 1's leader is node 2
    result = await preview_table(fake, "db.t", limit=100)
    methods = [b.method for b in result.report.buckets]
    assert methods == [ScanMethod.LIMIT_SCAN, ScanMethod.SCAN_KV, ScanMethod.LIMIT_SCAN]
    assert len(ids(result)) == 30 and result.report.complete
    assert all(n == 2 for n, _ in fake.sent(ApiKey.SCAN_KV))


async def test_unknown_versions_try_scan_kv_and_fall_back_without_sending() -> None:
    fake = kv_cluster(scan_kv_nodes=set())
    fake.api_versions_of = lambda *a, **k: None  # type: ignore[method-assign]
    result = await preview_table(fake, "db.t", limit=100)
    assert {b.method for b in result.report.buckets} == {ScanMethod.LIMIT_SCAN}
    assert [b.requests for b in result.report.buckets] == [1, 1, 1]
    assert len(ids(result)) == 30


@pytest.mark.parametrize("scan_kv_nodes", [set(), {1, 2, 3}], ids=["limit_scan", "scan_kv"])
async def test_only_the_rows_shown_are_decoded_by_the_vectorised_path(
    monkeypatch: pytest.MonkeyPatch, scan_kv_nodes: set[int]
) -> None:
    """Every bucket is asked for ``limit`` rows; the value records are kept undecoded and
    only the fair share shown goes through CompactedRowDecoder.decode_table (the columnar
    fast path), never through the row-at-a-time reference."""
    decoded: list[int] = []
    original = CompactedRowDecoder.decode_table

    def counting(self: CompactedRowDecoder, buffer: bytes, starts: Any, ends: Any) -> pa.Table:
        decoded.append(len(starts))
        return original(self, buffer, starts, ends)

    def no_reference(*_: Any) -> pa.Table:
        raise AssertionError("the row-at-a-time reference decoder was used")

    monkeypatch.setattr(CompactedRowDecoder, "decode_table", counting)
    monkeypatch.setattr(CompactedRowDecoder, "reference_table", no_reference)
    fake = kv_cluster(scan_kv_nodes=scan_kv_nodes)
    fake.honour_limit = False
    result = await preview_table(fake, "db.t", limit=6)
    assert ids(result) == [0, 1, 100, 101, 200, 201]
    assert sum(decoded) == 6
    assert sum(b.rows_read for b in result.report.buckets) >= 18
    method = ScanMethod.SCAN_KV if scan_kv_nodes else ScanMethod.LIMIT_SCAN
    assert {b.method for b in result.report.buckets} == {method}


async def test_rows_of_an_older_schema_map_onto_the_latest_by_column_id() -> None:
    fake = FakeScanCluster(pk=True, buckets=1, schema_id=2)
    fake.put_rows((None, 0), [1, 3], schema_id=1)
    fake.put_rows((None, 0), [2, 4], schema_id=2)
    result = await preview_table(fake, "db.t")
    rows = result.table.to_pylist()
    assert [r["id"] for r in rows] == [1, 2, 3, 4]
    assert [r["note"] for r in rows] == [None, "note2", None, "note4"]
    assert result.report.schema_ids == (1, 2) and result.report.schema_id == 2
    assert len(fake.sent(ApiKey.GET_TABLE_SCHEMA)) == 1  # cached per schema id


async def test_stale_leader_is_refreshed_once_and_retried() -> None:
    fake = kv_cluster(scan_kv_nodes=set())
    fake.stale_leaders[(None, 0)] = 3  # the real leader is node 1
    result = await preview_table(fake, "db.t", limit=100)
    b0 = result.report.buckets[0]
    assert b0.status is BucketStatus.SCANNED and b0.leader_id == 1 and b0.requests == 2
    assert len(ids(result)) == 30


# =========================================================================== LimitScan on logs


async def test_limit_scan_on_a_log_keeps_the_last_rows_with_offsets() -> None:
    fake = FakeScanCluster(pk=False, buckets=1)
    fake.append_log((None, 0), list(range(0, 10)))
    fake.append_log((None, 0), list(range(10, 20)))
    result = await preview_table(fake, "db.t", limit=5)
    assert ids(result) == [15, 16, 17, 18, 19]  # the batch started at 10: rows cut on our side
    assert result.table.column("_offset").to_pylist() == [15, 16, 17, 18, 19]
    assert set(result.table.column("_change_type").to_pylist()) == {"+A"}
    assert result.report.buckets[0].method is ScanMethod.LIMIT_SCAN
    assert result.report.limit_cut


# =========================================================================== FetchLog tail


def log_cluster(buckets: int = 1, batches: int = 3, per_batch: int = 10) -> FakeScanCluster:
    fake = FakeScanCluster(pk=False, buckets=buckets)
    for b in range(buckets):
        for n in range(batches):
            start = b * 1000 + n * per_batch
            fake.append_log((None, b), list(range(start, start + per_batch)))
    return fake


async def test_tail_drops_rows_before_the_fetch_offset() -> None:
    fake = log_cluster()
    result = await preview_table(fake, "db.t", limit=15, tail=True)
    assert ids(result) == list(range(15, 30))
    assert result.table.column("_offset").to_pylist() == list(range(15, 30))
    fetches = fake.sent(ApiKey.FETCH_LOG)
    assert fetches[0][1].tables_req[0].buckets_req[0].fetch_offset == 15
    b = result.report.buckets[0]
    assert (b.start_offset, b.end_offset, b.earliest_offset) == (15, 30, 0)
    assert b.method is ScanMethod.FETCH_LOG_TAIL and b.limit_reached
    # ListOffsets LATEST and EARLIEST, one request each per leader
    assert sorted(r.offset_type for _, r in fake.sent(ApiKey.LIST_OFFSETS)) == [0, 1]


async def test_tail_resumes_after_a_truncated_trailing_batch() -> None:
    fake = log_cluster(batches=4)
    batch_size = len(fake.data[(None, 0)].batches[0][2])
    result = await preview_table(
        fake, "db.t", limit=40, tail=True, fetch_max_bytes_per_bucket=batch_size + 10
    )
    assert ids(result) == list(range(40))
    offsets = [r.tables_req[0].buckets_req[0].fetch_offset for _, r in fake.sent(ApiKey.FETCH_LOG)]
    assert offsets == [0, 10, 20, 30]  # each reply: one batch + a fragment of the next
    assert result.report.complete


async def test_tail_bucket_whose_batch_exceeds_its_budget_gets_more_room() -> None:
    fake = log_cluster(buckets=4, batches=2)  # node 1 leads buckets 0 and 3
    result = await preview_table(fake, "db.t", limit=100, tail=True, fetch_max_bytes_per_bucket=64)
    assert sorted(ids(result)) == sorted(b * 1000 + i for b in range(4) for i in range(20))
    assert result.report.complete
    budgets = [
        [b.max_fetch_bytes for b in r.tables_req[0].buckets_req]
        for _, r in fake.sent(ApiKey.FETCH_LOG)
    ]
    assert any(max(b) > 64 for b in budgets)


async def test_tail_uses_list_offsets_earliest_not_log_start_offset() -> None:
    fake = log_cluster()
    fake.data[(None, 0)].earliest = 10  # FetchLog still says log_start_offset=0
    result = await preview_table(fake, "db.t", limit=100, tail=True)
    assert ids(result) == list(range(10, 30))
    assert fake.sent(ApiKey.FETCH_LOG)[0][1].tables_req[0].buckets_req[0].fetch_offset == 10


async def test_tail_in_remote_storage_is_reported_not_empty() -> None:
    fake = log_cluster()
    fake.data[(None, 0)].remote_end = 20
    result = await preview_table(fake, "db.t", limit=100, tail=True)
    b = result.report.buckets[0]
    assert b.status is BucketStatus.REMOTE and "[0, 20)" in (b.detail or "")
    assert ids(result) == list(range(20, 30))  # the local part is still read
    assert not result.report.complete and result.report.empty == ()

    fake = log_cluster()
    fake.data[(None, 0)].remote_end = 30  # everything is remote
    result = await preview_table(fake, "db.t", limit=100, tail=True)
    b = result.report.buckets[0]
    assert b.status is BucketStatus.REMOTE and b.rows_read == 0
    assert "in remote storage" in "\n".join(result.report.summary_lines())


async def test_tail_per_bucket_errors_stay_per_bucket() -> None:
    fake = log_cluster(buckets=3)
    fake.fetch_errors[(None, 1)] = 19
    result = await preview_table(fake, "db.t", limit=100, tail=True)
    b0, b1, b2 = result.report.buckets
    assert isinstance(b1.error, LogOffsetOutOfRangeError) and b1.status is BucketStatus.FAILED
    assert b0.status is b2.status is BucketStatus.SCANNED
    assert len(ids(result)) == 60
    # all buckets of one leader go in one request: three leaders, one request each
    assert len(fake.sent(ApiKey.FETCH_LOG)) == 3


async def test_tail_groups_buckets_per_leader_and_times_out_a_hanging_leader() -> None:
    fake = log_cluster(buckets=6)
    fake.hang.add((ApiKey.FETCH_LOG, (None, 1)))  # node 2 leads buckets 1 and 4
    result = await preview_table(fake, "db.t", limit=100, tail=True, deadline_s=0.5)
    statuses = [b.status for b in result.report.buckets]
    assert statuses == [
        BucketStatus.SCANNED,
        BucketStatus.TIMED_OUT,
        BucketStatus.SCANNED,
        BucketStatus.SCANNED,
        BucketStatus.TIMED_OUT,
        BucketStatus.SCANNED,
    ]
    requests = fake.sent(ApiKey.FETCH_LOG)
    assert len(requests) == 3 and all(len(r.tables_req[0].buckets_req) == 2 for _, r in requests)


async def test_changelog_tail_of_a_pk_table_keeps_change_types() -> None:
    fake = FakeScanCluster(pk=True, buckets=1)
    fake.append_log((None, 0), [1, 1, 2], change_types=[1, 2, 3])
    result = await preview_table(fake, "db.t", tail=True)
    assert result.table.column("_change_type").to_pylist() == ["+I", "-U", "+U"]


# =========================================================================== partitions, args


async def test_all_partitions_bounded_by_max_partitions() -> None:
    fake = FakeScanCluster(pk=False, buckets=2, partitions={5: "a", 6: "b", 7: "c"})
    for key in fake.data:
        fake.append_log(key, [key[0] * 100 + key[1] * 10 + i for i in range(3)])
    result = await preview_table(fake, "db.t", partition="all", max_partitions=2)
    assert result.report.partitions == ("b", "c") and result.report.partitions_skipped == ("a",)
    assert set(result.table.column("_partition").to_pylist()) == {"b", "c"}
    assert result.table.num_rows == 12
    one = await preview_table(fake, "db.t", partition="name=a")
    assert set(one.table.column("_partition").to_pylist()) == {"a"}
    with pytest.raises(PartitionNotExistError):
        await preview_table(fake, "db.t", partition="zzz")


async def test_bad_arguments() -> None:
    fake = kv_cluster()
    with pytest.raises(PreviewArgumentError):
        await preview_table(fake, "db.t", partition="x")
    with pytest.raises(PreviewArgumentError):
        await preview_table(fake, "db.t", limit=0)
    with pytest.raises(ValueError):
        await preview_table(fake, "nodot")


def test_fair_quota() -> None:
    assert _fair_quota([10, 10, 10], 6) == [2, 2, 2]
    assert _fair_quota([1, 10, 10], 7) == [1, 3, 3]
    assert _fair_quota([0, 5, 100], 50) == [0, 5, 45]
    assert _fair_quota([3, 3], 100) == [3, 3]
    assert sum(_fair_quota([7, 1, 9, 2], 10)) == 10


# =========================================================================== CLI


def _cli(fake: FakeScanCluster, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    from konsole import cli

    async def connect(*_a: Any, **_k: Any) -> Any:
        async def close() -> None:
            return None

        fake.close = close  # type: ignore[attr-defined]
        return fake

    monkeypatch.setattr("fluss_proto.client.FlussClient.connect", connect)
    return CliRunner().invoke(cli.main, ["preview", *args])


def test_cli_json_output_and_exit_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = kv_cluster()
    res = _cli(fake, monkeypatch, "db.t", "--format", "json", "--limit", "5")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert len(doc["rows"]) == 5 and doc["report"]["limit_cut"]
    row = doc["rows"][0]
    assert row["amount"] == "0.00" and row["ts"] == "2024-01-01T00:00:00.000000"
    assert {c["name"]: c["type"] for c in doc["columns"]}["amount"] == "DECIMAL(10, 2)"
    assert "via ScanKv" in res.stderr

    fake = kv_cluster()
    fake.too_many.add((None, 0))
    res = _cli(fake, monkeypatch, "db.t", "--format", "csv")
    assert res.exit_code == 1 and res.stdout.startswith("id,name,amount,ts,_bucket\n")
    assert "TOO_MANY_SCANNERS" in res.stderr

    fake = kv_cluster()
    fake.too_many.update({(None, 0), (None, 1), (None, 2)})
    assert _cli(fake, monkeypatch, "db.t").exit_code == 2
    assert _cli(kv_cluster(), monkeypatch, "db.nope").exit_code == 2
    assert _cli(kv_cluster(), monkeypatch, "db.t", "--partition", "p").exit_code == 3
    assert _cli(kv_cluster(), monkeypatch, "nodot").exit_code == 3
    assert _cli(kv_cluster(), monkeypatch, "db.t", "--limit", "-1").exit_code == 3
    assert _cli(kv_cluster(), monkeypatch, "db.t", "--format", "xml").exit_code == 3
    res = _cli(kv_cluster(), monkeypatch, "db.t", "--limit", "3")
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["id", "name", "amount", "ts", "_bucket"] and len(lines) == 5


def test_json_values_render_every_kind() -> None:
    from fluss_proto.types import parse_data_type
    from konsole.preview_cmd import json_values

    def ltz(p: int) -> Any:
        return parse_data_type({"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": p})

    ns = pa.array([1_700_000_000_123_456_789, -1, None], pa.timestamp("ns"))
    assert json_values(ns) == [
        "2023-11-14T22:13:20.123456789",
        "1969-12-31T23:59:59.999999999",
        None,
    ]
    assert json_values(pa.array([0], pa.timestamp("ms")), ltz(3)) == ["1970-01-01T00:00:00.000Z"]
    assert json_values(pa.array([3_723_004], pa.time32("ms"))) == ["01:02:03.004"]
    assert json_values(pa.array([Decimal("-1.50")], pa.decimal128(5, 2))) == ["-1.50"]
    assert json_values(pa.array([b"\x00\xff", None], pa.binary())) == ["AP8=", None]
    assert json_values(pa.array([float("nan"), float("-inf"), 1.5])) == ["NaN", "-Infinity", 1.5]
    lists = pa.array([[1, None], None, [], [3]], pa.list_(pa.int32())).slice(1)
    assert json_values(lists) == [None, [], [3]]
    maps = pa.array([[("a", 1)], [], None], pa.map_(pa.string(), pa.int64()))
    assert json_values(maps) == [[["a", 1]], [], None]
    rows = pa.array(
        [{"x": 1, "t": 0}, None], pa.struct([("x", pa.int8()), ("t", pa.timestamp("us"))])
    )
    assert json_values(rows) == [{"x": 1, "t": "1970-01-01T00:00:00.000000"}, None]
    assert parse_schema(json.dumps(schema_doc(COLUMNS_V1, True))).primary_key == ("id",)


def test_errors_from_codes_are_typed() -> None:
    assert isinstance(from_code(69, None), TooManyScannersError)


async def test_scan_kv_sessions_per_leader_are_bounded() -> None:
    from fluss_proto.scan import KV_SESSIONS_PER_LEADER

    fake = FakeScanCluster(pk=True, buckets=40)
    for b in range(40):
        fake.leaders[(None, b)] = 1
        fake.put_rows((None, b), [b * 100 + i for i in range(10)])
    peak = 0
    handler = fake._h_scan_kv

    async def slow(node: Any, req: Any) -> Any:
        nonlocal peak
        await asyncio.sleep(0.001)
        resp = handler(node, req)
        peak = max(peak, len(fake.sessions))
        return resp

    fake.overrides[ApiKey.SCAN_KV] = slow
    result = await preview_table(fake, "db.t", limit=1000)
    assert result.report.complete and result.table.num_rows == 400
    assert 1 < peak <= KV_SESSIONS_PER_LEADER

"""One preview run: table facts, leaders, schema cache and row decoding, shared by the
scan modes (:mod:`.limit`, :mod:`.kv`, :mod:`.tail`).

Rows are decoded into ``pyarrow.Table`` chunks, or, in a light run (plain column types,
``light=True``), into :class:`~fluss_proto.scan.rows.Rows` without importing pyarrow or
numpy (:mod:`fluss_proto.scan.rows`)."""

from __future__ import annotations

import asyncio
import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.admin import AdminClient, FlussAdmin
from fluss_proto.api_keys import ApiKey
from fluss_proto.catalog import (
    metadata_request,
    normalise_table_error,
    partition_name_of,
    table_info_from_metadata,
)
from fluss_proto.cluster import (
    PartitionMetadata,
    ServerApiVersions,
    TableMetadata,
    TablePath,
    parse_metadata,
)
from fluss_proto.error_codes import (
    LeaderNotAvailableError,
    PartitionNotExistError,
    TableNotExistError,
)
from fluss_proto.errors import FlussError, PreviewArgumentError, SchemaMismatchError
from fluss_proto.filter import Filter
from fluss_proto.records import (
    ChangeType,
    LogBatch,
    as_row_type,
    decode_arrow_batch,
    iter_raw_records,
    make_row_decoder,
    read_log_batches,
    read_value_batch,
    row_batch_table,
    to_arrow_schema,
)
from fluss_proto.records._base import RowDecoder
from fluss_proto.records.errors import CorruptBatchError, RecordDecodeError
from fluss_proto.records.kv_batch import ValueBatch
from fluss_proto.records.log_batch import Magic1Layout, magic1_layout_for_api_keys
from fluss_proto.scan.constants import (
    CHANGE_TYPE_COLUMN,
    FLUSS_TYPE_KEY,
    KV_SESSIONS_PER_LEADER,
    OFFSET_COLUMN,
)
from fluss_proto.scan.filtering import ScanFilter
from fluss_proto.scan.rows import (
    BIGINT,
    STRING,
    Rows,
    RowsSchema,
    arrow_log_columns,
    is_plain,
    rows_from_arrow,
)
from fluss_proto.scan.runner import BucketState, Chunk, Deadline, RawValues, Runner
from fluss_proto.types import DataType, LogFormat, Schema, TableInfo

if TYPE_CHECKING:  # imported where used: a light run imports neither
    import pyarrow as pa
    from google.protobuf.message import Message


class ScanClient(AdminClient, Protocol):
    """What the preview needs from a client (:class:`~fluss_proto.client.FlussClient`)."""

    def api_versions_of(
        self, node: int | None = None, *, coordinator: bool = False
    ) -> ServerApiVersions | None: ...


def _same_type(a: DataType, b: DataType) -> bool:
    return a.with_nullable(True) == b.with_nullable(True)


def _column_mapping(source: Schema, target: Schema) -> list[int | None]:
    """For each target column, its index in ``source`` (None = absent: reads as NULL)."""
    by_id = all(c.column_id is not None for c in (*source.columns, *target.columns))
    index = {(c.column_id if by_id else c.name): i for i, c in enumerate(source.columns)}
    out: list[int | None] = []
    for col in target.columns:
        i = index.get(col.column_id if by_id else col.name)
        if i is not None and not _same_type(source.columns[i].type, col.type):
            raise SchemaMismatchError(
                f"column {col.name!r} is {source.columns[i].type} in an older schema and "
                f"{col.type} now"
            )
        out.append(i)
    return out


class RowSink(Protocol):
    """Where a streamed preview's rows go as the workers read them."""

    async def put(self, st: BucketState, chunk: Chunk, *, flow: bool) -> None: ...


class PreviewRun:
    """One preview run: table facts, schema cache, leaders, workers."""

    def __init__(
        self,
        client: ScanClient,
        path: TablePath,
        *,
        limit: int,
        tail: bool,
        deadline: Deadline,
        batch_size_bytes: int,
        fetch_max_bytes: int,
        fetch_max_bytes_per_bucket: int,
        light: bool = False,
        where: str | Filter | None = None,
        check_filter: Callable[[Filter], None] | None = None,
        pushdown: bool = True,
    ) -> None:
        self.client = client
        #: Rows as light chunks (no pyarrow); cleared by load_table for a nested column.
        self.light = light
        self.target_rows: RowsSchema | None = None
        self.path = path
        self.limit = limit
        self.tail = tail
        self.deadline = deadline
        self.batch_size_bytes = batch_size_bytes
        self.fetch_max_bytes = fetch_max_bytes
        self.fetch_max_bytes_per_bucket = fetch_max_bytes_per_bucket
        self.admin = FlussAdmin(client, timeout=deadline.seconds)  # type: ignore[arg-type]
        self.runner = Runner(deadline)
        self.closers: set[asyncio.Task[None]] = set()
        self.info: TableInfo | None = None
        self.partition_ids: list[int] = []
        self._schemas: dict[int, Schema] = {}
        self._schema_fetches: dict[int, asyncio.Task[Schema]] = {}
        self._mappings: dict[int, list[int | None]] = {}
        self._arrow_schemas: dict[int, pa.Schema] = {}
        self._row_decoders: dict[tuple[int, str], RowDecoder] = {}
        self.schema_ids_seen: set[int] = set()
        self.target_schema: pa.Schema | None = None
        self._refresh_lock = asyncio.Lock()
        self.refresh_generation = 0
        self.leaders: dict[tuple[int | None, int], int | None] = {}
        #: Set by stream_preview: rows go to it as they arrive instead of into the states.
        self.sink: RowSink | None = None
        self.kv_slots: dict[int, asyncio.Semaphore] = defaultdict(
            lambda: asyncio.Semaphore(KV_SESSIONS_PER_LEADER)
        )
        #: The filter (typed against the table in load_table), its pushdown, its counts.
        self.where = ScanFilter(where, check_filter, pushdown=pushdown)

    # ------------------------------------------------------------------ metadata

    async def _table_metadata(self, req: pb.MetadataRequest) -> pb.MetadataResponse:
        try:
            resp = await self.client.call(ApiKey.GET_METADATA, req, timeout=self.deadline.timeout())
        except FlussError as exc:
            typed = normalise_table_error(exc, self.path)
            if typed is exc:
                raise
            raise typed from exc
        assert isinstance(resp, pb.MetadataResponse)
        return resp

    async def load_table(self) -> tuple[TableMetadata, TableInfo]:
        resp = await self._table_metadata(metadata_request([self.path]))
        table = parse_metadata(resp).tables.get(self.path)
        if table is None:
            raise TableNotExistError(f"Table '{self.path}' does not exist.")
        info = table_info_from_metadata(table)
        self.info = info
        self._schemas[info.schema_id] = info.schema
        self.where.bind(info)
        self.light = self.light and is_plain(info.schema)
        if self.light:
            self.target_rows = RowsSchema.of_table(info.schema)
        else:
            self.target_schema = _with_fluss_types(to_arrow_schema(info.schema), info.schema)
        return table, info

    async def choose_partitions(
        self, info: TableInfo, partition: str | int | None, max_partitions: int
    ) -> tuple[list[tuple[int, str]], list[str]]:
        """(partition id, name) pairs to scan, and the names left out by max_partitions."""
        parts = await self.admin.list_partitions(self.path)
        by_id = sorted(((p.partition_id, p.name) for p in parts), key=lambda p: p[0])
        if partition is None or partition == "all":
            chosen = by_id[-max_partitions:] if max_partitions < len(by_id) else by_id
            skipped = [name for pid, name in by_id if (pid, name) not in chosen]
            return chosen, skipped
        if isinstance(partition, int) or (isinstance(partition, str) and partition.isdigit()):
            pid = int(partition)
            match = [p for p in by_id if p[0] == pid]
            if not match and isinstance(partition, str):
                match = [p for p in by_id if p[1] == partition]
        else:
            name = _partition_name(partition, info.partition_keys)
            match = [p for p in by_id if p[1] == name]
        if not match:
            known = ", ".join(name for _, name in by_id[:10]) or "none"
            raise PartitionNotExistError(
                f"partition {partition!r} of {self.path} does not exist (partitions: {known}"
                f"{', ...' if len(by_id) > 10 else ''})"
            )
        return match, []

    async def partition_buckets(self, ids: Sequence[int]) -> dict[int, PartitionMetadata]:
        resp = await self._table_metadata(metadata_request([self.path], partition_ids=ids))
        return {pid: p for pid, p in parse_metadata(resp).partitions.items() if pid in set(ids)}

    async def refresh_leaders(self, generation: int) -> None:
        """One GetMetadata for the table (and its scanned partitions), shared by callers."""
        async with self._refresh_lock:
            if self.refresh_generation != generation:
                return  # someone refreshed while we waited
            try:
                resp = await self._table_metadata(
                    metadata_request([self.path], partition_ids=self.partition_ids)
                )
            finally:
                self.refresh_generation += 1
            reply = parse_metadata(resp)
            table = reply.tables.get(self.path)
            if table is not None:
                for b in table.buckets:
                    self.leaders[(None, b.bucket_id)] = b.leader_id
            for p in reply.partitions.values():
                for b in p.buckets:
                    self.leaders[(p.partition_id, b.bucket_id)] = b.leader_id

    async def move_leader(self, st: BucketState) -> bool:
        """Refresh once for this bucket; True when it may be tried again (on a new leader)."""
        if st.leader_retried:
            return False
        st.leader_retried = True
        await self.refresh_leaders(self.refresh_generation)
        st.leader_id = self.leaders.get(st.key, st.leader_id)
        return st.leader_id is not None

    async def leader_of(self, st: BucketState) -> int:
        if st.leader_id is None and not await self.move_leader(st):
            raise LeaderNotAvailableError(
                f"{st.label} of {self.path} has no leader in the metadata"
            )
        assert st.leader_id is not None
        return st.leader_id

    def server(self, node: int) -> str:
        server = self.client.metadata.tablet_servers.get(node)
        return server.address if server is not None else f"node {node}"

    def magic1_layout(self, node: int) -> Magic1Layout | None:
        info = self.versions_of(node)
        return magic1_layout_for_api_keys(info.versions) if info is not None else None

    def versions_of(self, node: int) -> ServerApiVersions | None:
        getter = getattr(self.client, "api_versions_of", None)
        return getter(node) if getter is not None else None

    def offers_scan_kv(self, node: int) -> bool | None:
        info = self.versions_of(node)
        return None if info is None else info.advertises(ApiKey.SCAN_KV)

    # ------------------------------------------------------------------ schemas & decoding

    async def ensure_schemas(self, ids: Iterable[int]) -> None:
        missing = [i for i in set(ids) if i not in self._schemas]
        if missing:
            await asyncio.gather(*(self._schema(i) for i in missing))

    async def _schema(self, schema_id: int) -> Schema:
        """GetTableSchema(schema_id), once per id however many batches ask at once."""
        if schema_id in self._schemas:
            return self._schemas[schema_id]
        task = self._schema_fetches.get(schema_id)
        if task is None:
            task = asyncio.ensure_future(self._fetch_schema(schema_id))
            self._schema_fetches[schema_id] = task
        try:
            schema = await asyncio.shield(task)
        except BaseException:
            if task.done():  # a failed fetch may be tried again by a later batch
                self._schema_fetches.pop(schema_id, None)
            raise
        self._schemas[schema_id] = schema
        return schema

    async def _fetch_schema(self, schema_id: int) -> Schema:
        return (await self.admin.table_schema(self.path, schema_id)).schema

    def _mapping(self, schema_id: int) -> list[int | None] | None:
        assert self.info is not None
        if schema_id == self.info.schema_id:
            return None
        if schema_id not in self._mappings:
            self._mappings[schema_id] = _column_mapping(self._schemas[schema_id], self.info.schema)
        return self._mappings[schema_id]

    def _arrow_schema(self, schema_id: int) -> pa.Schema:
        if schema_id not in self._arrow_schemas:
            self._arrow_schemas[schema_id] = to_arrow_schema(self._schemas[schema_id])
        return self._arrow_schemas[schema_id]

    def _row_decoder(self, schema_id: int, fmt: str) -> RowDecoder:
        key = (schema_id, fmt)
        if key not in self._row_decoders:
            self._row_decoders[key] = make_row_decoder(self._schemas[schema_id], fmt)
        return self._row_decoders[key]

    def _to_target(self, data: pa.Table, schema_id: int) -> pa.Table:
        """A decoded table of ``schema_id`` -> the latest schema (column ids), with metadata."""
        import pyarrow as pa

        self.schema_ids_seen.add(schema_id)
        target = self.target_schema
        assert target is not None
        mapping = self._mapping(schema_id)
        if mapping is None:
            columns = data.columns
        else:
            n = data.num_rows
            columns = [
                data.column(i) if i is not None else pa.nulls(n, type=target.field(j).type)
                for j, i in enumerate(mapping)
            ]
        return pa.Table.from_arrays(columns, schema=target)

    async def receive_values(self, records: bytes, st: BucketState) -> None:
        """A value batch (ScanKv, LimitScan on a PK table): split it into records now (bad
        framing fails the bucket at once), fetch the schemas it names, and keep the rows
        undecoded: only the rows the preview shows are decoded (:meth:`values_table`)."""
        if not records:
            return
        batch = read_value_batch(records, bucket=st.label, light=self.light)
        ids = batch.schema_ids
        await self.ensure_schemas(set(ids if isinstance(ids, list) else ids.tolist()))
        if len(batch):
            await self.deliver(st, RawValues(batch, 0, len(batch)), flow=True)

    async def deliver(self, st: BucketState, chunk: Chunk, *, flow: bool = False) -> None:
        """Rows of a bucket, in order: kept in the bucket's state, or handed to the stream;
        with a filter only the rows it keeps (``st.scanned`` counts every row). ``flow``:
        the worker may wait for the reader (back-pressure; only for a worker that
        reads one bucket, so that waiting never holds up another bucket).
        """
        st.scanned += chunk.num_rows
        chunk = self.where.keep(chunk, self.values_table)
        if self.sink is None:
            st.add(chunk)
        elif chunk.num_rows:
            st.rows += chunk.num_rows
            st.streamed = True
            await self.sink.put(st, chunk, flow=flow)

    def values_table(self, batch: ValueBatch, start: int, stop: int) -> pa.Table | Rows:
        """Decode rows ``start:stop`` of a value batch (schemas already fetched) into the
        latest schema, through the decoders' columnar path (``decode_table``), or row by
        row into light values in a light run."""
        assert self.info is not None
        if self.light:
            return _values_rows(self, batch, start, stop)
        import numpy as np
        import pyarrow as pa

        fmt = str(self.info.kv_format)
        ids = batch.schema_ids[start:stop]
        # Consecutive runs of one schema id keep the batch's (key) order.
        cuts = [0, *(np.flatnonzero(ids[1:] != ids[:-1]) + 1).tolist(), len(ids)]
        pieces: list[pa.Table] = []
        for a, b in itertools.pairwise(cuts):
            if a == b:
                continue
            schema_id = int(ids[a])
            decoded = self._row_decoder(schema_id, fmt).decode_table(
                batch.buffer, batch.starts[start + a : start + b], batch.ends[start + a : start + b]
            )
            pieces.append(self._to_target(decoded, schema_id))
        if not pieces:
            return self._empty(log=False)
        return pieces[0] if len(pieces) == 1 else pa.concat_tables(pieces)

    async def decode_log(
        self,
        records: bytes,
        st: BucketState,
        node: int,
        *,
        min_offset: int | None = None,
        end_offset: int | None = None,
        ranges: list[tuple[int, int]] | None = None,
    ) -> tuple[pa.Table | Rows, int | None, int]:
        """A log blob -> (rows with _offset/_change_type, next offset, bytes left over).

        Rows below ``min_offset`` or at/after ``end_offset`` are dropped. The next offset is
        that of the last complete batch (None when there was none); an incomplete trailing
        batch is not an error (its bytes are the third value). ``ranges``: gets each batch's
        ``[base, next)``.
        """
        if not records:
            return self._empty_chunk(log=True), None, 0
        batches = read_log_batches(
            records, magic1_layout=self.magic1_layout(node), check_crc=True, bucket=st.label
        )
        await self.ensure_schemas(b.schema_id for b in batches if b.record_count)
        if ranges is not None:
            ranges.extend((b.base_offset, b.next_offset) for b in batches)
        pieces = []
        for b in batches:
            if b.record_count == 0:
                continue
            if min_offset is not None and b.next_offset <= min_offset:
                continue
            if end_offset is not None and b.base_offset >= end_offset:
                continue
            if self.light:
                pieces.append(_log_batch_rows(self, b, min_offset, end_offset))
            else:
                pieces.append(_log_batch_table(self, b, min_offset, end_offset))
        return self.concat_chunks(pieces, log=True), batches.next_offset, batches.bytes_remaining

    def concat_chunks(self, pieces: list[Any], *, log: bool) -> pa.Table | Rows:
        if not pieces:
            return self._empty_chunk(log=log)
        if self.light:
            return Rows.concat(pieces)
        import pyarrow as pa

        return pieces[0] if len(pieces) == 1 else pa.concat_tables(pieces)

    def _empty_chunk(self, *, log: bool) -> pa.Table | Rows:
        return _empty_rows(self, log=log) if self.light else self._empty(log=log)

    def _empty(self, *, log: bool) -> pa.Table:
        import pyarrow as pa

        assert self.target_schema is not None
        schema = self.target_schema
        if log:
            schema = schema.append(pa.field(OFFSET_COLUMN, pa.int64(), False))
            schema = schema.append(pa.field(CHANGE_TYPE_COLUMN, pa.string(), False))
        return schema.empty_table()

    # ------------------------------------------------------------------ calls

    async def call(self, st: BucketState | None, api: ApiKey, req: Message, node: int) -> Any:
        if st is not None:
            st.requests += 1
        return await self.client.call(api, req, node=node, timeout=self.deadline.timeout())


# ---------------------------------------------------------------------- log batches


def _log_batch_table(
    run: PreviewRun, b: LogBatch, min_offset: int | None, end_offset: int | None
) -> pa.Table:
    import pyarrow as pa

    assert run.info is not None
    if b.looks_like_arrow:
        rec = decode_arrow_batch(b, run._arrow_schema(b.schema_id))
        data = pa.Table.from_batches([rec.data])
        n = data.num_rows
        if rec.change_types is None:
            kinds = pa.repeat(pa.scalar(ChangeType.APPEND_ONLY.short_string), n)
        else:
            kinds = pa.array([c.short_string for c in rec.change_types], pa.string())
        offsets = pa.array(range(b.base_offset, b.base_offset + n), pa.int64())
    else:
        fmt = run.info.log_format
        if fmt is LogFormat.ARROW:
            raise CorruptBatchError(
                "a log batch without an Arrow message in an ARROW table",
                bucket=b.bucket,
                offset=b.base_offset,
            )
        full = row_batch_table(b, run._row_decoder(b.schema_id, str(fmt)))
        offsets = full.column("_offset")
        kinds = full.column("_change_type")
        data = full.drop_columns(["_offset", "_change_type", "_timestamp"])
    table = run._to_target(data, b.schema_id)
    table = table.append_column(pa.field(OFFSET_COLUMN, pa.int64(), False), offsets)
    table = table.append_column(pa.field(CHANGE_TYPE_COLUMN, pa.string(), False), kinds)
    first, last = b.base_offset, b.base_offset + table.num_rows  # [first, last)
    lo = max(0, (min_offset - first) if min_offset is not None else 0)
    hi = table.num_rows - max(0, (last - end_offset) if end_offset is not None else 0)
    if lo > 0 or hi < table.num_rows:
        table = table.slice(lo, max(0, hi - lo))
    return table


# ---------------------------------------------------------------------- light runs
# (fluss_proto.scan.rows: Python values, no pyarrow or numpy)


def _rows_to_target(run: PreviewRun, columns: list[list[Any]], n: int, schema_id: int) -> Rows:
    """Light columns of ``schema_id`` -> the latest schema (column ids)."""
    run.schema_ids_seen.add(schema_id)
    target = run.target_rows
    assert target is not None
    mapping = run._mapping(schema_id)
    if mapping is not None:
        columns = [columns[i] if i is not None else [None] * n for i in mapping]
    return Rows(target, columns, n)


def _values_rows(run: PreviewRun, batch: ValueBatch, start: int, stop: int) -> Rows:
    assert run.info is not None
    fmt = str(run.info.kv_format)
    ids, starts, ends = batch.schema_ids, batch.starts, batch.ends
    assert isinstance(ids, list) and isinstance(starts, list) and isinstance(ends, list)
    pieces: list[Rows] = []
    a = start
    while a < stop:  # consecutive runs of one schema id keep the batch's (key) order
        b = a + 1
        while b < stop and ids[b] == ids[a]:
            b += 1
        decoder = run._row_decoder(ids[a], fmt)
        columns = decoder.decode_columns((batch.buffer, starts[i], ends[i]) for i in range(a, b))
        pieces.append(_rows_to_target(run, columns, b - a, ids[a]))
        a = b
    return Rows.concat(pieces) if pieces else _empty_rows(run, log=False)


def _log_batch_rows(
    run: PreviewRun, b: LogBatch, min_offset: int | None, end_offset: int | None
) -> Rows:
    """A light run's :func:`_log_batch_table`."""
    assert run.info is not None
    types = as_row_type(run._schemas[b.schema_id]).field_types
    n = b.record_count
    if b.looks_like_arrow:
        read = arrow_log_columns(b, types)
        if read is None:  # a body this reader cannot read: pyarrow reads it
            rec = decode_arrow_batch(b, run._arrow_schema(b.schema_id))
            read = rows_from_arrow(rec.data), rec.change_types
        columns, change_types = read
        kinds = (
            [ChangeType.APPEND_ONLY.short_string] * n
            if change_types is None
            else [c.short_string for c in change_types]
        )
        offsets = list(range(b.base_offset, b.base_offset + n))
    else:
        if run.info.log_format is LogFormat.ARROW:
            raise CorruptBatchError(
                "a log batch without an Arrow message in an ARROW table",
                bucket=b.bucket,
                offset=b.base_offset,
            )
        raws = list(iter_raw_records(b))
        decoder = run._row_decoder(b.schema_id, str(run.info.log_format))
        try:
            columns = decoder.decode_columns((r.buffer, r.start, r.end) for r in raws)
        except RecordDecodeError as exc:
            raise exc.with_context(bucket=b.bucket, offset=b.base_offset) from None
        n = len(raws)
        offsets = [r.offset for r in raws]
        kinds = [r.change_type.short_string for r in raws]
    rows = _rows_to_target(run, columns, n, b.schema_id)
    rows = rows.with_column(OFFSET_COLUMN, BIGINT, offsets)
    rows = rows.with_column(CHANGE_TYPE_COLUMN, STRING, kinds)
    first, last = b.base_offset, b.base_offset + n
    lo = max(0, (min_offset - first) if min_offset is not None else 0)
    hi = n - max(0, (last - end_offset) if end_offset is not None else 0)
    return rows.slice(lo, max(0, hi - lo)) if lo > 0 or hi < n else rows


def _empty_rows(run: PreviewRun, *, log: bool) -> Rows:
    assert run.target_rows is not None
    schema = run.target_rows
    if log:
        schema = schema.append(OFFSET_COLUMN, BIGINT).append(CHANGE_TYPE_COLUMN, STRING)
    return schema.empty()


def _partition_name(partition: str | int, keys: Sequence[str]) -> str:
    """``"a$b"`` stays; ``"k1=a/k2=b"`` (or with commas) becomes ``"a$b"`` in key order."""
    text = str(partition)
    if "=" not in text:
        return text
    pairs: dict[str, str] = {}
    for part in text.replace(",", "/").split("/"):
        if not part:
            continue
        key, eq, value = part.partition("=")
        if not eq:
            raise PreviewArgumentError(f"bad partition spec {text!r} (want k=v/k2=v2)")
        pairs[key.strip()] = value.strip()
    if set(pairs) != set(keys):
        raise PreviewArgumentError(
            f"partition spec {text!r} must name exactly the partition keys {list(keys)}"
        )
    return partition_name_of((k, pairs[k]) for k in keys)


def _with_fluss_types(schema: pa.Schema, fluss: Schema) -> pa.Schema:
    import pyarrow as pa

    fields = [
        f.with_metadata({FLUSS_TYPE_KEY: str(c.type).encode()})
        for f, c in zip(schema, fluss.columns, strict=True)
    ]
    return pa.schema(fields)

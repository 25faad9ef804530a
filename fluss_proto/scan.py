"""Table previews through server-side scans: ScanKv sessions, LimitScan, and a FetchLog tail.

:func:`preview_table` reads up to ``limit`` rows of one table and returns a :class:`Preview`:
a ``pyarrow.Table`` with the table's own Arrow types (Fluss's ``ArrowUtils`` mapping: decimals
stay ``decimal128``, timestamps keep their unit, TIMESTAMP_LTZ has no time zone, as Fluss
writes it) plus added columns, and a :class:`ScanReport` saying, bucket by bucket, what was
read, how, and what went wrong.

Methods, chosen per bucket:

- **ScanKv** (Fluss 1.0) for primary-key tables when the bucket leader advertises SCAN_KV:
  a session opened with ``call_seq_id`` 0 and the row limit, paged with a bounded
  ``batch_size_bytes`` (``call_seq_id`` 1, 2, ...), one request in flight per session. The
  session is closed (``close_scanner``) when we stop early: enough rows, an error, the
  deadline, cancellation; never after ``has_more_results=false`` (the server has already
  dropped it). SCANNER_EXPIRED (66) / UNKNOWN_SCANNER_ID (67) restart the scan once from
  scratch (rows of the dead session are discarded: a new session is a new snapshot).
  TOO_MANY_SCANNERS (69) on open is retried twice after 100 / 200 ms (Fluss's own client
  retries three times), then reported for that bucket. Only a fake server has exercised
  this path: no Fluss 1.0 server was available (0.9.1 does not offer SCAN_KV).
- **LimitScan** otherwise: primary-key tables on 0.9.1 get one value batch of up to
  ``limit`` rows in key order; log tables get the log batches from
  ``max(log start, high watermark - limit)`` on, of which the last ``limit`` rows are kept
  (the first batch may start earlier, as Fluss's ``LimitBatchScanner`` also handles).
- **FetchLog tail** with ``tail=True`` (log tables, and the changelog of primary-key tables):
  ListOffsets LATEST and EARLIEST to each leader (grouped per leader), then FetchLog from
  ``max(earliest, latest - limit)`` up to ``latest`` (rows appended after the ListOffsets
  are left out), one request per leader carrying all its buckets, bounded ``max_bytes``.
  Rows before the fetch offset (the server starts at the batch *containing* it) are
  dropped; after an incomplete trailing batch the next request resumes from the last
  complete batch (a bucket that made no progress gets a larger byte budget and goes first,
  since only the first bucket of a request may exceed its budget); ``log_start_offset`` in
  the reply is ignored (always 0 on the server) in favour of ListOffsets EARLIEST. A reply
  with ``remote_log_fetch_info`` means the rows are in remote storage, which a pure-RPC
  client cannot read: the bucket is reported ``in remote storage`` (never "no data") and
  the fetch continues locally after the last remote segment's end offset (exclusive: it is
  the next segment's base offset in ``LogTieringTask``).

Buckets are scanned concurrently (every bucket's requests are sent at once; LimitScan and
ScanKv are per bucket, FetchLog and ListOffsets one request per leader), under one overall
deadline. A bucket still running at the deadline is reported *timed out* (never empty) and
keeps the rows it had; the rest of the preview is returned. A bucket whose leader moved
(12, 21, 44, lost connection) is retried once after one shared metadata refresh.

Rows are decoded with the schema of their own ``schema_id`` (GetTableSchema, cached per id)
and mapped onto the table's latest schema by column id (by name when the server sends no
column ids): a column added later reads as NULL, a dropped one is left out, as Fluss's
``SchemaUtil.getIndexMapping`` does. Row formats come from TableInfo (``table.kv.format``,
``table.log.format``); a log batch whose records area holds an Arrow message is decoded as
Arrow whatever the table says (some writers append Arrow batches to INDEXED tables).

Added columns: ``_bucket`` (int32) always; ``_partition`` (string) on partitioned tables;
``_offset`` (int64) and ``_change_type`` (``+A``, ``+I``, ``-U``, ``+U``, ``-D``) for rows
read from a log (LimitScan on log tables, FetchLog). Each data field carries its Fluss type
in the field metadata key ``fluss.type`` (e.g. ``TIMESTAMP_LTZ(3)``).

``limit`` bounds the whole preview. Every bucket is asked for up to ``limit`` rows, then the
rows are shared out fairly across buckets (round-robin quotas); key scans keep each bucket's
first rows, log reads its last ones. Value batches (ScanKv, LimitScan on PK tables) are split
into records on arrival but only the rows shown are decoded (``RowDecoder.decode_table``: the
vectorised CompactedRow path of :mod:`fluss_proto.records.columnar`). At most
``KV_SESSIONS_PER_LEADER`` ScanKv sessions are open per leader at a time.

Partitioned tables: one partition by name (``a$b`` or ``k=a/k2=b``) or id, or ``"all"`` (also
the default), bounded by ``max_partitions`` (the newest partitions by id; the others are
named in the report).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections import defaultdict
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, Literal, Protocol

import numpy as np
import pyarrow as pa
from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto._replies import as_fluss_error, body_error, needs_refresh, opt
from fluss_proto.admin import AdminClient, FlussAdmin
from fluss_proto.api_keys import ApiKey
from fluss_proto.catalog import (
    metadata_request,
    normalise_table_error,
    partition_name_of,
    table_info_from_metadata,
)
from fluss_proto.cluster import (
    BucketMetadata,
    PartitionMetadata,
    ServerApiVersions,
    TableMetadata,
    TablePath,
    parse_metadata,
)
from fluss_proto.error_codes import (
    LeaderNotAvailableError,
    PartitionNotExistError,
    ScannerExpiredError,
    TableNotExistError,
    TooManyScannersError,
    UnknownScannerIdError,
)
from fluss_proto.errors import (
    DecodeError,
    FlussError,
    RequestTimeoutError,
    UnsupportedByServer,
)
from fluss_proto.leaders import LIST_OFFSETS_KIND, BucketRef
from fluss_proto.model import EARLIEST, LATEST
from fluss_proto.records import (
    ChangeType,
    LogBatch,
    decode_arrow_batch,
    make_row_decoder,
    read_log_batches,
    read_value_batch,
    row_batch_table,
    to_arrow_schema,
)
from fluss_proto.records._base import RowDecoder
from fluss_proto.records.errors import CorruptBatchError
from fluss_proto.records.kv_batch import ValueBatch
from fluss_proto.records.log_batch import Magic1Layout, magic1_layout_for_api_keys
from fluss_proto.types import DataType, LogFormat, Schema, TableInfo

__all__ = [
    "DEFAULT_FETCH_MAX_BYTES",
    "DEFAULT_FETCH_MAX_BYTES_PER_BUCKET",
    "DEFAULT_KV_BATCH_BYTES",
    "FLUSS_TYPE_KEY",
    "BucketScan",
    "BucketStatus",
    "Preview",
    "PreviewArgumentError",
    "ScanMethod",
    "ScanReport",
    "SchemaMismatchError",
    "preview_table",
]

#: ScanKv ``batch_size_bytes`` (the server caps it at ``kv.scanner.max-batch-size``, 10 MB,
#: and always sends at least one row).
DEFAULT_KV_BATCH_BYTES: Final = 1024 * 1024
#: FetchLog ``max_bytes`` (whole reply) and the starting ``max_fetch_bytes`` per bucket.
DEFAULT_FETCH_MAX_BYTES: Final = 16 * 1024 * 1024
DEFAULT_FETCH_MAX_BYTES_PER_BUCKET: Final = 1024 * 1024
#: A bucket that made no progress (its next batch is bigger than its budget) gets its budget
#: doubled, up to this.
MAX_FETCH_BYTES_PER_BUCKET: Final = 32 * 1024 * 1024
#: Field metadata key carrying the Fluss type of each data column.
FLUSS_TYPE_KEY: Final = b"fluss.type"
#: Column names added to the preview.
BUCKET_COLUMN: Final = "_bucket"
PARTITION_COLUMN: Final = "_partition"
OFFSET_COLUMN: Final = "_offset"
CHANGE_TYPE_COLUMN: Final = "_change_type"

_KV_OPEN_RETRIES = 2  # extra opens after TOO_MANY_SCANNERS
#: Open ScanKv sessions per leader at a time: far below the server's cap of 200 per server
#: (``kv.scanner.max-per-server``), so a wide preview never starves other readers.
KV_SESSIONS_PER_LEADER: Final = 16
_KV_OPEN_BACKOFF_S = 0.1
_CLOSE_TIMEOUT_S = 2.0  # bound for best-effort close_scanner requests
_CANCEL_GRACE_S = 2.0  # bound for cancelled workers to finish their clean-up
_MAX_FETCH_ROUNDS = 10_000  # a hard bound on FetchLog rounds per leader loop
_MAX_STALLED_ROUNDS = 3  # FetchLog rounds without progress or truncation before giving up
_MIN_REQUEST_TIMEOUT_S = 0.05
_MAX_LIMIT = 2**31 - 1  # LimitScan's limit is an int32

_LOG_COLUMNS = (OFFSET_COLUMN, CHANGE_TYPE_COLUMN)


class ScanMethod(StrEnum):
    SCAN_KV = "ScanKv"
    LIMIT_SCAN = "LimitScan"
    FETCH_LOG_TAIL = "FetchLog tail"


class BucketStatus(StrEnum):
    #: Read completely (up to the limit), rows found.
    SCANNED = "scanned"
    #: Read completely, no rows.
    EMPTY = "empty"
    #: Rows (all or some) are in remote storage, which RPC cannot read.
    REMOTE = "in remote storage"
    FAILED = "failed"
    #: Still running at the deadline; its rows so far are kept.
    TIMED_OUT = "timed out"


class PreviewArgumentError(FlussError, ValueError):
    """The request does not fit the table (e.g. a partition for a non-partitioned table)."""


class SchemaMismatchError(DecodeError):
    """A column kept its id across schemas but changed type (Fluss refuses that too)."""


class ScanClient(AdminClient, Protocol):
    """What the preview needs from a client (:class:`~fluss_proto.client.FlussClient`)."""

    def api_versions_of(
        self, node: int | None = None, *, coordinator: bool = False
    ) -> ServerApiVersions | None: ...


# =========================================================================== results


@dataclass(frozen=True, slots=True)
class BucketScan:
    """What happened to one bucket."""

    partition_id: int | None
    partition_name: str | None
    bucket_id: int
    #: The server asked last (None when the bucket had no leader).
    leader_id: int | None
    method: ScanMethod
    status: BucketStatus
    #: Rows read from the bucket (before the preview's overall limit was applied).
    rows_read: int
    #: Rows of this bucket in the preview table.
    rows_returned: int
    #: The typed error of a failed or timed-out bucket (also set for REMOTE).
    error: FlussError | None = None
    #: A short human note (e.g. which offsets are in remote storage).
    detail: str | None = None
    #: Requests sent for this bucket (shared FetchLog / ListOffsets requests count once
    #: per bucket they carried).
    requests: int = 0
    #: The bucket may hold more rows than were read (the per-bucket limit was reached).
    limit_reached: bool = False
    #: ScanKv: the session expired and the scan was restarted once.
    reopened: bool = False
    #: ScanKv: close_scanner requests sent for this bucket.
    sessions_closed: int = 0
    #: FetchLog tail: the offsets read, ``[start_offset, end_offset)``, and the log start.
    start_offset: int | None = None
    end_offset: int | None = None
    earliest_offset: int | None = None
    elapsed_s: float = 0.0

    @property
    def label(self) -> str:
        if self.partition_name is not None:
            return f"{self.partition_name}/bucket-{self.bucket_id}"
        if self.partition_id is not None:
            return f"partition-{self.partition_id}/bucket-{self.bucket_id}"
        return f"bucket-{self.bucket_id}"

    @property
    def complete(self) -> bool:
        return self.status in (BucketStatus.SCANNED, BucketStatus.EMPTY)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "bucket": self.label,
            "partition_id": self.partition_id,
            "partition": self.partition_name,
            "bucket_id": self.bucket_id,
            "leader": self.leader_id,
            "method": str(self.method),
            "status": str(self.status),
            "rows_read": self.rows_read,
            "rows_returned": self.rows_returned,
            "limit_reached": self.limit_reached,
            "requests": self.requests,
            "elapsed_s": round(self.elapsed_s, 4),
        }
        if self.error is not None:
            out["error"] = _error_dict(self.error)
        if self.detail:
            out["detail"] = self.detail
        if self.reopened:
            out["reopened"] = True
        if self.sessions_closed:
            out["sessions_closed"] = self.sessions_closed
        if self.start_offset is not None:
            out["start_offset"] = self.start_offset
            out["end_offset"] = self.end_offset
            out["earliest_offset"] = self.earliest_offset
        return out


def _error_dict(err: FlussError) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type(err).__name__, "message": str(err)}
    code = getattr(err, "code", None)
    if code is not None:
        out["code"] = code
        out["name"] = getattr(err, "name", None)
    return out


@dataclass(frozen=True, slots=True)
class ScanReport:
    table_path: str
    table_id: int
    primary_key: bool
    tail: bool
    limit: int
    buckets: tuple[BucketScan, ...]
    rows_returned: int
    #: Rows read from all buckets, before the limit was applied.
    rows_read: int
    #: True when the limit cut the preview: rows were left out, or some bucket may hold
    #: more rows than were read.
    limit_cut: bool
    elapsed_s: float
    deadline_s: float
    #: Partitions scanned (names), and partitions left out by ``max_partitions``.
    partitions: tuple[str, ...] = ()
    partitions_skipped: tuple[str, ...] = ()
    #: Schema ids of the rows decoded for the preview (the latest is ``schema_id``).
    schema_ids: tuple[int, ...] = ()
    schema_id: int = 0

    def _with(self, status: BucketStatus) -> tuple[BucketScan, ...]:
        return tuple(b for b in self.buckets if b.status is status)

    @property
    def scanned(self) -> tuple[BucketScan, ...]:
        return self._with(BucketStatus.SCANNED)

    @property
    def empty(self) -> tuple[BucketScan, ...]:
        return self._with(BucketStatus.EMPTY)

    @property
    def failed(self) -> tuple[BucketScan, ...]:
        return self._with(BucketStatus.FAILED)

    @property
    def timed_out(self) -> tuple[BucketScan, ...]:
        return self._with(BucketStatus.TIMED_OUT)

    @property
    def remote(self) -> tuple[BucketScan, ...]:
        return self._with(BucketStatus.REMOTE)

    @property
    def complete(self) -> bool:
        """Every bucket was read (rows or none); nothing failed, timed out or stayed remote."""
        return all(b.complete for b in self.buckets)

    @property
    def nothing_read(self) -> bool:
        """No bucket could be read at all (every one failed or timed out without rows)."""
        return bool(self.buckets) and all(
            b.status in (BucketStatus.FAILED, BucketStatus.TIMED_OUT) and b.rows_read == 0
            for b in self.buckets
        )

    @property
    def methods(self) -> Mapping[str, ScanMethod]:
        """Bucket label -> the method used."""
        return {b.label: b.method for b in self.buckets}

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table_path,
            "table_id": self.table_id,
            "primary_key": self.primary_key,
            "mode": "tail" if self.tail else "scan",
            "limit": self.limit,
            "rows_returned": self.rows_returned,
            "rows_read": self.rows_read,
            "limit_cut": self.limit_cut,
            "complete": self.complete,
            "elapsed_s": round(self.elapsed_s, 4),
            "deadline_s": self.deadline_s,
            "schema_id": self.schema_id,
            "schema_ids": list(self.schema_ids),
            "partitions": list(self.partitions),
            "partitions_skipped": list(self.partitions_skipped),
            "counts": {
                "buckets": len(self.buckets),
                "scanned": len(self.scanned),
                "empty": len(self.empty),
                "in_remote_storage": len(self.remote),
                "failed": len(self.failed),
                "timed_out": len(self.timed_out),
            },
            "buckets": [b.to_dict() for b in self.buckets],
        }

    def summary_lines(self) -> list[str]:
        """A short human report: one headline, then one line per bucket that needs a word."""
        methods = sorted({str(b.method) for b in self.buckets})
        head = (
            f"{self.table_path}: {self.rows_returned} row(s) shown of {self.rows_read} read "
            f"from {len(self.buckets)} bucket(s) via {', '.join(methods) or '-'} in "
            f"{self.elapsed_s:.2f}s"
        )
        if self.limit_cut:
            head += f" (limit {self.limit} reached)"
        lines = [head]
        counts = [
            (len(self.scanned), "scanned"),
            (len(self.empty), "empty"),
            (len(self.remote), "in remote storage"),
            (len(self.failed), "failed"),
            (len(self.timed_out), "timed out"),
        ]
        lines.append("  buckets: " + ", ".join(f"{n} {what}" for n, what in counts if n))
        if self.partitions:
            lines.append(f"  partitions: {', '.join(self.partitions)}")
        if self.partitions_skipped:
            lines.append(
                f"  partitions not scanned (max_partitions): {len(self.partitions_skipped)} "
                f"({', '.join(self.partitions_skipped[:5])}"
                f"{', ...' if len(self.partitions_skipped) > 5 else ''})"
            )
        for b in self.buckets:
            if b.complete and not b.reopened:
                continue
            text = f"  {b.label} [{b.method}] {b.status}"
            if b.leader_id is not None:
                text += f" (leader {b.leader_id})"
            if b.rows_read:
                text += f", {b.rows_read} row(s) read"
            if b.error is not None:
                text += f": {b.error}"
            if b.detail:
                text += f" - {b.detail}"
            if b.reopened:
                text += " (session expired; scan restarted once)"
            lines.append(text)
        return lines


@dataclass(frozen=True, slots=True)
class Preview:
    """Rows of a table (Fluss-faithful Arrow types plus added columns) and how they were read."""

    table: pa.Table
    report: ScanReport
    info: TableInfo


# =========================================================================== internals


@dataclass(frozen=True, slots=True)
class _RawValues:
    """Rows ``start:stop`` of a value batch, kept undecoded until the preview knows which
    rows it shows."""

    batch: ValueBatch
    start: int
    stop: int

    @property
    def num_rows(self) -> int:
        return self.stop - self.start


@dataclass(eq=False)
class _State:
    """Mutable per-bucket progress; frozen into a BucketScan at the end."""

    partition_id: int | None
    partition_name: str | None
    bucket_id: int
    leader_id: int | None
    method: ScanMethod
    #: Rows are kept from the start (key scans) or from the end (log reads).
    keep_last: bool
    status: BucketStatus | None = None
    error: FlussError | None = None
    detail: str | None = None
    #: Decoded log rows (pa.Table) or undecoded value records (_RawValues), in order.
    chunks: list[pa.Table | _RawValues] = field(default_factory=list)
    rows: int = 0
    requests: int = 0
    limit_reached: bool = False
    reopened: bool = False
    sessions_closed: int = 0
    leader_retried: bool = False
    started: float = 0.0
    ended: float | None = None
    # FetchLog tail
    start_offset: int | None = None
    end_offset: int | None = None
    earliest_offset: int | None = None
    next_offset: int = 0
    fetch_bytes: int = DEFAULT_FETCH_MAX_BYTES_PER_BUCKET
    stalled: bool = False
    idle_rounds: int = 0
    remote: list[tuple[int, int]] = field(default_factory=list)

    @property
    def key(self) -> tuple[int | None, int]:
        return (self.partition_id, self.bucket_id)

    @property
    def label(self) -> str:
        if self.partition_name is not None:
            return f"{self.partition_name}/bucket-{self.bucket_id}"
        return f"bucket-{self.bucket_id}"

    def add(self, chunk: pa.Table | _RawValues) -> None:
        if chunk.num_rows:
            self.chunks.append(chunk)
            self.rows += chunk.num_rows

    def discard_rows(self) -> None:
        self.chunks.clear()
        self.rows = 0

    def finish(
        self,
        status: BucketStatus,
        error: FlussError | None = None,
        detail: str | None = None,
    ) -> None:
        if self.status is not None:
            return
        self.status = status
        self.error = error
        if detail:
            self.detail = detail
        self.ended = time.monotonic()

    def done_reading(self) -> None:
        if self.remote:
            ranges = ", ".join(f"[{a}, {b})" for a, b in self.remote)
            self.finish(
                BucketStatus.REMOTE,
                detail=f"offsets {ranges} are in remote storage (not readable over RPC)",
            )
        else:
            self.finish(BucketStatus.SCANNED if self.rows else BucketStatus.EMPTY)


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


def _fair_quota(counts: Sequence[int], limit: int) -> list[int]:
    """Share ``limit`` rows across buckets holding ``counts`` rows, round-robin fashion."""
    quota = [0] * len(counts)
    remaining = limit
    active = [i for i, c in enumerate(counts) if c > 0]
    while remaining > 0 and active:  # each pass exhausts a bucket or the remainder
        share = max(1, remaining // len(active))
        still = []
        for i in active:
            give = min(share, counts[i] - quota[i], remaining)
            quota[i] += give
            remaining -= give
            if quota[i] < counts[i]:
                still.append(i)
            if remaining == 0:
                break
        active = still
    return quota


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def timeout(self) -> float:
        """A per-request timeout that never outlives the deadline."""
        return max(_MIN_REQUEST_TIMEOUT_S, self.remaining())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0


class _Runner:
    """Worker tasks under one deadline; workers may spawn more workers while it runs."""

    def __init__(self, deadline: _Deadline) -> None:
        self.deadline = deadline
        self.tasks: set[asyncio.Task[None]] = set()

    def spawn(self, states: Sequence[_State], work: Awaitable[None]) -> None:
        self.tasks.add(asyncio.ensure_future(self._guard(states, work)))

    @staticmethod
    async def _guard(states: Sequence[_State], work: Awaitable[None]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # per-bucket failure: keep it typed, go on with the rest
            err = as_fluss_error(exc)
            for st in states:
                st.finish(BucketStatus.FAILED, err)

    async def run(self) -> None:
        try:
            for _ in range(1_000_000):  # bounded: each pass waits for a task or the deadline
                pending = {t for t in self.tasks if not t.done()}
                remaining = self.deadline.remaining()
                if not pending or remaining <= 0:
                    break
                await asyncio.wait(pending, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        finally:
            await self.cancel_all()

    async def cancel_all(self) -> None:
        pending = {t for t in self.tasks if not t.done()}
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.wait(pending, timeout=_CANCEL_GRACE_S)


class _Preview:
    """One preview run: table facts, schema cache, leaders, workers."""

    def __init__(
        self,
        client: ScanClient,
        path: TablePath,
        *,
        limit: int,
        tail: bool,
        deadline: _Deadline,
        batch_size_bytes: int,
        fetch_max_bytes: int,
        fetch_max_bytes_per_bucket: int,
    ) -> None:
        self.client = client
        self.path = path
        self.limit = limit
        self.tail = tail
        self.deadline = deadline
        self.batch_size_bytes = batch_size_bytes
        self.fetch_max_bytes = fetch_max_bytes
        self.fetch_max_bytes_per_bucket = fetch_max_bytes_per_bucket
        self.admin = FlussAdmin(client, timeout=deadline.seconds)  # type: ignore[arg-type]
        self.runner = _Runner(deadline)
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
        self._refresh_generation = 0
        self._leaders: dict[tuple[int | None, int], int | None] = {}
        self._kv_slots: dict[int, asyncio.Semaphore] = defaultdict(
            lambda: asyncio.Semaphore(KV_SESSIONS_PER_LEADER)
        )

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
            if self._refresh_generation != generation:
                return  # someone refreshed while we waited
            try:
                resp = await self._table_metadata(
                    metadata_request([self.path], partition_ids=self.partition_ids)
                )
            finally:
                self._refresh_generation += 1
            reply = parse_metadata(resp)
            table = reply.tables.get(self.path)
            if table is not None:
                for b in table.buckets:
                    self._leaders[(None, b.bucket_id)] = b.leader_id
            for p in reply.partitions.values():
                for b in p.buckets:
                    self._leaders[(p.partition_id, b.bucket_id)] = b.leader_id

    async def move_leader(self, st: _State) -> bool:
        """Refresh once for this bucket; True when it may be tried again (on a new leader)."""
        if st.leader_retried:
            return False
        st.leader_retried = True
        await self.refresh_leaders(self._refresh_generation)
        st.leader_id = self._leaders.get(st.key, st.leader_id)
        return st.leader_id is not None

    async def leader_of(self, st: _State) -> int:
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
        info = self._versions(node)
        return magic1_layout_for_api_keys(info.versions) if info is not None else None

    def _versions(self, node: int) -> ServerApiVersions | None:
        getter = getattr(self.client, "api_versions_of", None)
        return getter(node) if getter is not None else None

    def offers_scan_kv(self, node: int) -> bool | None:
        info = self._versions(node)
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

    async def receive_values(self, records: bytes, st: _State) -> None:
        """A value batch (ScanKv, LimitScan on a PK table): split it into records now (bad
        framing fails the bucket at once), fetch the schemas it names, and keep the rows
        undecoded: only the rows the preview shows are decoded (:meth:`values_table`)."""
        if not records:
            return
        batch = read_value_batch(records, bucket=st.label)
        await self.ensure_schemas(np.unique(batch.schema_ids).tolist())
        if len(batch):
            st.add(_RawValues(batch, 0, len(batch)))

    def values_table(self, batch: ValueBatch, start: int, stop: int) -> pa.Table:
        """Decode rows ``start:stop`` of a value batch (schemas already fetched) into the
        latest schema, through the decoders' columnar path (``decode_table``)."""
        assert self.info is not None
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
        st: _State,
        node: int,
        *,
        min_offset: int | None = None,
        end_offset: int | None = None,
    ) -> tuple[pa.Table, int | None, int]:
        """A log blob -> (rows with _offset/_change_type, next offset, bytes left over).

        Rows below ``min_offset`` or at/after ``end_offset`` are dropped. The next offset is
        that of the last complete batch (None when there was none); an incomplete trailing
        batch is not an error (its bytes are the third value).
        """
        if not records:
            return self._empty(log=True), None, 0
        batches = read_log_batches(
            records, magic1_layout=self.magic1_layout(node), check_crc=True, bucket=st.label
        )
        await self.ensure_schemas(b.schema_id for b in batches if b.record_count)
        pieces = []
        for b in batches:
            if b.record_count == 0:
                continue
            if min_offset is not None and b.next_offset <= min_offset:
                continue
            if end_offset is not None and b.base_offset >= end_offset:
                continue
            pieces.append(self._log_batch_table(b, min_offset, end_offset))
        if not pieces:
            table = self._empty(log=True)
        else:
            table = pieces[0] if len(pieces) == 1 else pa.concat_tables(pieces)
        return table, batches.next_offset, batches.bytes_remaining

    def _log_batch_table(
        self, b: LogBatch, min_offset: int | None, end_offset: int | None
    ) -> pa.Table:
        assert self.info is not None
        if b.looks_like_arrow:
            rec = decode_arrow_batch(b, self._arrow_schema(b.schema_id))
            data = pa.Table.from_batches([rec.data])
            n = data.num_rows
            if rec.change_types is None:
                kinds = pa.repeat(pa.scalar(ChangeType.APPEND_ONLY.short_string), n)
            else:
                kinds = pa.array([c.short_string for c in rec.change_types], pa.string())
            offsets = pa.array(range(b.base_offset, b.base_offset + n), pa.int64())
        else:
            fmt = self.info.log_format
            if fmt is LogFormat.ARROW:
                raise CorruptBatchError(
                    "a log batch without an Arrow message in an ARROW table",
                    bucket=b.bucket,
                    offset=b.base_offset,
                )
            full = row_batch_table(b, self._row_decoder(b.schema_id, str(fmt)))
            offsets = full.column("_offset")
            kinds = full.column("_change_type")
            data = full.drop_columns(["_offset", "_change_type", "_timestamp"])
        table = self._to_target(data, b.schema_id)
        table = table.append_column(pa.field(OFFSET_COLUMN, pa.int64(), False), offsets)
        table = table.append_column(pa.field(CHANGE_TYPE_COLUMN, pa.string(), False), kinds)
        first, last = b.base_offset, b.base_offset + table.num_rows  # [first, last)
        lo = max(0, (min_offset - first) if min_offset is not None else 0)
        hi = table.num_rows - max(0, (last - end_offset) if end_offset is not None else 0)
        if lo > 0 or hi < table.num_rows:
            table = table.slice(lo, max(0, hi - lo))
        return table

    def _empty(self, *, log: bool) -> pa.Table:
        assert self.target_schema is not None
        schema = self.target_schema
        if log:
            schema = schema.append(pa.field(OFFSET_COLUMN, pa.int64(), False))
            schema = schema.append(pa.field(CHANGE_TYPE_COLUMN, pa.string(), False))
        return schema.empty_table()

    # ------------------------------------------------------------------ calls

    async def call(self, st: _State | None, api: ApiKey, req: Message, node: int) -> Any:
        if st is not None:
            st.requests += 1
        return await self.client.call(api, req, node=node, timeout=self.deadline.timeout())

    # ------------------------------------------------------------------ LimitScan

    async def limit_scan(self, st: _State) -> None:
        assert self.info is not None
        for _ in range(2):  # a second try only after a leader refresh
            node = await self.leader_of(st)
            req = pb.LimitScanRequest(
                table_id=self.info.table_id, bucket_id=st.bucket_id, limit=self.limit
            )
            if st.partition_id is not None:
                req.partition_id = st.partition_id
            try:
                resp = await self.call(st, ApiKey.LIMIT_SCAN, req, node)
                err = body_error(resp, ApiKey.LIMIT_SCAN, self.server(node))
            except FlussError as exc:
                err = exc
                resp = None
            if err is not None:
                if needs_refresh(err) and await self.move_leader(st):
                    continue
                raise err
            assert resp is not None
            records = resp.records if resp.HasField("records") else b""
            is_log = (
                resp.is_log_table if resp.HasField("is_log_table") else not self.info.is_pk_table
            )
            if is_log:
                st.keep_last = True
                table, _, _ = await self.decode_log(records, st, node)
                if table.num_rows > self.limit:
                    table = table.slice(table.num_rows - self.limit)
                st.add(table)
            else:
                await self.receive_values(records, st)
            st.limit_reached = st.rows >= self.limit
            st.done_reading()
            return

    # ------------------------------------------------------------------ ScanKv

    async def scan_kv(self, st: _State) -> None:
        """One bucket through ScanKv sessions; falls back to LimitScan when not offered."""
        assert self.info is not None
        busy_retries = 0
        for _ in range(2 + _KV_OPEN_RETRIES + 1):  # reopen (expiry), busy retries, refresh
            node = await self.leader_of(st)
            if self.offers_scan_kv(node) is False:
                st.method = ScanMethod.LIMIT_SCAN
                await self.limit_scan(st)
                return
            async with self._kv_slots[node]:
                outcome = await self._kv_session(st, node)
            if outcome == "done":
                return
            if outcome == "unsupported":
                st.method = ScanMethod.LIMIT_SCAN
                await self.limit_scan(st)
                return
            if outcome == "busy":
                if busy_retries >= _KV_OPEN_RETRIES:
                    raise st.error or TooManyScannersError("too many scanners")
                delay = _KV_OPEN_BACKOFF_S * 2**busy_retries
                busy_retries += 1
                if self.deadline.remaining() <= delay:
                    raise st.error or TooManyScannersError("too many scanners")
                st.error = None
                await asyncio.sleep(delay)
            # "expired" and "moved" loop to open a new session
        raise FlussError(f"{st.label}: gave up reopening the ScanKv session")  # pragma: no cover

    async def _kv_session(
        self, st: _State, node: int
    ) -> Literal["done", "unsupported", "busy", "expired", "moved"]:
        assert self.info is not None
        open_req = pb.PbScanReqForBucket(
            table_id=self.info.table_id, bucket_id=st.bucket_id, limit=self.limit
        )
        if st.partition_id is not None:
            open_req.partition_id = st.partition_id
        req = pb.ScanKvRequest(
            bucket_scan_req=open_req, call_seq_id=0, batch_size_bytes=self.batch_size_bytes
        )
        scanner_id: bytes | None = None
        drained = False
        server = self.server(node)
        try:
            for seq in range(self.limit + 2):  # every page carries at least one row
                if seq > 0:
                    assert scanner_id is not None
                    req = pb.ScanKvRequest(
                        scanner_id=scanner_id,
                        call_seq_id=seq,
                        batch_size_bytes=self.batch_size_bytes,
                    )
                try:
                    resp = await self.call(st, ApiKey.SCAN_KV, req, node)
                except UnsupportedByServer:
                    if seq == 0:
                        st.requests -= 1  # refused before anything was sent
                        return "unsupported"
                    raise
                except FlussError as exc:
                    if seq == 0 and needs_refresh(exc) and await self.move_leader(st):
                        return "moved"
                    raise
                err = body_error(resp, ApiKey.SCAN_KV, server)
                if err is not None:
                    if isinstance(err, (ScannerExpiredError, UnknownScannerIdError)):
                        scanner_id = None  # the server has dropped the session already
                        if st.reopened:
                            raise err
                        st.reopened = True
                        st.discard_rows()
                        return "expired"
                    if isinstance(err, TooManyScannersError) and scanner_id is None:
                        st.error = err
                        return "busy"
                    if seq == 0 and needs_refresh(err) and await self.move_leader(st):
                        return "moved"
                    raise err
                if resp.HasField("scanner_id"):
                    scanner_id = resp.scanner_id
                if resp.HasField("records"):
                    await self.receive_values(resp.records, st)
                if not resp.has_more_results:
                    drained = True
                    st.limit_reached = st.rows >= self.limit
                    st.done_reading()
                    return "done"
                if scanner_id is None:
                    raise CorruptBatchError(
                        "ScanKv reply has more results but no scanner id", bucket=st.label
                    )
                if st.rows >= self.limit:
                    st.limit_reached = True
                    st.done_reading()
                    return "done"  # the finally block closes the session
            raise FlussError(f"{st.label}: ScanKv did not finish within {self.limit + 2} pages")
        finally:
            if scanner_id is not None and not drained:
                self._close_kv(st, node, scanner_id)

    def _close_kv(self, st: _State, node: int, scanner_id: bytes) -> None:
        """Best-effort close_scanner, in the background (also from a cancelled worker)."""
        st.sessions_closed += 1
        req = pb.ScanKvRequest(
            scanner_id=scanner_id, batch_size_bytes=self.batch_size_bytes, close_scanner=True
        )

        async def close() -> None:
            with contextlib.suppress(Exception):
                await self.client.call(ApiKey.SCAN_KV, req, node=node, timeout=_CLOSE_TIMEOUT_S)

        self.closers.add(asyncio.ensure_future(close()))

    async def wait_closers(self) -> None:
        pending = {t for t in self.closers if not t.done()}
        if pending:
            _, still = await asyncio.wait(pending, timeout=_CLOSE_TIMEOUT_S)
            for t in still:
                t.cancel()

    # ------------------------------------------------------------------ FetchLog tail

    async def tail_buckets(self, states: Sequence[_State]) -> None:
        """ListOffsets LATEST + EARLIEST (grouped per leader), then FetchLog per leader."""
        assert self.info is not None
        refs = [
            BucketRef(
                self.path,
                self.info.table_id,
                st.partition_id,
                st.partition_name,
                st.bucket_id,
                st.leader_id,
            )
            for st in states
        ]
        for st in states:
            st.requests += 2
        outcomes = await self.admin.leader_calls(LIST_OFFSETS_KIND, refs, [LATEST, EARLIEST])
        by_leader: dict[int, list[_State]] = defaultdict(list)
        for st, ref in zip(states, refs, strict=True):
            latest = outcomes.get((0, ref.key))
            earliest = outcomes.get((1, ref.key))
            for o in (latest, earliest):
                if o is not None and o.leader_id is not None:
                    st.leader_id = o.leader_id
            err = next(
                (o.error for o in (latest, earliest) if o is not None and o.error is not None),
                None,
            )
            if err is not None or latest is None or earliest is None:
                st.finish(BucketStatus.FAILED, err or FlussError("ListOffsets gave no answer"))
                continue
            end, start_of_log = int(latest.value), int(earliest.value)
            st.end_offset = end
            st.earliest_offset = start_of_log
            st.start_offset = max(start_of_log, end - self.limit)
            st.limit_reached = st.start_offset > start_of_log
            st.next_offset = st.start_offset
            st.fetch_bytes = self.fetch_max_bytes_per_bucket
            if st.start_offset >= end:
                st.finish(BucketStatus.EMPTY)
                continue
            assert st.leader_id is not None
            by_leader[st.leader_id].append(st)
        for node, group in by_leader.items():
            self.runner.spawn(group, self._fetch_loop(node, group))

    async def _fetch_loop(self, node: int, states: list[_State]) -> None:
        assert self.info is not None
        server = self.server(node)
        for _ in range(_MAX_FETCH_ROUNDS):
            active = [st for st in states if st.status is None]
            if not active:
                return
            active.sort(key=lambda st: not st.stalled)  # a stalled bucket goes first
            table_req = pb.PbFetchLogReqForTable(
                table_id=self.info.table_id, projection_pushdown_enabled=False
            )
            for st in active:
                item = table_req.buckets_req.add(
                    bucket_id=st.bucket_id,
                    fetch_offset=st.next_offset,
                    max_fetch_bytes=st.fetch_bytes,
                )
                if st.partition_id is not None:
                    item.partition_id = st.partition_id
            req = pb.FetchLogRequest(
                follower_server_id=-1, max_bytes=self.fetch_max_bytes, tables_req=[table_req]
            )
            for st in active:
                st.requests += 1
            try:
                resp = await self.call(None, ApiKey.FETCH_LOG, req, node)
            except FlussError as exc:
                if needs_refresh(exc):
                    await self._move_fetches(active, exc)
                    return
                raise
            answered: set[tuple[int | None, int]] = set()
            moved: list[_State] = []
            by_key = {st.key: st for st in active}
            for t in resp.tables_resp:
                for b in t.buckets_resp:
                    state = by_key.get((opt(b, "partition_id"), b.bucket_id))
                    if state is None:
                        continue
                    answered.add(state.key)
                    err = body_error(b, ApiKey.FETCH_LOG, server)
                    if err is not None:
                        if needs_refresh(err) and not state.leader_retried:
                            moved.append(state)
                        else:
                            state.finish(BucketStatus.FAILED, err)
                        continue
                    await self._fetched(state, b, node)
            for st in active:
                if st.key not in answered and st.status is None:
                    st.finish(
                        BucketStatus.FAILED,
                        FlussError(f"FetchLog reply from {server} did not mention {st.label}"),
                    )
            if moved:
                await self._move_fetches(moved, None)
        for st in states:
            st.finish(
                BucketStatus.FAILED,
                FlussError(f"gave up after {_MAX_FETCH_ROUNDS} FetchLog rounds"),
            )

    async def _move_fetches(self, states: list[_State], exc: FlussError | None) -> None:
        """The leader moved (or its connection failed): refresh once, go on elsewhere."""
        regroup: dict[int, list[_State]] = defaultdict(list)
        for st in states:
            if st.status is not None:
                continue
            if await self.move_leader(st):
                assert st.leader_id is not None
                regroup[st.leader_id].append(st)
            else:
                st.finish(
                    BucketStatus.FAILED,
                    exc or LeaderNotAvailableError(f"{st.label}: no leader after a refresh"),
                )
        for node, group in regroup.items():
            self.runner.spawn(group, self._fetch_loop(node, group))

    async def _fetched(self, st: _State, b: pb.PbFetchLogRespForBucket, node: int) -> None:
        assert st.end_offset is not None
        if b.HasField("remote_log_fetch_info"):
            segments = b.remote_log_fetch_info.remote_log_segments
            remote_end = max((s.remote_log_end_offset for s in segments), default=st.next_offset)
            upto = min(max(remote_end, st.next_offset + 1), st.end_offset)
            st.remote.append((st.next_offset, upto))
            st.next_offset = upto
            st.idle_rounds = 0
            if st.next_offset >= st.end_offset:
                st.done_reading()
            return
        records = b.records if b.HasField("records") else b""
        table, next_offset, leftover = await self.decode_log(
            records, st, node, min_offset=st.next_offset, end_offset=st.end_offset
        )
        st.add(table)
        if next_offset is not None and next_offset > st.next_offset:
            st.next_offset = next_offset
            st.fetch_bytes = self.fetch_max_bytes_per_bucket
            st.stalled = False
            st.idle_rounds = 0
        elif leftover > 0:
            # Only a fragment of the next batch fitted: give it more room and go first.
            st.fetch_bytes = min(st.fetch_bytes * 2, MAX_FETCH_BYTES_PER_BUCKET)
            st.stalled = True
            st.idle_rounds += 1
        else:
            st.idle_rounds += 1
        if st.next_offset >= st.end_offset:
            st.done_reading()
        elif st.idle_rounds >= _MAX_STALLED_ROUNDS:
            hw = opt(b, "high_watermark")
            st.detail = (
                f"no records returned from offset {st.next_offset} (high watermark {hw}; "
                "tiered to a lake, or a batch larger than "
                f"{MAX_FETCH_BYTES_PER_BUCKET} bytes?)"
            )
            st.finish(BucketStatus.FAILED, FlussError(st.detail))


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
    fields = [
        f.with_metadata({FLUSS_TYPE_KEY: str(c.type).encode()})
        for f, c in zip(schema, fluss.columns, strict=True)
    ]
    return pa.schema(fields)


def _bucket_states(
    table: TableMetadata | None,
    partitions: Sequence[tuple[int, str, PartitionMetadata | None]],
    method: ScanMethod,
    keep_last: bool,
) -> list[_State]:
    def make(pid: int | None, pname: str | None, b: BucketMetadata) -> _State:
        return _State(pid, pname, b.bucket_id, b.leader_id, method, keep_last)

    states: list[_State] = []
    if table is not None:
        states.extend(make(None, None, b) for b in sorted(table.buckets, key=_bucket_id))
    for pid, name, meta in partitions:
        if meta is None:
            continue
        states.extend(make(pid, name, b) for b in sorted(meta.buckets, key=_bucket_id))
    return states


def _bucket_id(b: BucketMetadata) -> int:
    return b.bucket_id


def _take(run: _Preview, st: _State, take: int) -> pa.Table:
    """The ``take`` first (key scans) or last (log reads) rows of a bucket, decoding only
    the value records that are shown."""
    chunks = list(reversed(st.chunks)) if st.keep_last else list(st.chunks)
    picked: list[pa.Table] = []
    left = take
    for chunk in chunks:
        if left <= 0:
            break
        n = min(left, chunk.num_rows)
        start = chunk.num_rows - n if st.keep_last else 0
        if isinstance(chunk, _RawValues):
            first = chunk.start + start
            picked.append(run.values_table(chunk.batch, first, first + n))
        else:
            picked.append(chunk.slice(start, n))
        left -= n
    if st.keep_last:
        picked.reverse()
    return picked[0] if len(picked) == 1 else pa.concat_tables(picked)


def _assemble(
    run: _Preview, states: Sequence[_State], limit: int, partitioned: bool
) -> tuple[pa.Table, list[int]]:
    counts = [st.rows for st in states]
    quota = _fair_quota(counts, limit)
    assert run.target_schema is not None
    any_log = run.tail or (run.info is not None and not run.info.is_pk_table)
    pieces: list[pa.Table] = []
    for i, (st, take) in enumerate(zip(states, quota, strict=True)):
        if not take:
            continue
        try:
            data = _take(run, st, take)
        except DecodeError as exc:  # a row that does not decode fails its bucket only
            st.chunks.clear()
            st.status, st.error = BucketStatus.FAILED, exc
            quota[i] = 0
            continue
        if partitioned:
            data = data.append_column(
                pa.field(PARTITION_COLUMN, pa.string(), False),
                pa.repeat(pa.scalar(st.partition_name or str(st.partition_id)), take),
            )
        data = data.append_column(
            pa.field(BUCKET_COLUMN, pa.int32(), False),
            pa.repeat(pa.scalar(st.bucket_id, pa.int32()), take),
        )
        pieces.append(data)
    schema = _output_schema(run.target_schema, log=any_log, partitioned=partitioned)
    if not pieces:
        return schema.empty_table(), quota
    table = pa.concat_tables(pieces)
    return table.cast(schema) if table.schema != schema else table, quota


def _output_schema(target: pa.Schema, *, log: bool, partitioned: bool) -> pa.Schema:
    schema = target
    if log:
        schema = schema.append(pa.field(OFFSET_COLUMN, pa.int64(), False))
        schema = schema.append(pa.field(CHANGE_TYPE_COLUMN, pa.string(), False))
    if partitioned:
        schema = schema.append(pa.field(PARTITION_COLUMN, pa.string(), False))
    return schema.append(pa.field(BUCKET_COLUMN, pa.int32(), False))


# =========================================================================== entry point


async def preview_table(
    client: ScanClient,
    path: TablePath | tuple[str, str] | str,
    *,
    partition: str | int | None = None,
    limit: int = 100,
    tail: bool = False,
    deadline_s: float = 10.0,
    max_partitions: int = 8,
    batch_size_bytes: int = DEFAULT_KV_BATCH_BYTES,
    fetch_max_bytes: int = DEFAULT_FETCH_MAX_BYTES,
    fetch_max_bytes_per_bucket: int = DEFAULT_FETCH_MAX_BYTES_PER_BUCKET,
) -> Preview:
    """Preview up to ``limit`` rows of ``path`` within ``deadline_s`` seconds.

    ``partition``: a partition name (``"2024$eu"``), ``"k=v/k2=v2"``, a partition id, or
    ``"all"``/None (every partition, the newest ``max_partitions``). ``tail``: read the last
    rows of each bucket's log through FetchLog (for a primary-key table: its changelog).

    Raises before any bucket is read: ``ValueError`` / :class:`PreviewArgumentError` for
    arguments that do not fit (bad limit, a partition on a non-partitioned table),
    :class:`~fluss_proto.error_codes.TableNotExistError`,
    :class:`~fluss_proto.error_codes.PartitionNotExistError`, connection errors, and
    :class:`~fluss_proto.errors.RequestTimeoutError` when the table's metadata did not come
    within the deadline. Per-bucket failures and timeouts are kept in the report.
    """
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= _MAX_LIMIT:
        raise PreviewArgumentError(f"limit must be an integer in 1..{_MAX_LIMIT}, got {limit!r}")
    if not deadline_s > 0:
        raise PreviewArgumentError(f"deadline_s must be positive, got {deadline_s!r}")
    if max_partitions < 1:
        raise PreviewArgumentError(f"max_partitions must be at least 1, got {max_partitions!r}")
    if batch_size_bytes < 1 or fetch_max_bytes < 1 or fetch_max_bytes_per_bucket < 1:
        raise PreviewArgumentError("byte budgets must be positive")
    table_path = TablePath.of(path)
    started = time.monotonic()
    deadline = _Deadline(deadline_s)
    run = _Preview(
        client,
        table_path,
        limit=limit,
        tail=tail,
        deadline=deadline,
        batch_size_bytes=batch_size_bytes,
        fetch_max_bytes=fetch_max_bytes,
        fetch_max_bytes_per_bucket=fetch_max_bytes_per_bucket,
    )
    try:
        try:
            async with asyncio.timeout(deadline.remaining()):
                table_md, info = await run.load_table()
                chosen: list[tuple[int, str]] = []
                skipped: list[str] = []
                parts: dict[int, PartitionMetadata] = {}
                if info.is_partitioned:
                    chosen, skipped = await run.choose_partitions(info, partition, max_partitions)
                    run.partition_ids = [pid for pid, _ in chosen]
                    if chosen:
                        parts = await run.partition_buckets(run.partition_ids)
                elif partition is not None and partition != "all":
                    raise PreviewArgumentError(
                        f"{table_path} is not partitioned; no partition can be chosen"
                    )
        except TimeoutError:
            raise RequestTimeoutError(
                f"the metadata of {table_path} did not arrive within {deadline_s}s"
            ) from None
        if tail:
            method, keep_last = ScanMethod.FETCH_LOG_TAIL, True
        elif info.is_pk_table:
            method, keep_last = ScanMethod.SCAN_KV, False
        else:
            method, keep_last = ScanMethod.LIMIT_SCAN, True
        states = _bucket_states(
            None if info.is_partitioned else table_md,
            [(pid, name, parts.get(pid)) for pid, name in chosen],
            method,
            keep_last,
        )
        missing = [(pid, name) for pid, name in chosen if pid not in parts]
        for pid, name in missing:  # dropped between listing and metadata
            st = _State(pid, name, -1, None, method, keep_last)
            st.finish(BucketStatus.FAILED, PartitionNotExistError(f"partition {name} vanished"))
            states.append(st)
        for st in states:
            run._leaders[st.key] = st.leader_id
            st.started = time.monotonic()
        live = [st for st in states if st.status is None]
        if tail:
            run.runner.spawn(live, run.tail_buckets(live))
        else:
            for st in live:
                work = run.scan_kv(st) if method is ScanMethod.SCAN_KV else run.limit_scan(st)
                run.runner.spawn([st], work)
        await run.runner.run()
        timed_out = RequestTimeoutError(f"the preview deadline of {deadline_s}s passed")
        for st in states:
            if st.status is None:
                st.finish(BucketStatus.TIMED_OUT, timed_out)
    finally:
        await run.runner.cancel_all()
        await run.wait_closers()
    table, quota = _assemble(run, states, limit, info.is_partitioned)
    rows_read = sum(st.rows for st in states)
    buckets = tuple(
        BucketScan(
            partition_id=st.partition_id,
            partition_name=st.partition_name,
            bucket_id=st.bucket_id,
            leader_id=st.leader_id,
            method=st.method,
            status=st.status or BucketStatus.TIMED_OUT,
            rows_read=st.rows,
            rows_returned=q,
            error=st.error,
            detail=st.detail,
            requests=st.requests,
            limit_reached=st.limit_reached,
            reopened=st.reopened,
            sessions_closed=st.sessions_closed,
            start_offset=st.start_offset,
            end_offset=st.end_offset,
            earliest_offset=st.earliest_offset,
            elapsed_s=((st.ended or time.monotonic()) - st.started) if st.started else 0.0,
        )
        for st, q in zip(states, quota, strict=True)
    )
    report = ScanReport(
        table_path=str(table_path),
        table_id=info.table_id,
        primary_key=info.is_pk_table,
        tail=tail,
        limit=limit,
        buckets=buckets,
        rows_returned=table.num_rows,
        rows_read=rows_read,
        limit_cut=rows_read > table.num_rows or any(b.limit_reached for b in buckets),
        elapsed_s=time.monotonic() - started,
        deadline_s=deadline_s,
        partitions=tuple(name for _, name in chosen),
        partitions_skipped=tuple(skipped),
        schema_ids=tuple(sorted(run.schema_ids_seen)),
        schema_id=info.schema_id,
    )
    return Preview(table=table, report=report, info=info)

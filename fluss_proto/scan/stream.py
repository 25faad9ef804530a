"""Streamed previews: rows handed out batch by batch as the buckets are read.

:func:`stream_preview` runs the same scans as :func:`~fluss_proto.scan.preview_table`
(ScanKv, LimitScan, FetchLog tail, one deadline, the same per-bucket report) but never
holds the whole result::

    async with stream_preview(client, "db.t", limit=1_000_000) as stream:
        writer = make_writer(stream.schema)          # the columns, known before any row
        async for table in stream:                   # pyarrow.Table chunks, stream.schema
            writer.write(table)
    report = stream.report                           # ScanReport, once the stream is done

Order (``order=``):

- ``"bucket"`` (the default): bucket by bucket in the report's order (partition, then
  bucket id), so the same table gives the same output; each bucket's rows in full until
  the limit is reached (a log bucket gives its *last* rows, as a preview does). Up to
  ``fair_share_rows`` rows (default ``FAIR_SHARE_ROWS``, 1,000) the stream is instead the
  collected preview of :func:`preview_table` handed out as one chunk: the limit shared out
  fairly across buckets (a short look at a big table shows every bucket), its memory
  bounded by the small limit.
- ``"arrival"``: chunks as they arrive from any bucket, the first ``limit`` rows win; the
  first row comes sooner, the output is not stable from run to run.

``light=True``: the chunks are :class:`~fluss_proto.scan.rows.Rows` (Python values, no
pyarrow or numpy imported) and ``stream.schema`` a
:class:`~fluss_proto.scan.rows.RowsSchema`, when every column of the table is of a plain
type; otherwise the stream is the Arrow one (check ``stream.light``).

Why not a fair share while streaming: it needs every bucket's row count before the first
bucket's rows go out, i.e. the whole result in memory.

Memory: a ScanKv worker (primary-key tables on the 1.0 line) waits when its bucket has
``capacity`` chunks (ScanKv pages of ``batch_size_bytes``) not yet taken by the reader,
so a streamed ScanKv preview holds a few pages per open session, never the result.
LimitScan replies are one batch per bucket by protocol, and a FetchLog tail reads at most
``limit`` rows per bucket; those are handed out as they come. Log reads keep the *last*
rows of a bucket, so in bucket order a log bucket's share is taken when the bucket ends.

A ScanKv session that expires after some of its rows were handed out fails that bucket
(a new session is a new snapshot; rows already handed out cannot be taken back).

Leaving the ``async with`` early (the limit reached, an error, cancellation) cancels the
workers and closes the open ScanKv sessions on the server (``close_scanner``, bounded by
``CLOSE_TIMEOUT_S``), as :func:`preview_table` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Literal

from fluss_proto.cluster import TablePath
from fluss_proto.errors import DecodeError, FlussError
from fluss_proto.filter import Filter
from fluss_proto.scan.constants import (
    DEFAULT_FETCH_MAX_BYTES,
    DEFAULT_FETCH_MAX_BYTES_PER_BUCKET,
    DEFAULT_KV_BATCH_BYTES,
)
from fluss_proto.scan.kv import wait_closers
from fluss_proto.scan.preview import (
    Plan,
    add_place,
    assemble,
    build_report,
    conform,
    new_run,
    output_schema,
    plan_preview,
    spawn_workers,
    time_out_the_rest,
)
from fluss_proto.scan.report import BucketStatus, ScanReport
from fluss_proto.scan.rows import Rows, RowsSchema
from fluss_proto.scan.run import ScanClient
from fluss_proto.scan.runner import BucketState, Chunk, RawValues, StreamAbandoned
from fluss_proto.types import TableInfo

if TYPE_CHECKING:  # a light stream never imports it
    import pyarrow as pa

__all__ = [
    "DEFAULT_STREAM_CAPACITY",
    "FAIR_SHARE_ROWS",
    "PreviewStream",
    "StreamOrder",
    "stream_preview",
]

StreamOrder = Literal["bucket", "arrival"]
#: Up to this limit, a bucket-order stream shares the limit fairly (collected, one chunk).
FAIR_SHARE_ROWS = 1_000
#: Chunks a ScanKv bucket may have waiting for the reader before its worker waits.
DEFAULT_STREAM_CAPACITY = 2


class _Feed:
    """One bucket's chunks on their way from its worker to the reader."""

    __slots__ = ("abandoned", "ended", "items", "space", "taken")

    def __init__(self) -> None:
        self.items: deque[Chunk] = deque()
        self.ended = False
        self.abandoned = False
        self.space = asyncio.Event()
        self.space.set()
        self.taken = 0  # rows handed to the reader


class PreviewStream:
    """A preview in progress; iterate it for ``pyarrow.Table`` chunks of :attr:`schema`
    (light streams: :class:`~fluss_proto.scan.rows.Rows`)."""

    def __init__(self, plan: Plan, order: StreamOrder, capacity: int, collected: bool) -> None:
        self._plan = plan
        #: A small preview in bucket order: collected, fair quotas, one chunk.
        self.collected = collected
        self._quota: list[int] | None = None
        self._run = plan.run
        self.order: StreamOrder = order
        self.info: TableInfo = plan.info
        #: ``db.table``.
        self.table_path = str(plan.run.path)
        #: The columns of every chunk: the table's (Fluss types in the field metadata
        #: ``fluss.type``), then ``_offset``/``_change_type`` (log reads), ``_partition``
        #: (partitioned tables), ``_bucket``.
        self.schema: pa.Schema | RowsSchema = output_schema(plan)
        #: Chunks are light Rows (see the module doc).
        self.light = plan.run.light
        #: Set when the stream has ended (read to the end, or left early).
        self.report: ScanReport | None = None
        self.rows_returned = 0
        self._capacity = max(1, capacity)
        self._feeds: dict[BucketState, _Feed] = {st: _Feed() for st in plan.states}
        self._arrivals: deque[BucketState] = deque()
        self._wake = asyncio.Event()
        self._producer: asyncio.Task[None] | None = None
        self._iterated = False
        for st in plan.states:
            if st.status is not None:
                self._feeds[st].ended = True
            st.on_finish = self._ended

    # ------------------------------------------------------------------ worker side

    def _ended(self, st: BucketState) -> None:
        self._feeds[st].ended = True
        self._wake.set()

    async def put(self, st: BucketState, chunk: Chunk, *, flow: bool) -> None:
        feed = self._feeds[st]
        if feed.abandoned:
            if flow:
                raise StreamAbandoned
            return
        feed.items.append(chunk)
        self._arrivals.append(st)
        self._wake.set()
        if not flow:
            return
        for _ in range(1_000_000):  # bounded: each pass waits for the reader to take one
            if feed.abandoned:
                raise StreamAbandoned
            if len(feed.items) < self._capacity:
                return
            feed.space.clear()
            await feed.space.wait()

    # ------------------------------------------------------------------ reader side

    def start(self) -> None:
        self._producer = asyncio.ensure_future(self._produce())
        self._producer.add_done_callback(lambda _t: self._wake.set())

    async def _produce(self) -> None:
        spawn_workers(self._plan)
        await self._run.runner.run()
        time_out_the_rest(self._plan)

    def __aiter__(self) -> AsyncIterator[pa.Table | Rows]:
        if self._iterated:
            raise RuntimeError("a preview stream can be iterated once")
        self._iterated = True
        if self.collected:
            return self._collected()
        return self._chunks() if self.order == "bucket" else self._arrival_chunks()

    async def _wait(self) -> None:
        """Until a worker hands over rows or a bucket ends; re-raises a failed producer."""
        producer = self._producer
        if producer is not None and producer.done() and not producer.cancelled():
            exc = producer.exception()
            if exc is not None:
                raise exc
        self._wake.clear()
        await self._wake.wait()

    def _pop(self, st: BucketState) -> Chunk:
        feed = self._feeds[st]
        chunk = feed.items.popleft()
        feed.space.set()
        return chunk

    def _abandon(self, st: BucketState, detail: str | None = None) -> None:
        """The reader needs no more of this bucket: its worker stops at its next hand-over."""
        feed = self._feeds[st]
        feed.abandoned = True
        feed.items.clear()
        feed.space.set()
        if st.status is None:
            st.limit_reached = True
            st.finish(BucketStatus.SCANNED if st.rows else BucketStatus.EMPTY, detail=detail)

    async def _collected(self) -> AsyncIterator[pa.Table | Rows]:
        """Small previews: every bucket read, then the fair quotas of preview_table."""
        producer = self._producer
        assert producer is not None
        await producer
        table, quota = assemble(
            self._run, self._plan.states, self._run.limit, self._plan.partitioned
        )
        self._quota = quota
        self.rows_returned = table.num_rows
        if table.num_rows:
            yield conform(table, self.schema)

    async def _chunks(self) -> AsyncIterator[pa.Table | Rows]:
        limit = self._run.limit
        states = self._plan.states
        for i, st in enumerate(states):
            left = limit - self.rows_returned
            if left <= 0:
                for later in states[i:]:
                    self._abandon(later, "not read: earlier buckets filled the limit")
                return
            feed = self._feeds[st]
            if st.keep_last:
                tail = await self._last_rows(st, left)
                if tail is not None:
                    yield tail
                continue
            for _ in range(1_000_000_000):  # bounded: each pass takes a chunk or waits
                if feed.items:
                    out = self._emit(st, self._pop(st), left - feed.taken, keep_last=False)
                    if out is not None:
                        yield out
                    if feed.taken >= left:
                        self._abandon(st)
                        break
                elif feed.ended or feed.abandoned:
                    break
                else:
                    await self._wait()

    async def _last_rows(self, st: BucketState, share: int) -> pa.Table | Rows | None:
        """A log bucket's last ``share`` rows, once the bucket has ended (the chunks before
        them are dropped as newer ones come)."""
        feed = self._feeds[st]
        window: deque[Chunk] = deque()
        held = 0
        for _ in range(1_000_000_000):  # bounded: each pass takes a chunk or waits
            if feed.items:
                chunk = self._pop(st)
                window.append(chunk)
                held += chunk.num_rows
                while window and held - window[0].num_rows >= share:
                    held -= window.popleft().num_rows
            elif feed.ended or feed.abandoned:
                break
            else:
                await self._wait()
        skip = max(0, held - share)
        pieces: list[pa.Table | Rows] = []
        for chunk in window:
            n = chunk.num_rows - skip
            if n > 0:
                out = self._emit(st, chunk, n, keep_last=True)
                if out is not None:
                    pieces.append(out)
            skip = max(0, skip - chunk.num_rows)
        if not pieces:
            return None
        return self._run.concat_chunks(pieces, log=False)

    async def _arrival_chunks(self) -> AsyncIterator[pa.Table | Rows]:
        limit = self._run.limit
        for _ in range(1_000_000_000):  # bounded: each pass takes a chunk or waits
            left = limit - self.rows_returned
            if left <= 0:
                for st in self._plan.states:
                    self._abandon(st, "not read: other buckets filled the limit")
                return
            if self._arrivals:
                st = self._arrivals.popleft()
                if not self._feeds[st].items:
                    continue  # abandoned meanwhile
                out = self._emit(st, self._pop(st), left, keep_last=st.keep_last)
                if out is not None:
                    yield out
            elif all(f.ended for f in self._feeds.values()):
                return
            else:
                await self._wait()

    def _emit(
        self, st: BucketState, chunk: Chunk, most: int, *, keep_last: bool
    ) -> pa.Table | Rows | None:
        """Decode (value batches), cut to ``most`` rows, add _partition/_bucket."""
        n = min(most, chunk.num_rows)
        if n <= 0:
            return None
        start = chunk.num_rows - n if keep_last else 0
        try:
            if isinstance(chunk, RawValues):
                first = chunk.start + start
                data = self._run.values_table(chunk.batch, first, first + n)
            else:
                data = chunk.slice(start, n)
        except DecodeError as exc:  # a row that does not decode fails its bucket only
            self._abandon(st)
            st.status, st.error = BucketStatus.FAILED, exc
            return None
        data = conform(add_place(self._run, data, st, self._plan.partitioned), self.schema)
        self._feeds[st].taken += n
        self.rows_returned += n
        return data

    async def close(self) -> None:
        """Stop the workers, close ScanKv sessions, and freeze the report."""
        producer = self._producer
        if producer is not None and not producer.done():
            producer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await producer
        try:
            await self._run.runner.cancel_all()
        finally:
            await wait_closers(self._run)
        stopped = FlussError("the preview was stopped before this bucket was read to the end")
        for st in self._plan.states:
            if st.status is None:
                st.finish(BucketStatus.TIMED_OUT, stopped)
        quota = self._quota or [self._feeds[st].taken for st in self._plan.states]
        self.report = build_report(self._plan, quota, self.rows_returned)


@contextlib.asynccontextmanager
async def stream_preview(
    client: ScanClient,
    path: TablePath | tuple[str, str] | str,
    *,
    partition: str | int | None = None,
    limit: int = 100,
    tail: bool = False,
    deadline_s: float = 10.0,
    max_partitions: int = 8,
    order: StreamOrder = "bucket",
    light: bool = False,
    capacity: int = DEFAULT_STREAM_CAPACITY,
    fair_share_rows: int = FAIR_SHARE_ROWS,
    batch_size_bytes: int = DEFAULT_KV_BATCH_BYTES,
    fetch_max_bytes: int = DEFAULT_FETCH_MAX_BYTES,
    fetch_max_bytes_per_bucket: int = DEFAULT_FETCH_MAX_BYTES_PER_BUCKET,
    where: str | Filter | None = None,
    check_filter: Callable[[Filter], None] | None = None,
    pushdown: bool = True,
) -> AsyncIterator[PreviewStream]:
    """Open a streamed preview (arguments and errors as :func:`preview_table`).

    The table's metadata is read on entry (so the errors raised before any bucket is
    read come from ``async with``); the buckets are read while the stream is iterated.
    """
    if order not in ("bucket", "arrival"):
        raise ValueError(f"order must be 'bucket' or 'arrival', got {order!r}")
    started = time.monotonic()
    run = new_run(
        client,
        path,
        limit=limit,
        tail=tail,
        deadline_s=deadline_s,
        max_partitions=max_partitions,
        batch_size_bytes=batch_size_bytes,
        fetch_max_bytes=fetch_max_bytes,
        fetch_max_bytes_per_bucket=fetch_max_bytes_per_bucket,
        light=light,
        where=where,
        check_filter=check_filter,
        pushdown=pushdown,
    )
    plan = await plan_preview(run, partition, max_partitions, deadline_s, started)
    collected = order == "bucket" and limit <= fair_share_rows
    stream = PreviewStream(plan, order, capacity, collected)
    if not collected:
        run.sink = stream
    stream.start()
    try:
        yield stream
    finally:
        await stream.close()

"""Per-bucket progress, fair row quotas, and the worker runner bounded by one deadline."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from fluss_proto._replies import as_fluss_error
from fluss_proto.errors import FlussError
from fluss_proto.records.kv_batch import ValueBatch
from fluss_proto.scan.constants import (
    CANCEL_GRACE_S,
    DEFAULT_FETCH_MAX_BYTES_PER_BUCKET,
    MIN_REQUEST_TIMEOUT_S,
)
from fluss_proto.scan.report import (
    BucketStatus,
    ScanMethod,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from fluss_proto.scan.rows import Rows


@dataclass(frozen=True, slots=True)
class RawValues:
    """Rows ``start:stop`` of a value batch, kept undecoded until the preview knows which
    rows it shows."""

    batch: ValueBatch
    start: int
    stop: int

    @property
    def num_rows(self) -> int:
        return self.stop - self.start


#: Rows of a bucket on their way: decoded (Arrow, or light) or value records not yet decoded.
Chunk: TypeAlias = "pa.Table | Rows | RawValues"


@dataclass(eq=False)
class BucketState:
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
    #: Decoded log rows (pa.Table) or undecoded value records (RawValues), in order.
    chunks: list[Chunk] = field(default_factory=list)
    #: Rows kept (a filter's matches); ``scanned`` counts every row read.
    rows: int = 0
    scanned: int = 0
    #: Filtered FetchLog: offsets the server left out, in how many runs of whole batches.
    skipped_offsets: int = 0
    skipped_runs: int = 0
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
    # Streaming (stream_preview): rows were handed out already, so they cannot be taken
    # back (an expired ScanKv session then fails the bucket instead of restarting it).
    streamed: bool = False
    #: Called once when the bucket gets its final status (streaming: ends its feed).
    on_finish: Callable[[BucketState], None] | None = None

    @property
    def key(self) -> tuple[int | None, int]:
        return (self.partition_id, self.bucket_id)

    @property
    def label(self) -> str:
        if self.partition_name is not None:
            return f"{self.partition_name}/bucket-{self.bucket_id}"
        return f"bucket-{self.bucket_id}"

    def add(self, chunk: Chunk) -> None:
        if chunk.num_rows:
            self.chunks.append(chunk)
            self.rows += chunk.num_rows

    def discard_rows(self) -> None:
        self.chunks.clear()
        self.rows = 0
        self.scanned = 0

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
        if self.on_finish is not None:
            self.on_finish(self)

    def done_reading(self) -> None:
        if self.remote:
            ranges = ", ".join(f"[{a}, {b})" for a, b in self.remote)
            self.finish(
                BucketStatus.REMOTE,
                detail=f"offsets {ranges} are in remote storage (not readable over RPC)",
            )
        else:
            self.finish(BucketStatus.SCANNED if self.rows else BucketStatus.EMPTY)


def fair_quota(counts: Sequence[int], limit: int) -> list[int]:
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


class StreamAbandoned(Exception):  # a signal to the worker, not a failure
    """The stream's reader needs no more rows from this bucket: the worker stops (and a
    ScanKv session is closed on the way out)."""


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def timeout(self) -> float:
        """A per-request timeout that never outlives the deadline."""
        return max(MIN_REQUEST_TIMEOUT_S, self.remaining())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0


def _close_unstarted(work: Awaitable[None]) -> None:
    """A worker cancelled before its task first ran was never awaited: closed here, it
    leaves no "coroutine was never awaited" warning (nothing of it ran to clean up)."""
    if inspect.iscoroutine(work) and inspect.getcoroutinestate(work) == inspect.CORO_CREATED:
        work.close()


class Runner:
    """Worker tasks under one deadline; workers may spawn more workers while it runs."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self.tasks: set[asyncio.Task[None]] = set()

    def spawn(self, states: Sequence[BucketState], work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(self._guard(states, work))
        task.add_done_callback(lambda _: _close_unstarted(work))
        self.tasks.add(task)

    @staticmethod
    async def _guard(states: Sequence[BucketState], work: Awaitable[None]) -> None:
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
            await asyncio.wait(pending, timeout=CANCEL_GRACE_S)

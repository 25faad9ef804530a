"""The entry point: :func:`preview_table` chooses buckets and a scan mode, runs them under
one deadline and assembles the rows and the report."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fluss_proto.cluster import (
    BucketMetadata,
    PartitionMetadata,
    TableMetadata,
    TablePath,
)
from fluss_proto.error_codes import PartitionNotExistError
from fluss_proto.errors import (
    DecodeError,
    PreviewArgumentError,
    RequestTimeoutError,
)
from fluss_proto.filter import Filter, render
from fluss_proto.scan.constants import (
    BUCKET_COLUMN,
    CHANGE_TYPE_COLUMN,
    DEFAULT_FETCH_MAX_BYTES,
    DEFAULT_FETCH_MAX_BYTES_PER_BUCKET,
    DEFAULT_KV_BATCH_BYTES,
    MAX_LIMIT,
    OFFSET_COLUMN,
    PARTITION_COLUMN,
)
from fluss_proto.scan.kv import scan_kv, wait_closers
from fluss_proto.scan.limit import limit_scan
from fluss_proto.scan.report import (
    BucketScan,
    BucketStatus,
    Preview,
    ScanMethod,
    ScanReport,
)
from fluss_proto.scan.rows import BIGINT, INT, STRING, Rows, RowsSchema
from fluss_proto.scan.run import PreviewRun, ScanClient
from fluss_proto.scan.runner import BucketState, Deadline, RawValues, fair_quota
from fluss_proto.scan.tail import tail_buckets
from fluss_proto.types import TableInfo

if TYPE_CHECKING:  # a light run (fluss_proto.scan.rows) never imports it
    import pyarrow as pa


def _bucket_states(
    table: TableMetadata | None,
    partitions: Sequence[tuple[int, str, PartitionMetadata | None]],
    method: ScanMethod,
    keep_last: bool,
) -> list[BucketState]:
    def make(pid: int | None, pname: str | None, b: BucketMetadata) -> BucketState:
        return BucketState(pid, pname, b.bucket_id, b.leader_id, method, keep_last)

    states: list[BucketState] = []
    if table is not None:
        states.extend(make(None, None, b) for b in sorted(table.buckets, key=_bucket_id))
    for pid, name, meta in partitions:
        if meta is None:
            continue
        states.extend(make(pid, name, b) for b in sorted(meta.buckets, key=_bucket_id))
    return states


def _bucket_id(b: BucketMetadata) -> int:
    return b.bucket_id


def _take(run: PreviewRun, st: BucketState, take: int) -> pa.Table | Rows:
    """The ``take`` first (key scans) or last (log reads) rows of a bucket, decoding only
    the value records that are shown."""
    chunks = list(reversed(st.chunks)) if st.keep_last else list(st.chunks)
    picked: list[pa.Table | Rows] = []
    left = take
    for chunk in chunks:
        if left <= 0:
            break
        n = min(left, chunk.num_rows)
        start = chunk.num_rows - n if st.keep_last else 0
        if isinstance(chunk, RawValues):
            first = chunk.start + start
            picked.append(run.values_table(chunk.batch, first, first + n))
        else:
            picked.append(chunk.slice(start, n))
        left -= n
    if st.keep_last:
        picked.reverse()
    return run.concat_chunks(picked, log=False)


def add_place(
    run: PreviewRun, data: pa.Table | Rows, st: BucketState, partitioned: bool
) -> pa.Table | Rows:
    """Append ``_partition`` (partitioned tables) and ``_bucket`` to a bucket's rows."""
    partition = st.partition_name or str(st.partition_id)
    if isinstance(data, Rows):
        if partitioned:
            data = data.with_constant(PARTITION_COLUMN, STRING, partition)
        return data.with_constant(BUCKET_COLUMN, INT, st.bucket_id)
    import pyarrow as pa

    n = data.num_rows
    if partitioned:
        data = data.append_column(
            pa.field(PARTITION_COLUMN, pa.string(), False), pa.repeat(pa.scalar(partition), n)
        )
    return data.append_column(
        pa.field(BUCKET_COLUMN, pa.int32(), False),
        pa.repeat(pa.scalar(st.bucket_id, pa.int32()), n),
    )


def conform(data: pa.Table | Rows, schema: pa.Schema | RowsSchema) -> pa.Table | Rows:
    """Rows under the preview's output schema (its field metadata, its nullability)."""
    if isinstance(data, Rows):
        assert isinstance(schema, RowsSchema)
        return data.conform(schema) if data.schema != schema else data
    return data.cast(schema) if data.schema != schema else data


def assemble(
    run: PreviewRun, states: Sequence[BucketState], limit: int, partitioned: bool
) -> tuple[pa.Table | Rows, list[int]]:
    counts = [st.rows for st in states]
    quota = fair_quota(counts, limit)
    any_log = run.tail or (run.info is not None and not run.info.is_pk_table)
    pieces: list[pa.Table | Rows] = []
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
        pieces.append(add_place(run, data, st, partitioned))
    schema = _output_schema(run, log=any_log, partitioned=partitioned)
    if isinstance(schema, RowsSchema):
        return conform(Rows.concat(pieces), schema) if pieces else schema.empty(), quota
    if not pieces:
        return schema.empty_table(), quota
    import pyarrow as pa

    return conform(pa.concat_tables(pieces), schema), quota


def _output_schema(run: PreviewRun, *, log: bool, partitioned: bool) -> pa.Schema | RowsSchema:
    if run.light:
        assert run.target_rows is not None
        rows = run.target_rows
        if log:
            rows = rows.append(OFFSET_COLUMN, BIGINT).append(CHANGE_TYPE_COLUMN, STRING)
        if partitioned:
            rows = rows.append(PARTITION_COLUMN, STRING)
        return rows.append(BUCKET_COLUMN, INT)
    import pyarrow as pa

    assert run.target_schema is not None
    schema = run.target_schema
    if log:
        schema = schema.append(pa.field(OFFSET_COLUMN, pa.int64(), False))
        schema = schema.append(pa.field(CHANGE_TYPE_COLUMN, pa.string(), False))
    if partitioned:
        schema = schema.append(pa.field(PARTITION_COLUMN, pa.string(), False))
    return schema.append(pa.field(BUCKET_COLUMN, pa.int32(), False))


@dataclass
class Plan:
    """What a preview reads: the table, its buckets (in bucket order) and the partitions."""

    run: PreviewRun
    info: TableInfo
    states: list[BucketState]
    chosen: list[tuple[int, str]]
    skipped: list[str]
    method: ScanMethod
    started: float
    deadline_s: float

    @property
    def partitioned(self) -> bool:
        return self.info.is_partitioned


def check_arguments(
    limit: int,
    deadline_s: float,
    max_partitions: int,
    batch_size_bytes: int,
    fetch_max_bytes: int,
    fetch_max_bytes_per_bucket: int,
) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise PreviewArgumentError(f"limit must be an integer in 1..{MAX_LIMIT}, got {limit!r}")
    if not deadline_s > 0:
        raise PreviewArgumentError(f"deadline_s must be positive, got {deadline_s!r}")
    if max_partitions < 1:
        raise PreviewArgumentError(f"max_partitions must be at least 1, got {max_partitions!r}")
    if batch_size_bytes < 1 or fetch_max_bytes < 1 or fetch_max_bytes_per_bucket < 1:
        raise PreviewArgumentError("byte budgets must be positive")


async def plan_preview(
    run: PreviewRun,
    partition: str | int | None,
    max_partitions: int,
    deadline_s: float,
    started: float,
) -> Plan:
    """Table metadata, partitions and the per-bucket states (nothing read yet)."""
    table_path, tail = run.path, run.tail
    try:
        async with asyncio.timeout(run.deadline.remaining()):
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
    elif run.where.active:  # the whole log, its first matches kept
        method, keep_last = ScanMethod.FETCH_LOG, False
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
        st = BucketState(pid, name, -1, None, method, keep_last)
        st.finish(BucketStatus.FAILED, PartitionNotExistError(f"partition {name} vanished"))
        states.append(st)
    return Plan(run, info, states, chosen, skipped, method, started, deadline_s)


def spawn_workers(plan: Plan) -> None:
    """One worker per bucket (one per leader for the FetchLog tail), on the run's runner."""
    run = plan.run
    for st in plan.states:
        run.leaders[st.key] = st.leader_id
        st.started = time.monotonic()
    live = [st for st in plan.states if st.status is None]
    if run.tail or plan.method is ScanMethod.FETCH_LOG:
        run.runner.spawn(live, tail_buckets(run, live))
    else:
        for st in live:
            scan_kv_ = plan.method is ScanMethod.SCAN_KV
            work = scan_kv(run, st) if scan_kv_ else limit_scan(run, st)
            run.runner.spawn([st], work)


def time_out_the_rest(plan: Plan) -> None:
    timed_out = RequestTimeoutError(f"the preview deadline of {plan.deadline_s}s passed")
    for st in plan.states:
        if st.status is None:
            st.finish(BucketStatus.TIMED_OUT, timed_out)


def build_report(plan: Plan, quota: Sequence[int], rows_returned: int) -> ScanReport:
    """The report of a finished preview; ``quota``: rows returned per bucket state."""
    states, info, run = plan.states, plan.info, plan.run
    rows_read = sum(st.rows for st in states)
    where = run.where
    pushed = where.pushed if where.filter is not None else None
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
            rows_scanned=st.scanned,
            skipped_offsets=st.skipped_offsets,
            skipped_runs=st.skipped_runs,
        )
        for st, q in zip(states, quota, strict=True)
    )
    return ScanReport(
        table_path=str(run.path),
        table_id=info.table_id,
        primary_key=info.is_pk_table,
        tail=run.tail,
        limit=run.limit,
        buckets=buckets,
        rows_returned=rows_returned,
        rows_read=rows_read,
        limit_cut=rows_read > rows_returned or any(b.limit_reached for b in buckets),
        elapsed_s=time.monotonic() - plan.started,
        deadline_s=plan.deadline_s,
        partitions=tuple(name for _, name in plan.chosen),
        partitions_skipped=tuple(plan.skipped),
        schema_ids=tuple(sorted(run.schema_ids_seen)),
        schema_id=info.schema_id,
        filter=str(where.filter) if where.filter is not None else None,
        rows_scanned=sum(st.scanned for st in states),
        filter_pushed=render(pushed) if pushed is not None and where.sent else None,
        filter_note=_filter_note(plan),
    )


def _filter_note(plan: Plan) -> str | None:
    """Why the filter did not go to the server (None: it did, or there is none)."""
    where = plan.run.where
    if where.filter is None or where.sent:
        return None
    if plan.method in (ScanMethod.SCAN_KV, ScanMethod.LIMIT_SCAN):
        return "key scans (ScanKv, LimitScan) carry no filter; the rows are filtered here"
    return where.note


def output_schema(plan: Plan) -> pa.Schema | RowsSchema:
    """The preview's columns: the table's (with Fluss types), then the added ones (light
    runs: a RowsSchema of Fluss types)."""
    any_log = plan.run.tail or not plan.info.is_pk_table
    return _output_schema(plan.run, log=any_log, partitioned=plan.partitioned)


def new_run(
    client: ScanClient,
    path: TablePath | tuple[str, str] | str,
    *,
    limit: int,
    tail: bool,
    deadline_s: float,
    max_partitions: int,
    batch_size_bytes: int,
    fetch_max_bytes: int,
    fetch_max_bytes_per_bucket: int,
    light: bool = False,
    where: str | Filter | None = None,
    check_filter: Callable[[Filter], None] | None = None,
    pushdown: bool = True,
) -> PreviewRun:
    check_arguments(
        limit,
        deadline_s,
        max_partitions,
        batch_size_bytes,
        fetch_max_bytes,
        fetch_max_bytes_per_bucket,
    )
    return PreviewRun(
        client,
        TablePath.of(path),
        limit=limit,
        tail=tail,
        deadline=Deadline(deadline_s),
        batch_size_bytes=batch_size_bytes,
        fetch_max_bytes=fetch_max_bytes,
        fetch_max_bytes_per_bucket=fetch_max_bytes_per_bucket,
        light=light,
        where=where,
        check_filter=check_filter,
        pushdown=pushdown,
    )


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
    where: str | Filter | None = None,
    check_filter: Callable[[Filter], None] | None = None,
    pushdown: bool = True,
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

    ``where``: a filter (:mod:`fluss_proto.filter`; text or parsed) the rows must match:
    a log table is then read whole (FetchLog from its start; its first ``limit`` matches per
    bucket kept, or its last with ``tail``), a primary-key table's scan reads on until
    ``limit`` rows match; rows are filtered exactly here, and on the 1.0 line the filter
    also goes with FetchLog so that the server skips batches its statistics rule out.
    :class:`~fluss_proto.errors.FilterError` is raised for a filter that does not fit the
    table; ``check_filter`` is called with the typed filter before anything is read;
    ``pushdown=False`` never sends the filter (every batch comes; for comparisons).

    The whole result is held in memory; :func:`~fluss_proto.scan.stream_preview` hands the
    rows out batch by batch instead.
    """
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
        where=where,
        check_filter=check_filter,
        pushdown=pushdown,
    )
    try:
        plan = await plan_preview(run, partition, max_partitions, deadline_s, started)
        spawn_workers(plan)
        await run.runner.run()
        time_out_the_rest(plan)
    finally:
        await run.runner.cancel_all()
        await wait_closers(run)
    table, quota = assemble(run, plan.states, limit, plan.partitioned)
    assert not isinstance(table, Rows)  # preview_table's run is never light
    report = build_report(plan, quota, table.num_rows)
    return Preview(table=table, report=report, info=plan.info)

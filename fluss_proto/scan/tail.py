"""FetchLog tail: ListOffsets per leader, then FetchLog per leader up to the latest offset."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto._replies import body_error, needs_refresh, opt
from fluss_proto.api_keys import ApiKey
from fluss_proto.error_codes import LeaderNotAvailableError
from fluss_proto.errors import FlussError
from fluss_proto.leaders import LIST_OFFSETS_KIND, BucketRef
from fluss_proto.model import EARLIEST, LATEST
from fluss_proto.scan.constants import (
    MAX_FETCH_BYTES_PER_BUCKET,
    MAX_FETCH_ROUNDS,
    MAX_STALLED_ROUNDS,
)
from fluss_proto.scan.report import BucketStatus
from fluss_proto.scan.run import PreviewRun
from fluss_proto.scan.runner import BucketState


async def tail_buckets(run: PreviewRun, states: Sequence[BucketState]) -> None:
    """ListOffsets LATEST + EARLIEST (grouped per leader), then FetchLog per leader."""
    assert run.info is not None
    refs = [
        BucketRef(
            run.path,
            run.info.table_id,
            st.partition_id,
            st.partition_name,
            st.bucket_id,
            st.leader_id,
        )
        for st in states
    ]
    for st in states:
        st.requests += 2
    outcomes = await run.admin.leader_calls(LIST_OFFSETS_KIND, refs, [LATEST, EARLIEST])
    by_leader: dict[int, list[BucketState]] = defaultdict(list)
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
        # A filter reads the whole log (its matches may be anywhere).
        st.start_offset = start_of_log if run.where.active else max(start_of_log, end - run.limit)
        st.limit_reached = st.start_offset > start_of_log
        st.next_offset = st.start_offset
        st.fetch_bytes = run.fetch_max_bytes_per_bucket
        if st.start_offset >= end:
            st.finish(BucketStatus.EMPTY)
            continue
        assert st.leader_id is not None
        by_leader[st.leader_id].append(st)
    for node, group in by_leader.items():
        run.runner.spawn(group, _fetch_loop(run, node, group))


async def _fetch_loop(run: PreviewRun, node: int, states: list[BucketState]) -> None:
    assert run.info is not None
    server = run.server(node)
    for _ in range(MAX_FETCH_ROUNDS):
        active = [st for st in states if st.status is None]
        if not active:
            return
        active.sort(key=lambda st: not st.stalled)  # a stalled bucket goes first
        table_req = pb.PbFetchLogReqForTable(
            table_id=run.info.table_id, projection_pushdown_enabled=False
        )
        pushed = run.where.for_server(run.versions_of(node))
        if pushed is not None:  # the 1.0 line: the server skips batches ruled out
            table_req.filter_predicate.CopyFrom(pushed)
            table_req.filter_schema_id = run.info.schema_id
        for st in active:
            item = table_req.buckets_req.add(
                bucket_id=st.bucket_id,
                fetch_offset=st.next_offset,
                max_fetch_bytes=st.fetch_bytes,
            )
            if st.partition_id is not None:
                item.partition_id = st.partition_id
        req = pb.FetchLogRequest(
            follower_server_id=-1, max_bytes=run.fetch_max_bytes, tables_req=[table_req]
        )
        for st in active:
            st.requests += 1
        try:
            resp = await run.call(None, ApiKey.FETCH_LOG, req, node)
        except FlussError as exc:
            if needs_refresh(exc):
                await _move_fetches(run, active, exc)
                return
            raise
        answered: set[tuple[int | None, int]] = set()
        moved: list[BucketState] = []
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
                await _fetched(run, state, b, node, filtered=pushed is not None)
        for st in active:
            if st.key not in answered and st.status is None:
                st.finish(
                    BucketStatus.FAILED,
                    FlussError(f"FetchLog reply from {server} did not mention {st.label}"),
                )
        if moved:
            await _move_fetches(run, moved, None)
    for st in states:
        st.finish(
            BucketStatus.FAILED,
            FlussError(f"gave up after {MAX_FETCH_ROUNDS} FetchLog rounds"),
        )


def _count_skipped(
    st: BucketState,
    ranges: list[tuple[int, int]],
    next_offset: int | None,
    filtered_end: int | None,
) -> int | None:
    """A filtered FetchLog reply: the offsets between the batches it returned (and up to
    its ``filtered_end_offset``) are batches the server left out. Counts them (up to the
    scan's end) and returns where the next fetch starts."""
    end = st.end_offset if st.end_offset is not None else 2**63 - 1
    cursor = st.next_offset
    for base, after in ranges:
        if base > cursor:
            st.skipped_offsets += min(base, end) - cursor
            st.skipped_runs += 1
        cursor = max(cursor, after)
    if filtered_end is not None and filtered_end > cursor:
        if cursor < end:
            st.skipped_offsets += min(filtered_end, end) - cursor
            st.skipped_runs += 1
        cursor = filtered_end
    if cursor > st.next_offset and (next_offset is None or cursor > next_offset):
        return cursor
    return next_offset


async def _move_fetches(run: PreviewRun, states: list[BucketState], exc: FlussError | None) -> None:
    """The leader moved (or its connection failed): refresh once, go on elsewhere."""
    regroup: dict[int, list[BucketState]] = defaultdict(list)
    for st in states:
        if st.status is not None:
            continue
        if await run.move_leader(st):
            assert st.leader_id is not None
            regroup[st.leader_id].append(st)
        else:
            st.finish(
                BucketStatus.FAILED,
                exc or LeaderNotAvailableError(f"{st.label}: no leader after a refresh"),
            )
    for node, group in regroup.items():
        run.runner.spawn(group, _fetch_loop(run, node, group))


async def _fetched(
    run: PreviewRun,
    st: BucketState,
    b: pb.PbFetchLogRespForBucket,
    node: int,
    *,
    filtered: bool = False,
) -> None:
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
    ranges: list[tuple[int, int]] | None = [] if filtered else None
    table, next_offset, leftover = await run.decode_log(
        records, st, node, min_offset=st.next_offset, end_offset=st.end_offset, ranges=ranges
    )
    if ranges is not None:
        next_offset = _count_skipped(st, ranges, next_offset, opt(b, "filtered_end_offset"))
    await run.deliver(st, table)
    if not st.keep_last and st.rows >= run.limit:  # a filtered read keeps its first matches
        st.limit_reached = True
        st.done_reading()
        return
    if next_offset is not None and next_offset > st.next_offset:
        st.next_offset = next_offset
        st.fetch_bytes = run.fetch_max_bytes_per_bucket
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
    elif st.idle_rounds >= MAX_STALLED_ROUNDS:
        hw = opt(b, "high_watermark")
        st.detail = (
            f"no records returned from offset {st.next_offset} (high watermark {hw}; "
            "tiered to a lake, or a batch larger than "
            f"{MAX_FETCH_BYTES_PER_BUCKET} bytes?)"
        )
        st.finish(BucketStatus.FAILED, FlussError(st.detail))

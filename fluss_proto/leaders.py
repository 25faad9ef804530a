"""Leader-routed requests (ListOffsets, GetTableStats): group buckets per leader, ask all
leaders at once, keep errors per bucket, retry stale-metadata failures once.

A bucket whose error means "your metadata is stale" (NOT_LEADER_OR_FOLLOWER 12,
UNKNOWN_TABLE_OR_BUCKET 21, LEADER_NOT_AVAILABLE 44, a lost connection or an unknown node)
is asked again after one concurrent metadata refresh of the tables concerned; a bucket
still failing keeps its typed error.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, Protocol

from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto._replies import as_fluss_error, body_error, needs_refresh, opt
from fluss_proto.api_keys import ApiKey
from fluss_proto.catalog import metadata_request
from fluss_proto.client import CallItem
from fluss_proto.cluster import (
    BucketMetadata,
    PartitionMetadata,
    TableMetadata,
    TablePath,
    parse_metadata,
)
from fluss_proto.error_codes import (
    LeaderNotAvailableError,
    UnknownTableOrBucketError,
)
from fluss_proto.errors import FlussError, NoBucketAnswerError
from fluss_proto.model import AtTimestamp, BucketOffset, OffsetSpec

__all__ = [
    "LIST_OFFSETS_KIND",
    "TABLE_STATS_KIND",
    "BucketRef",
    "LeaderKind",
    "LeaderOutcome",
    "NoBucketAnswerError",
    "Placement",
    "bucket_offset",
    "leader_calls",
    "select_buckets",
]

#: (variant index, (table_id, partition_id, bucket_id)) -> outcome
Outcomes = dict[tuple[int, tuple[int, int | None, int]], "LeaderOutcome"]


class Batcher(Protocol):
    """What the leader calls need from :class:`~fluss_proto.admin.FlussAdmin`."""

    async def batch(self, items: Sequence[CallItem]) -> list[Any]: ...

    def server_label(self, node: int | str | None) -> str: ...


@dataclass(frozen=True, slots=True)
class BucketRef:
    """One bucket to ask a leader about."""

    path: TablePath
    table_id: int
    partition_id: int | None
    partition_name: str | None
    bucket_id: int
    leader_id: int | None

    @property
    def key(self) -> tuple[int, int | None, int]:
        return (self.table_id, self.partition_id, self.bucket_id)


class LeaderOutcome(NamedTuple):  # a tuple: thousands are built per gather
    leader_id: int | None
    value: Any
    error: FlussError | None


@dataclass(frozen=True, slots=True)
class Placement:
    """GetMetadata result for one table and the partitions asked for."""

    table: TableMetadata
    partitions: tuple[PartitionMetadata, ...]
    partitioned: bool

    def refs(self) -> list[BucketRef]:
        if not self.partitioned:
            return [
                _ref(self.table.path, self.table.table_id, None, None, b)
                for b in self.table.buckets
            ]
        return [
            _ref(self.table.path, self.table.table_id, p.partition_id, p.partition_name, b)
            for p in self.partitions
            for b in p.buckets
        ]


def _ref(
    path: TablePath, table_id: int, pid: int | None, pname: str | None, b: BucketMetadata
) -> BucketRef:
    return BucketRef(path, table_id, pid, pname, b.bucket_id, b.leader_id)


class LeaderKind:
    """How one leader-routed API is grouped, built and parsed."""

    api: ApiKey

    def group(self, ref: BucketRef) -> Hashable:
        raise NotImplementedError

    def build(self, refs: Sequence[BucketRef], variant: Any) -> Message:
        raise NotImplementedError

    def parse(
        self, resp: Message, refs: Sequence[BucketRef], server: str
    ) -> dict[tuple[int, int | None, int], tuple[Any, FlussError | None]]:
        raise NotImplementedError


class ListOffsetsKind(LeaderKind):
    api = ApiKey.LIST_OFFSETS

    def group(self, ref: BucketRef) -> Hashable:
        return (ref.table_id, ref.partition_id)

    def build(self, refs: Sequence[BucketRef], variant: OffsetSpec) -> Message:
        first = refs[0]
        req = pb.ListOffsetsRequest(
            follower_server_id=-1,
            offset_type=variant.offset_type,
            table_id=first.table_id,
            bucket_id=[r.bucket_id for r in refs],
        )
        if first.partition_id is not None:
            req.partition_id = first.partition_id
        if isinstance(variant, AtTimestamp):
            req.startTimestamp = variant.ms
        return req

    def parse(
        self, resp: Message, refs: Sequence[BucketRef], server: str
    ) -> dict[tuple[int, int | None, int], tuple[Any, FlussError | None]]:
        assert isinstance(resp, pb.ListOffsetsResponse)
        first = refs[0]
        out: dict[tuple[int, int | None, int], tuple[Any, FlussError | None]] = {}
        for b in resp.buckets_resp:
            key = (first.table_id, first.partition_id, b.bucket_id)
            failure = body_error(b, self.api, server)
            if failure is not None:
                out[key] = (None, failure)
            elif b.HasField("offset"):
                out[key] = (b.offset, None)
        return out


class TableStatsKind(LeaderKind):
    api = ApiKey.GET_TABLE_STATS

    def group(self, ref: BucketRef) -> Hashable:
        return ref.table_id

    def build(self, refs: Sequence[BucketRef], variant: Any) -> Message:
        req = pb.GetTableStatsRequest(table_id=refs[0].table_id)
        for r in refs:
            item = req.buckets_req.add(bucket_id=r.bucket_id)
            if r.partition_id is not None:
                item.partition_id = r.partition_id
        return req

    def parse(
        self, resp: Message, refs: Sequence[BucketRef], server: str
    ) -> dict[tuple[int, int | None, int], tuple[Any, FlussError | None]]:
        assert isinstance(resp, pb.GetTableStatsResponse)
        table_id = refs[0].table_id
        out: dict[tuple[int, int | None, int], tuple[Any, FlussError | None]] = {}
        for b in resp.buckets_resp:
            key = (table_id, opt(b, "partition_id"), b.bucket_id)
            failure = body_error(b, self.api, server)
            if failure is not None:
                out[key] = (None, failure)
            else:
                out[key] = (opt(b, "row_count"), None)
        return out


def select_buckets(placement: Placement, buckets: Iterable[int] | None) -> list[BucketRef]:
    refs = placement.refs()
    if buckets is None:
        return refs
    wanted = list(dict.fromkeys(int(b) for b in buckets))
    known = {(r.partition_id, r.bucket_id): r for r in refs}
    out: list[BucketRef] = []
    parts: list[tuple[int | None, str | None]] = (
        [(p.partition_id, p.partition_name) for p in placement.partitions]
        if placement.partitioned
        else [(None, None)]
    )
    for pid, pname in parts:
        for b in wanted:
            ref = known.get((pid, b))
            if ref is None:  # not in the metadata: asked with no leader -> typed error
                ref = BucketRef(placement.table.path, placement.table.table_id, pid, pname, b, None)
            out.append(ref)
    return out


def bucket_offset(ref: BucketRef, outcome: LeaderOutcome | None) -> BucketOffset:
    if outcome is None:  # pragma: no cover - every job gets an outcome
        outcome = LeaderOutcome(ref.leader_id, None, UnknownTableOrBucketError("no outcome"))
    return BucketOffset(
        table_id=ref.table_id,
        partition_id=ref.partition_id,
        bucket_id=ref.bucket_id,
        leader_id=outcome.leader_id,
        offset=outcome.value,
        error=outcome.error,
    )


LIST_OFFSETS_KIND: LeaderKind = ListOffsetsKind()
TABLE_STATS_KIND: LeaderKind = TableStatsKind()


async def leader_calls(
    admin: Batcher,
    kind: LeaderKind,
    refs: Sequence[BucketRef],
    variants: Sequence[Any] = (None,),
) -> Outcomes:
    """Ask each bucket's leader, grouped per leader, once per variant, concurrently.

    Returns ``(variant index, (table_id, partition_id, bucket_id)) -> outcome``.
    Stale-metadata failures are retried once after a metadata refresh.
    """
    jobs = [(i, ref) for i in range(len(variants)) for ref in refs]
    outcomes, retry = await _leader_round(admin, kind, jobs, variants)
    if retry:
        leaders = await _fresh_leaders(admin, [ref for _, ref in retry])
        again = [
            (i, replace(ref, leader_id=leaders[ref.key])) for i, ref in retry if ref.key in leaders
        ]
        if again:
            second, _ = await _leader_round(admin, kind, again, variants)
            outcomes.update(second)
    return outcomes


async def _leader_round(
    admin: Batcher,
    kind: LeaderKind,
    jobs: Sequence[tuple[int, BucketRef]],
    variants: Sequence[Any],
) -> tuple[
    Outcomes,
    list[tuple[int, BucketRef]],
]:
    outcomes: Outcomes = {}
    retry: list[tuple[int, BucketRef]] = []
    groups: dict[tuple[int, int, Hashable], list[BucketRef]] = defaultdict(list)
    for i, ref in jobs:
        if ref.leader_id is None:
            err = LeaderNotAvailableError(
                f"bucket {ref.bucket_id} of {ref.path} has no leader in the metadata",
                api=kind.api.name,
            )
            outcomes[(i, ref.key)] = LeaderOutcome(None, None, err)
            retry.append((i, ref))
            continue
        groups[(i, ref.leader_id, kind.group(ref))].append(ref)
    order = list(groups)
    results = await admin.batch(
        [CallItem(g[1], kind.api, kind.build(groups[g], variants[g[0]])) for g in order]
    )
    labels: dict[int, str] = {}
    for g, result in zip(order, results, strict=True):
        i, leader, _ = g
        refs = groups[g]
        if isinstance(result, BaseException):
            failure = as_fluss_error(result)
            for ref in refs:
                outcomes[(i, ref.key)] = LeaderOutcome(leader, None, failure)
                if needs_refresh(failure):
                    retry.append((i, ref))
            continue
        server = labels.get(leader)
        if server is None:
            server = labels[leader] = admin.server_label(leader)
        try:
            answers = kind.parse(result, refs, server)
        except FlussError as exc:
            answers = {ref.key: (None, exc) for ref in refs}
        for ref in refs:
            key = ref.key
            answer = answers.get(key)
            if answer is None:
                answer = (
                    None,
                    NoBucketAnswerError(
                        f"{kind.api.name} reply from {server} did not mention bucket "
                        f"{ref.bucket_id} of {ref.path}"
                    ),
                )
            outcomes[(i, key)] = LeaderOutcome(leader, *answer)
            if answer[1] is not None and needs_refresh(answer[1]):
                retry.append((i, ref))
    return outcomes, retry


async def _fresh_leaders(
    admin: Batcher, refs: Sequence[BucketRef]
) -> dict[tuple[int, int | None, int], int | None]:
    """Current leaders of ``refs``: one GetMetadata per table, all at once.

    Buckets whose table (or partition) could not be refreshed are left out.
    """
    per_table: dict[TablePath, set[int]] = defaultdict(set)
    for ref in refs:
        ids = per_table[ref.path]
        if ref.partition_id is not None:
            ids.add(ref.partition_id)
    paths = list(per_table)
    results = await admin.batch(
        [
            CallItem(
                None,
                ApiKey.GET_METADATA,
                metadata_request([p], partition_ids=sorted(per_table[p])),
            )
            for p in paths
        ]
    )
    leaders: dict[tuple[int, int | None, int], int | None] = {}
    for result in results:
        if isinstance(result, BaseException):
            continue
        reply = parse_metadata(result)
        for t in reply.tables.values():
            for b in t.buckets:
                leaders[(t.table_id, None, b.bucket_id)] = b.leader_id
        for p in reply.partitions.values():
            for b in p.buckets:
                leaders[(p.table_id, p.partition_id, b.bucket_id)] = b.leader_id
    return leaders

"""gather_cluster's offsets planner: one FetchLog per leader for the latest offsets
(ListOffsets where FetchLog cannot answer, and for the earliest), and what their answers
add to the gather's state.

Part of :mod:`fluss_proto.gather`.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto._replies import as_fluss_error, body_error, needs_refresh, opt
from fluss_proto.admin import FlussAdmin
from fluss_proto.api_keys import ApiKey
from fluss_proto.error_codes import (
    LeaderNotAvailableError,
)
from fluss_proto.errors import FlussError, RequestTimeoutError
from fluss_proto.gather.state import (
    _EARLIEST,
    _FROM_EARLIEST,
    _LATEST,
    _OFFSETS,
    GatherState,
    Key,
    _no_answer,
    _Placement,
    _Round,
)


class OffsetsPlanner:
    """Plans the offset requests of each round and takes their answers into ``state``;
    ``admin`` names the servers in the errors."""

    def __init__(self, state: GatherState, admin: FlussAdmin) -> None:
        self._state = state
        self._admin = admin

    def plan(self, batch: _Round, dbs: Sequence[str]) -> None:
        """Add the offset requests of every bucket whose leader is known and whose offsets
        are missing."""
        # leader -> table id -> asked keys (thousands per round: kept lean)
        fetch: dict[int, dict[int, list[Key]]] = defaultdict(lambda: defaultdict(list))
        listing: dict[tuple[int, int, int, int | None], list[int]] = defaultdict(list)
        latest, earliest = self._state.answers[_LATEST], self._state.answers[_EARLIEST]
        by_list_offsets, want_earliest, pending = (
            self._state.by_list_offsets,
            self._state.want_earliest,
            self._state.pending,
        )
        for place in self._state.placements(dbs):
            table_id, pid = place.table_id, place.partition_id
            if (place.path, pid) in pending:
                continue  # fresh leaders are on their way
            for bucket_id, leader in place.leaders():
                key = (table_id, pid, bucket_id)
                if leader is None:
                    if place.fresh:
                        self._no_leader(place, key)
                    continue
                if key not in latest:
                    if key in by_list_offsets:
                        listing[(_LATEST, leader, table_id, pid)].append(bucket_id)
                    else:
                        fetch[leader][table_id].append(key)
                if want_earliest and key not in earliest:
                    listing[(_EARLIEST, leader, table_id, pid)].append(bucket_id)
        guessed = self._state.guide.latest
        for leader, tables in fetch.items():
            # min_bytes must be set for max_wait_ms to count (else the server waits)
            req = pb.FetchLogRequest(follower_server_id=-1, max_bytes=0, min_bytes=0, max_wait_ms=0)
            asked: list[Key] = []
            for table_id, keys in tables.items():
                add = req.tables_req.add(
                    table_id=table_id, projection_pushdown_enabled=False
                ).buckets_req.add
                for key in keys:
                    offset = guessed.get(key, _FROM_EARLIEST)
                    if key[1] is None:
                        add(bucket_id=key[2], fetch_offset=offset, max_fetch_bytes=0)
                    else:
                        add(
                            partition_id=key[1],
                            bucket_id=key[2],
                            fetch_offset=offset,
                            max_fetch_bytes=0,
                        )
                asked += keys
            batch.add(
                _OFFSETS,
                leader,
                ApiKey.FETCH_LOG,
                req,
                functools.partial(self._on_fetch, leader, asked),
            )
        for (kind, leader, table_id, pid), bucket_ids in listing.items():
            req = pb.ListOffsetsRequest(
                follower_server_id=-1, offset_type=kind, table_id=table_id, bucket_id=bucket_ids
            )
            if pid is not None:
                req.partition_id = pid
            batch.add(
                _OFFSETS,
                leader,
                ApiKey.LIST_OFFSETS,
                req,
                functools.partial(self._on_list_offsets, kind, leader, table_id, pid, bucket_ids),
            )

    def _no_leader(self, place: _Placement, key: Key) -> None:
        err = LeaderNotAvailableError(
            f"bucket {key[2]} of {place.path} has no leader in the metadata",
            api=ApiKey.LIST_OFFSETS.name,
        )
        for kind in self._kinds():
            self._state.answers[kind].setdefault(key, (None, None, err))

    def _kinds(self) -> tuple[int, ...]:
        return (_LATEST, _EARLIEST) if self._state.want_earliest else (_LATEST,)

    def _on_fetch(self, leader: int, asked: list[Key], result: Any) -> None:
        if isinstance(result, BaseException):
            err = as_fluss_error(result)
            for key in asked:
                self._fetch_failed(leader, key, err)
            return
        server = self._admin.server_label(leader)
        answered = 0
        for tr in result.tables_resp:
            table_id = tr.table_id
            for b in tr.buckets_resp:
                key = (table_id, opt(b, "partition_id"), b.bucket_id)
                failure = body_error(b, ApiKey.FETCH_LOG, server)
                if failure is not None:
                    self._fetch_failed(leader, key, failure)
                elif b.HasField("high_watermark"):
                    self._take(_LATEST, leader, key, b.high_watermark, None)
                else:
                    self._fetch_failed(leader, key, _no_answer(ApiKey.FETCH_LOG, server, key))
                answered += 1
        if answered != len(asked):  # a bucket the reply did not mention
            for key in set(asked) - self._mentioned(result):
                self._fetch_failed(leader, key, _no_answer(ApiKey.FETCH_LOG, server, key))

    @staticmethod
    def _mentioned(result: pb.FetchLogResponse) -> set[Key]:
        return {
            (tr.table_id, opt(b, "partition_id"), b.bucket_id)
            for tr in result.tables_resp
            for b in tr.buckets_resp
        }

    def _fetch_failed(self, leader: int, key: Key, err: FlussError) -> None:
        if needs_refresh(err) or isinstance(err, RequestTimeoutError):
            # a leader that did not answer in time is not asked again in this gather
            self._take(_LATEST, leader, key, None, err)
        elif key in self._state.leaders:
            # e.g. no READ permission, or our fetch offset out of range: ask ListOffsets
            # LATEST (DESCRIBE is enough) next round.
            self._state.by_list_offsets.add(key)

    def _on_list_offsets(
        self,
        kind: int,
        leader: int,
        table_id: int,
        pid: int | None,
        bucket_ids: list[int],
        result: Any,
    ) -> None:
        server = self._admin.server_label(leader)
        got: dict[int, tuple[int | None, FlussError | None]] = {}
        if isinstance(result, BaseException):
            err = as_fluss_error(result)
            got = {b: (None, err) for b in bucket_ids}
        else:
            for b in result.buckets_resp:
                failure = body_error(b, ApiKey.LIST_OFFSETS, server)
                if failure is not None:
                    got[b.bucket_id] = (None, failure)
                elif b.HasField("offset"):
                    got[b.bucket_id] = (b.offset, None)
        for bucket_id in bucket_ids:
            key = (table_id, pid, bucket_id)
            value, failure = got.get(bucket_id, (None, None))
            if failure is None and value is None:
                failure = _no_answer(ApiKey.LIST_OFFSETS, server, key)
            self._take(kind, leader, key, value, failure)

    def _take(
        self, kind: int, asked: int, key: Key, value: int | None, err: FlussError | None
    ) -> None:
        """Keep an offset answer if ``asked`` is the bucket's leader in fresh metadata."""
        place = self._state.leaders.get(key)
        if place is None or place[2] != asked:
            # the table or partition is gone, or the guessed leader moved: the next round
            # asks the new one
            return
        if needs_refresh(err) and self._state.refresh_once(place[0], place[1]):
            return  # asked again once fresh metadata is in
        self._state.answers[kind][key] = (asked, value, err)

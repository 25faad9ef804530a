"""gather_cluster's state: what one gather has learnt so far, and what it may guess.

Part of :mod:`fluss_proto.gather`: the gather and its two planners share one
:class:`GatherState` (the planners write the answers into it, the gather reads it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.admin import AdminClient
from fluss_proto.api_keys import ApiKey
from fluss_proto.catalog import (
    server_info,
)
from fluss_proto.client import CallItem
from fluss_proto.cluster import (
    BucketMetadata,
    PartitionMetadata,
    ServerNode,
    TableMetadata,
    TablePath,
)
from fluss_proto.errors import FlussError
from fluss_proto.model import (
    ClusterView,
    GatherError,
    PartitionInfo,
    ServerInfo,
)
from fluss_proto.types import TableInfo

#: Most rounds one gather runs; whatever is still unanswered then is reported as an error.
MAX_ROUNDS = 10
#: ListOffsets offset types.
_EARLIEST, _LATEST = 0, 1
#: Phase of the offset requests (the catalog ones come before: 0 servers .. 4 partitions).
_OFFSETS = 5
#: FetchLog's "from the earliest offset" (used when no offset of the bucket is known).
_FROM_EARLIEST = -2

Key = tuple[int, int | None, int]  # (table_id, partition_id, bucket_id)
_Answer = tuple[int | None, int | None, FlussError | None]  # (asked node, value, error)


@dataclass
class _Guide:
    """What a previous view knew, as guesses for round 1."""

    databases: tuple[str, ...] = ()
    tables: dict[str, list[TablePath]] = field(default_factory=dict)
    table_ids: dict[TablePath, int] = field(default_factory=dict)
    partitioned: set[TablePath] = field(default_factory=set)
    partitions: dict[TablePath, list[int]] = field(default_factory=dict)
    #: (table path, partition id) -> [(bucket id, leader)]
    buckets: dict[tuple[TablePath, int | None], list[tuple[int, int | None]]] = field(
        default_factory=dict
    )
    latest: dict[Key, int] = field(default_factory=dict)

    @classmethod
    def of(cls, view: ClusterView | None) -> _Guide:
        guide = cls()
        if view is None:
            return guide
        guide.databases = view.databases
        for t in view.tables:
            if t.table_id is None or t.error is not None:
                continue
            guide.tables.setdefault(t.path.database, []).append(t.path)
            guide.table_ids[t.path] = t.table_id
            if t.info is not None and t.info.is_partitioned:
                guide.partitioned.add(t.path)
                guide.partitions[t.path] = [p.partition_id for p in t.partitions]
            for b in t.buckets:
                guide.buckets.setdefault((t.path, b.partition_id), []).append(
                    (b.bucket_id, b.leader_id)
                )
                if b.latest_offset is not None:
                    guide.latest[(b.table_id, b.partition_id, b.bucket_id)] = b.latest_offset
        return guide


class _Round:
    """The requests of one round, each with the phase and function that take its answer."""

    def __init__(self) -> None:
        self.requests: list[CallItem] = []
        self.handlers: list[tuple[int, Callable[[Any], None]]] = []

    def add(
        self,
        phase: int,
        target: int | str | None,
        api: ApiKey,
        request: Message,
        handler: Callable[[Any], None],
    ) -> None:
        self.requests.append(CallItem(target, api, request))
        self.handlers.append((phase, handler))


@dataclass
class _Placement:
    """The buckets of one table, or of one partition of a partitioned table."""

    path: TablePath
    table_id: int
    partition_id: int | None
    buckets: Sequence[BucketMetadata] | Sequence[tuple[int, int | None]]
    fresh: bool

    def leaders(self) -> Iterable[tuple[int, int | None]]:
        if self.fresh:
            return ((b.bucket_id, b.leader_id) for b in self.buckets)  # type: ignore[union-attr]
        return self.buckets  # type: ignore[return-value]


class GatherState:
    """The facts of one gather (fresh answers first, the guide where they are missing)."""

    def __init__(self, previous: ClusterView | None, offsets: bool, earliest: bool) -> None:
        self.guide = _Guide.of(previous)
        self.want_offsets = offsets
        self.want_earliest = offsets and earliest
        self.errors: list[GatherError] = []
        # ---- fresh facts of this gather
        self.databases: tuple[str, ...] | None = None
        self.listed: dict[str, tuple[TablePath, ...]] = {}
        self.listed_paths: set[TablePath] = set()
        self.db_errors: dict[str, FlussError] = {}
        self.md: dict[TablePath, TableMetadata] = {}
        #: (table id, partition id, bucket id) -> (path, partition id, leader), from fresh
        #: metadata of current tables and partitions: what offset answers are checked with
        self.leaders: dict[Key, tuple[TablePath, int | None, int | None]] = {}
        self.infos: dict[TablePath, TableInfo | None] = {}
        self.table_errors: dict[TablePath, FlussError] = {}
        self.parts: dict[TablePath, tuple[PartitionInfo, ...]] = {}
        self.part_md: dict[TablePath, dict[int, PartitionMetadata | FlussError]] = {}
        self.answers: dict[int, dict[Key, _Answer]] = {_LATEST: {}, _EARLIEST: {}}
        self.servers: tuple[ServerNode | None, dict[int, ServerNode]] | None = None
        self.versions: dict[tuple[str, str], Any] = {}
        # ---- bookkeeping for the next rounds
        self.round = 0
        self.md_alone: set[TablePath] = set()  # ask alone: its chunk failed
        self.md_any_server = False  # the coordinator failed a GetMetadata
        self.parts_alone: set[TablePath] = set()  # partition GetMetadata per table
        self.part_alone: set[tuple[TablePath, int]] = set()  # ... and per partition
        # placements (table, or partition) asked again once for stale leaders; pending =
        # the fresh reply has not arrived yet (their offsets wait for it)
        self.refreshed: set[tuple[TablePath, int | None]] = set()
        self.pending: set[tuple[TablePath, int | None]] = set()
        self.by_list_offsets: set[Key] = set()  # latest via ListOffsets, not FetchLog

    # ---- what is known: fresh facts first, the guide where they are missing

    def effective_databases(self) -> Sequence[str]:
        if self.databases is not None:
            return self.databases
        return self.guide.databases if self.round == 0 else ()

    def effective_tables(self, db: str) -> Sequence[TablePath]:
        if db in self.listed:
            return self.listed[db]
        if db in self.db_errors or self.round > 0:
            return ()
        return self.guide.tables.get(db, ())

    def is_partitioned(self, path: TablePath) -> bool | None:
        if path in self.md:
            info = self.infos.get(path)
            # an unreadable table JSON: its table-level buckets (if any) are still read
            return info.is_partitioned if info is not None else False
        if path in self.table_errors or path not in self.guide.table_ids:
            return None
        return path in self.guide.partitioned

    def effective_partitions(self, path: TablePath) -> Sequence[int]:
        if path in self.parts:
            return [p.partition_id for p in self.parts[path]]
        if path in self.table_errors:
            return ()
        return self.guide.partitions.get(path, ())

    def placements(self, dbs: Sequence[str]) -> Iterable[_Placement]:
        """Every bucket group whose leaders are known (fresh) or guessed (guide)."""
        for db in dbs:
            for path in self.effective_tables(db):
                if path in self.table_errors and path not in self.md:
                    continue
                partitioned = self.is_partitioned(path)
                md = self.md.get(path)
                if partitioned is None:
                    continue
                if not partitioned:
                    if md is not None:
                        yield _Placement(path, md.table_id, None, md.buckets, True)
                    elif path in self.guide.table_ids:
                        guessed = self.guide.buckets.get((path, None), [])
                        yield _Placement(path, self.guide.table_ids[path], None, guessed, False)
                    continue
                table_id = md.table_id if md is not None else self.guide.table_ids.get(path)
                if table_id is None:
                    continue
                fresh = self.part_md.get(path, {})
                for pid in self.effective_partitions(path):
                    got = fresh.get(pid)
                    if isinstance(got, PartitionMetadata):
                        yield _Placement(path, table_id, pid, got.buckets, True)
                    elif got is None:
                        guessed = self.guide.buckets.get((path, pid), [])
                        yield _Placement(path, table_id, pid, guessed, False)

    def is_listed(self, path: TablePath) -> bool:
        """Whether this gather's own ListTables names ``path``."""
        return path in self.listed_paths

    def partition_current(self, path: TablePath, pid: int) -> bool:
        """Whether this gather's own ListPartitionInfos names partition ``pid``."""
        return path in self.parts and any(p.partition_id == pid for p in self.parts[path])

    def unfinished(self) -> bool:
        """Whether anything current still lacks an answer (a new database, table or
        partition, a placement being refreshed, a bucket without its offsets)."""
        if self.pending:
            return True
        for db in self.databases or ():
            if db not in self.listed:
                if db not in self.db_errors:
                    return True
                continue
            for path in self.listed[db]:
                if path in self.table_errors:
                    continue
                if path not in self.md:
                    return True
                if self.is_partitioned(path):
                    if path not in self.parts:
                        return True
                    done = self.part_md.get(path, {})
                    if any(p.partition_id not in done for p in self.parts[path]):
                        return True
        if self.want_offsets:
            if self.leaders.keys() - self.answers[_LATEST].keys():
                return True
            if self.want_earliest and self.leaders.keys() - self.answers[_EARLIEST].keys():
                return True
        return False

    def refresh_once(self, path: TablePath, pid: int | None) -> bool:
        """Ask the placement of ``path`` (or of its partition ``pid``) again, alone, in the
        next round; its offsets wait for the reply. Once per placement per gather."""
        if (path, pid) in self.refreshed:
            return False
        self.refreshed.add((path, pid))
        self.pending.add((path, pid))
        if pid is not None:
            self.part_alone.add((path, pid))
        return True


def _no_answer(api: ApiKey, server: str, key: Key) -> FlussError:
    table_id, pid, bucket_id = key
    where = f"table {table_id}" + (f" partition {pid}" if pid is not None else "")
    return FlussError(
        f"{api.name} reply from {server} did not mention bucket {bucket_id} of {where}"
    )


def _servers(
    client: AdminClient,
    fresh: tuple[ServerNode | None, dict[int, ServerNode]] | None,
    versions: Mapping[tuple[str, str], Any],
    errors: list[GatherError],
) -> tuple[ServerInfo | None, tuple[ServerInfo, ...]]:
    """Servers from this gather's metadata (the client's cache if none arrived), each with
    the ApiVersions reply of round 1, or the client's recorded one for a newcomer."""
    if fresh is not None:
        coordinator, tablets = fresh
    else:
        coordinator, tablets = client.metadata.coordinator, dict(client.metadata.tablet_servers)
    recorded: Mapping[str, Any] = getattr(client, "api_versions", {}) or {}

    def info(role: str, node: ServerNode) -> ServerInfo:
        result = versions.get((role, node.address))
        if result is None and node.address in recorded:
            rec = recorded[node.address]
            result = pb.ApiVersionsResponse(
                api_versions=[
                    pb.PbApiVersion(api_key=k, min_version=lo, max_version=hi)
                    for k, (lo, hi) in sorted(rec.versions.items())
                ]
            )
            if rec.server_type is not None:
                result.server_type = rec.server_type
        server = server_info(role, node, result)
        if server.error is not None:
            errors.append(GatherError("server", server.address, "API_VERSIONS", server.error))
        return server

    coord = info("coordinator", coordinator) if coordinator is not None else None
    return coord, tuple(info("tablet", tablets[n]) for n in sorted(tablets))

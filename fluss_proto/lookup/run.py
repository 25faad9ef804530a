"""Looking keys up: LOOKUP / PREFIX_LOOKUP to each bucket's leader, one request per leader.

:func:`lookup_rows` reads the table's metadata once (GetMetadata; for a partitioned table
ListPartitionInfos and the partitions' placement), types, encodes and places every key
(:mod:`.plan`), and sends each leader *one* request carrying every bucket and key it leads;
the leaders are asked at once (the requests to one server share its connection, pipelined).
The request version is negotiated from each server's ApiVersions by the client (LOOKUP and
PREFIX_LOOKUP 0..1 on Fluss 0.9.1 and the 1.0 line: version 1 is sent). The request never
carries ``insert_if_not_exists``: konsole's message has no such field.

A bucket whose leader moved (NOT_LEADER_OR_FOLLOWER and kin, a lost connection) is asked
again once after one shared metadata refresh; any other failure marks that bucket's keys
failed and the rest of the lookup goes on. A key whose partition does not exist is absent
(as Fluss's own lookuper answers; the report says why). Values are decoded with their own
schema and mapped onto the table's latest one (as a preview does), in key order.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto._replies import body_error, needs_refresh, opt
from fluss_proto.api_keys import ApiKey
from fluss_proto.cluster import TablePath
from fluss_proto.error_codes import LeaderNotAvailableError
from fluss_proto.errors import FlussError, NoBucketAnswerError, RequestTimeoutError
from fluss_proto.lookup.plan import KeyPlan, LookupSpec, lookup_spec, plan_keys
from fluss_proto.records.kv_batch import lookup_values_batch
from fluss_proto.scan.constants import (
    DEFAULT_FETCH_MAX_BYTES,
    DEFAULT_FETCH_MAX_BYTES_PER_BUCKET,
    DEFAULT_KV_BATCH_BYTES,
    MIN_REQUEST_TIMEOUT_S,
)
from fluss_proto.scan.rows import Rows, RowsSchema
from fluss_proto.scan.run import PreviewRun, ScanClient
from fluss_proto.scan.runner import Deadline
from fluss_proto.types import TableInfo

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["KeyResult", "KeyStatus", "Lookup", "LookupReport", "Lookuper", "lookup_rows"]

_Place = tuple[int | None, int]  # (partition id, bucket id)


class KeyStatus(StrEnum):
    FOUND = "found"
    ABSENT = "absent"
    #: The key's partition does not exist (so neither does the key).
    NO_PARTITION = "no such partition"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class KeyResult:
    """What became of one key."""

    index: int
    status: KeyStatus
    #: Rows found: 0 or 1 for a key, any number for a prefix.
    rows: int
    bucket: int
    partition: str | None
    leader_id: int | None
    error: FlussError | None = None
    #: The buckets the key's rows came from: two when the Java and the Rust clients'
    #: buckets for it both hold a row (two writers disagreed; see lookup.keys).
    found_in: tuple[int, ...] = ()

    @property
    def answered(self) -> bool:
        return self.status is not KeyStatus.FAILED


@dataclass(frozen=True, slots=True)
class LookupReport:
    table_path: str
    table_id: int
    prefix: bool
    keys: tuple[KeyResult, ...]
    #: LOOKUP / PREFIX_LOOKUP requests sent (one per leader, plus the ones after a refresh).
    requests: int
    #: Leader id -> the request version negotiated with it.
    versions: Mapping[int, int]
    elapsed_s: float

    def _count(self, status: KeyStatus) -> int:
        return sum(1 for k in self.keys if k.status is status)

    @property
    def found(self) -> int:
        return self._count(KeyStatus.FOUND)

    @property
    def absent(self) -> int:
        return self._count(KeyStatus.ABSENT) + self._count(KeyStatus.NO_PARTITION)

    @property
    def failed(self) -> int:
        return self._count(KeyStatus.FAILED)

    @property
    def rows(self) -> int:
        return sum(k.rows for k in self.keys)

    @property
    def complete(self) -> bool:
        """Every key was answered (found or absent), each from one bucket."""
        return all(k.answered and len(k.found_in) <= 1 for k in self.keys)

    @property
    def nothing_read(self) -> bool:
        return bool(self.keys) and not any(k.answered for k in self.keys)

    def summary_lines(self) -> list[str]:
        """One headline, then one line per key not found (named by its position only:
        a key may hold masked values)."""
        what = "prefix(es)" if self.prefix else "key(s)"
        head = (
            f"{self.table_path}: {len(self.keys)} {what} looked up, {self.found} found"
            f" ({self.rows} row(s)), {self.absent} absent"
        )
        if self.failed:
            head += f", {self.failed} failed"
        versions = sorted(set(self.versions.values()))
        api = "PrefixLookup" if self.prefix else "Lookup"
        head += (
            f"; {self.requests} {api} request(s)"
            f"{' v' + '/'.join(map(str, versions)) if versions else ''} in {self.elapsed_s:.2f}s"
        )
        lines = [head]
        for k in self.keys:
            if k.status is KeyStatus.FOUND and len(k.found_in) <= 1:
                continue
            text = f"  {'prefix' if self.prefix else 'key'} {k.index + 1}: {k.status}"
            if len(k.found_in) > 1:
                text += (
                    f" in buckets {' and '.join(map(str, k.found_in))}: the Java and the Rust "
                    "clients bucket this key differently and both wrote it"
                )
            if k.partition is not None:
                text += f" (partition {k.partition})"
            if k.error is not None:
                text += f": {k.error}"
            lines.append(text)
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table_path,
            "table_id": self.table_id,
            "mode": "prefix" if self.prefix else "key",
            "keys": len(self.keys),
            "found": self.found,
            "absent": self.absent,
            "failed": self.failed,
            "rows": self.rows,
            "requests": self.requests,
            "versions": {str(k): v for k, v in sorted(self.versions.items())},
            "elapsed_s": round(self.elapsed_s, 4),
            "results": [
                {
                    "key": k.index + 1,
                    "status": str(k.status),
                    "rows": k.rows,
                    "bucket": k.bucket,
                    "found_in": list(k.found_in),
                    "partition": k.partition,
                    "leader": k.leader_id,
                    **({"error": str(k.error)} if k.error is not None else {}),
                }
                for k in self.keys
            ],
        }


@dataclass(frozen=True, slots=True)
class Lookup:
    """The rows found (the table's columns, in key order) and what became of each key."""

    rows: pa.Table | Rows
    schema: pa.Schema | RowsSchema
    report: LookupReport
    info: TableInfo

    @property
    def light(self) -> bool:
        return isinstance(self.rows, Rows)


@dataclass
class _Key:
    """One probe: a key in one of the buckets it may live in (see ``KeyPlan.buckets``)."""

    plan: KeyPlan
    bucket: int
    partition_id: int | None = None
    leader_id: int | None = None
    status: KeyStatus | None = None
    error: FlussError | None = None
    values: tuple[bytes, ...] = ()
    #: To be asked again after the metadata refresh (no leader, or the leader moved).
    again: bool = False
    #: Has had its refresh already (a second move fails the key).
    moved: bool = False

    @property
    def place(self) -> _Place:
        return (self.partition_id, self.bucket)


class Lookuper:
    """Lookups on one table, again and again: the table's metadata, key columns, leaders,
    partitions and schemas are read once (:meth:`open`) and kept, as pyfluss's lookuper
    keeps them; each :meth:`lookup` is then one request per leader. Leaders that moved are
    refreshed on the way; a partition not known yet is looked for again."""

    def __init__(self, run: PreviewRun, info: TableInfo, spec: LookupSpec) -> None:
        self._run = run
        self.info = info
        self.spec = spec
        self._partitions: dict[str, int] = {}

    @classmethod
    async def open(
        cls,
        client: ScanClient,
        path: TablePath | tuple[str, str] | str,
        *,
        prefix: bool = False,
        deadline_s: float = 10.0,
        light: bool = False,
    ) -> Lookuper:
        """Read the table (GetMetadata; ListPartitionInfos for a partitioned one) and check
        it can be looked up: raises :class:`~fluss_proto.errors.LookupKeyError`,
        :class:`~fluss_proto.errors.UnsupportedTableError`, ``TableNotExistError``,
        connection errors, :class:`RequestTimeoutError`."""
        if not deadline_s > 0:
            raise ValueError(f"deadline_s must be positive, got {deadline_s!r}")
        run = PreviewRun(
            client,
            TablePath.of(path),
            limit=1,
            tail=False,
            deadline=Deadline(deadline_s),
            batch_size_bytes=DEFAULT_KV_BATCH_BYTES,
            fetch_max_bytes=DEFAULT_FETCH_MAX_BYTES,
            fetch_max_bytes_per_bucket=DEFAULT_FETCH_MAX_BYTES_PER_BUCKET,
            light=light,
        )
        try:
            async with asyncio.timeout(run.deadline.remaining()):
                table, info = await run.load_table()
                lookuper = cls(run, info, lookup_spec(info, prefix=prefix))
                for b in table.buckets:
                    run.leaders[(None, b.bucket_id)] = b.leader_id
                if info.is_partitioned:
                    await lookuper._list_partitions()
        except TimeoutError:
            raise RequestTimeoutError(
                f"the metadata of {run.path} did not arrive within {deadline_s}s"
            ) from None
        return lookuper

    @property
    def schema(self) -> pa.Schema | RowsSchema:
        """The columns of the rows found."""
        schema = self._run.target_rows if self._run.light else self._run.target_schema
        assert schema is not None
        return schema

    async def lookup(
        self, keys: Sequence[Mapping[str, object]], *, deadline_s: float = 10.0
    ) -> Lookup:
        """Look ``keys`` up (each a ``{column: value}`` mapping of texts or Python values,
        see :mod:`fluss_proto.literals`). Raises before anything is sent:
        :class:`~fluss_proto.errors.LookupKeyError` and
        :class:`~fluss_proto.errors.LiteralError` for keys that do not fit the table;
        :class:`RequestTimeoutError` past ``deadline_s``. Per-bucket failures are kept in
        the report."""
        started = time.monotonic()
        run = self._run
        state = [_Key(p, b) for p in plan_keys(self.spec, keys) for b in p.buckets]
        run.deadline = Deadline(deadline_s)
        sender = _Lookups(run, self.info, self.spec.prefix)
        try:
            async with asyncio.timeout(run.deadline.remaining()):
                await self._place(state)
                await sender.send([k for k in state if k.status is None and not k.again])
                retry = [k for k in state if k.status is None and k.again]
                if retry:
                    await run.refresh_leaders(run.refresh_generation)
                    for k in retry:
                        k.leader_id = run.leaders.get(k.place)
                        k.again, k.moved = False, True
                    await sender.send(retry)
                rows = await _decode(run, state)
        except TimeoutError:
            raise RequestTimeoutError(f"the lookup did not finish within {deadline_s}s") from None
        report = LookupReport(
            table_path=str(run.path),
            table_id=self.info.table_id,
            prefix=self.spec.prefix,
            keys=_results(state),
            requests=sender.requests,
            versions=sender.versions,
            elapsed_s=time.monotonic() - started,
        )
        return Lookup(rows=rows, schema=self.schema, report=report, info=self.info)

    async def _list_partitions(self) -> None:
        run = self._run
        self._partitions = {
            p.name: p.partition_id for p in await run.admin.list_partitions(run.path)
        }

    async def _place(self, state: list[_Key]) -> None:
        """Partition ids (a partition that does not exist: the key is absent) and each
        probe's leader (none yet: asked again after the refresh)."""
        run = self._run
        if self.spec.partition_keys:
            if any(k.plan.partition not in self._partitions for k in state):
                await self._list_partitions()  # created since we last looked?
            unknown: set[int] = set()
            for k in state:
                pid = self._partitions.get(k.plan.partition or "")
                if pid is None:
                    k.status = KeyStatus.NO_PARTITION
                    continue
                k.partition_id = pid
                if (pid, k.bucket) not in run.leaders:
                    unknown.add(pid)
            if unknown:
                run.partition_ids = sorted({*run.partition_ids, *unknown})
                for pid, meta in (await run.partition_buckets(sorted(unknown))).items():
                    for b in meta.buckets:
                        run.leaders[(pid, b.bucket_id)] = b.leader_id
        for k in state:
            if k.status is None:
                k.leader_id = run.leaders.get(k.place)
                if k.leader_id is None:
                    k.again = True


async def lookup_rows(
    client: ScanClient,
    path: TablePath | tuple[str, str] | str,
    keys: Sequence[Mapping[str, object]],
    *,
    prefix: bool = False,
    deadline_s: float = 10.0,
    light: bool = False,
) -> Lookup:
    """One lookup of ``keys`` in ``path`` (:meth:`Lookuper.open`, then
    :meth:`Lookuper.lookup`, sharing ``deadline_s``); ``prefix``: each key names the bucket
    key (and partition keys) and gets every row under it. ``light``: rows as
    :class:`~fluss_proto.scan.rows.Rows` (no pyarrow) when every column is of a plain type.
    Raises what those two raise."""
    started = time.monotonic()
    lookuper = await Lookuper.open(client, path, prefix=prefix, deadline_s=deadline_s, light=light)
    # the key check comes before the remaining-time check: a bad key is the caller's error
    plan_keys(lookuper.spec, keys)
    remaining = max(MIN_REQUEST_TIMEOUT_S, deadline_s - (time.monotonic() - started))
    result = await lookuper.lookup(keys, deadline_s=remaining)
    report = dataclasses.replace(result.report, elapsed_s=time.monotonic() - started)
    return dataclasses.replace(result, report=report)


def _results(state: list[_Key]) -> tuple[KeyResult, ...]:
    """One result per key from its probes: found where any probe found rows; failed when
    a probe failed and none found; else absent (or its partition does not exist)."""
    by_key: dict[int, list[_Key]] = defaultdict(list)
    for k in state:
        by_key[k.plan.index].append(k)
    out = []
    for index, probes in sorted(by_key.items()):
        hits = [k for k in probes if k.status is KeyStatus.FOUND]
        failed = [k for k in probes if k.status is None or k.status is KeyStatus.FAILED]
        if hits:
            status = KeyStatus.FOUND
        elif failed:
            status = KeyStatus.FAILED
        else:
            status = probes[0].status or KeyStatus.FAILED
        first = (hits or failed or probes)[0]
        error = None
        if status is KeyStatus.FAILED:
            error = first.error or FlussError("no answer")
        out.append(
            KeyResult(
                index=index,
                status=status,
                rows=sum(len(k.values) for k in probes),
                bucket=first.bucket,
                partition=first.plan.partition,
                leader_id=first.leader_id,
                error=error,
                found_in=tuple(k.bucket for k in hits),
            )
        )
    return tuple(out)


class _Lookups:
    """Sends one request per leader and settles each key from the replies."""

    def __init__(self, run: PreviewRun, info: TableInfo, prefix: bool) -> None:
        self.run = run
        self.info = info
        self.prefix = prefix
        self.api = ApiKey.PREFIX_LOOKUP if prefix else ApiKey.LOOKUP
        self.requests = 0
        self.versions: dict[int, int] = {}

    async def send(self, keys: list[_Key]) -> None:
        by_leader: dict[int, list[_Key]] = defaultdict(list)
        for k in keys:
            if k.leader_id is None:  # still without a leader after the refresh
                k.status = KeyStatus.FAILED
                k.error = LeaderNotAvailableError(
                    f"bucket {k.bucket} of {self.run.path} has no leader"
                )
                continue
            by_leader[k.leader_id].append(k)
        await asyncio.gather(*(self._one(node, group) for node, group in by_leader.items()))

    async def _one(self, node: int, keys: list[_Key]) -> None:
        run = self.run
        by_place: dict[_Place, list[_Key]] = defaultdict(list)
        for k in keys:
            by_place[k.place].append(k)
        request: pb.LookupRequest | pb.PrefixLookupRequest
        if self.prefix:
            request = pb.PrefixLookupRequest(table_id=self.info.table_id)
        else:
            request = pb.LookupRequest(table_id=self.info.table_id)
        for (pid, bucket), group in by_place.items():
            item = request.buckets_req.add(bucket_id=bucket, keys=[k.plan.key for k in group])
            if pid is not None:
                item.partition_id = pid
        self.requests += 1
        try:
            resp = await run.call(None, self.api, request, node)
        except FlussError as exc:
            for k in keys:
                self._failed(k, exc)
            return
        versions = run.versions_of(node)  # known once the connection's handshake is done
        version = versions.negotiate(self.api) if versions is not None else None
        if version is not None:
            self.versions[node] = version
        answered: set[_Place] = set()
        for b in resp.buckets_resp:
            place = (opt(b, "partition_id"), b.bucket_id)
            if place not in by_place or place in answered:
                continue
            group = by_place[place]
            answered.add(place)
            err = body_error(b, self.api, run.server(node))
            if err is not None:
                for k in group:
                    self._failed(k, err)
                continue
            entries = b.value_lists if self.prefix else b.values
            if len(entries) != len(group):
                err = NoBucketAnswerError(
                    f"{self.api.name} reply for bucket {place[1]} has {len(entries)} "
                    f"answer(s) for {len(group)} key(s)"
                )
                for k in group:
                    self._failed(k, err, refresh=False)
                continue
            for k, entry in zip(group, entries, strict=True):
                if self.prefix:
                    k.values = tuple(entry.values)
                elif entry.HasField("values"):
                    k.values = (entry.values,)
                k.status = KeyStatus.FOUND if k.values else KeyStatus.ABSENT
        for place, group in by_place.items():
            if place not in answered:
                err = NoBucketAnswerError(
                    f"{self.api.name} reply from {run.server(node)} did not mention "
                    f"bucket {place[1]}"
                )
                for k in group:
                    self._failed(k, err, refresh=False)

    def _failed(self, k: _Key, err: FlussError, *, refresh: bool = True) -> None:
        if refresh and needs_refresh(err) and not k.moved:
            k.again = True  # the leader moved: asked again after one shared refresh
            return
        k.status, k.error = KeyStatus.FAILED, err


async def _decode(run: PreviewRun, state: list[_Key]) -> pa.Table | Rows:
    """The values found, in key order, as rows of the table's latest schema."""
    values = [v for k in state for v in k.values]
    batch = lookup_values_batch(values, light=run.light)
    ids = batch.schema_ids
    await run.ensure_schemas(set(ids if isinstance(ids, list) else ids.tolist()))
    return run.values_table(batch, 0, len(values))

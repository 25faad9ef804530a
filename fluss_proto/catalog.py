"""Catalog and metadata helpers of the admin API: requests and reply -> model values.

Pure functions (no I/O) shared by :mod:`fluss_proto.admin`, :mod:`fluss_proto.gather` and
:mod:`fluss_proto.scan`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto._replies import as_fluss_error, opt
from fluss_proto.api_keys import ApiKey
from fluss_proto.client import CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION
from fluss_proto.cluster import BucketMetadata, ServerNode, TableMetadata, TablePath
from fluss_proto.error_codes import TableNotExistError, UnknownServerError
from fluss_proto.errors import ServerError
from fluss_proto.model import ApiVersionRange, BucketInfo, PartitionInfo, ServerInfo
from fluss_proto.types import FrozenDict, TableDescriptor, TableInfo, parse_table_descriptor

__all__ = [
    "PARTITION_SEPARATOR",
    "TABLE_INFO_CACHE",
    "PathLike",
    "api_versions_request",
    "as_path",
    "bucket_info",
    "is_partitioned",
    "metadata_request",
    "missing_table",
    "normalise_table_error",
    "partition_name_of",
    "partitions_from_response",
    "pb_path",
    "server_info",
    "table_info_from_metadata",
]

PathLike = TablePath | tuple[str, str] | str
#: Parsed table documents kept (per distinct table JSON); a poll meets the same ones again.
TABLE_INFO_CACHE = 4096
#: Separator Fluss puts between partition values in a partition name.
PARTITION_SEPARATOR = "$"


def as_path(value: PathLike | Any) -> TablePath:
    """A TablePath from a TablePath, ``(db, table)``, ``"db.table"``, or any object with
    ``database_name`` and ``table_name`` attributes (e.g. pyfluss's TablePath)."""
    database, table = getattr(value, "database_name", None), getattr(value, "table_name", None)
    if database is not None and table is not None:
        return TablePath(str(database), str(table))
    return TablePath.of(value)


def partition_name_of(spec: Iterable[tuple[str, str]]) -> str:
    """Fluss's partition name: the values in partition-key order joined by ``$``."""
    return PARTITION_SEPARATOR.join(value for _key, value in spec)


def pb_path(path: TablePath) -> pb.PbTablePath:
    return pb.PbTablePath(database_name=path.database, table_name=path.table)


def metadata_request(
    tables: Iterable[TablePath] = (),
    *,
    partition_ids: Iterable[int] = (),
    partition_names: Iterable[tuple[TablePath, str]] = (),
) -> pb.MetadataRequest:
    req = pb.MetadataRequest()
    for path in tables:
        req.table_path.add(database_name=path.database, table_name=path.table)
    for path, name in partition_names:
        req.partitions_path.add(
            database_name=path.database, table_name=path.table, partition_name=name
        )
    req.partitions_id.extend(partition_ids)
    return req


def table_info_from_metadata(t: TableMetadata) -> TableInfo:
    """A TableInfo from GetMetadata's table entry (same JSON as GetTableInfo's).

    Memoised: a poll sees the same tables again and again, and TableInfo is immutable.
    """
    return _table_info(
        t.path, t.table_id, t.schema_id, t.table_json, t.created_time, t.modified_time,
        t.remote_data_dir,
    )  # fmt: skip


@functools.lru_cache(maxsize=TABLE_INFO_CACHE)
def _table_info(
    path: TablePath,
    table_id: int,
    schema_id: int,
    table_json: bytes,
    created_ms: int,
    modified_ms: int,
    remote_data_dir: str | None,
) -> TableInfo:
    return TableInfo.from_descriptor(
        path.database,
        path.table,
        table_id=table_id,
        schema_id=schema_id,
        descriptor=_descriptor(table_json),
        created_ms=created_ms,
        modified_ms=modified_ms,
        remote_data_dir=remote_data_dir,
    )


@functools.lru_cache(maxsize=TABLE_INFO_CACHE)
def _descriptor(table_json: bytes) -> TableDescriptor:
    return parse_table_descriptor(table_json)


def is_partitioned(t: TableMetadata) -> bool:
    return bool(_descriptor(t.table_json).partition_keys)


def normalise_table_error(exc: BaseException, path: TablePath) -> BaseException:
    """Fluss 0.9.1 answers GetMetadata for a missing table with UNKNOWN_SERVER_ERROR (-1)
    whose text wraps ``TableNotExistException``; give that its proper type (code 7)."""
    if isinstance(exc, UnknownServerError) and "TableNotExistException" in (exc.message or ""):
        return TableNotExistError(
            f"Table '{path}' does not exist (reported as UNKNOWN_SERVER_ERROR "
            "wrapping TableNotExistException)",
            api=exc.api,
            server=exc.server,
        )
    return exc


def api_versions_request() -> pb.ApiVersionsRequest:
    return pb.ApiVersionsRequest(
        client_software_name=CLIENT_SOFTWARE_NAME,
        client_software_version=CLIENT_SOFTWARE_VERSION,
    )


def server_info(role: str, node: ServerNode, result: Any) -> ServerInfo:
    """A ServerInfo from metadata plus an ApiVersions reply (or the exception instead)."""
    base: dict[str, Any] = {
        "node_id": node.node_id,
        "role": role,
        "host": node.host,
        "port": node.port,
        "rack": node.rack,
    }
    if isinstance(result, BaseException):
        return ServerInfo(**base, error=as_fluss_error(result))
    if result is None:
        return ServerInfo(**base)
    return ServerInfo(
        **base,
        server_type=opt(result, "server_type"),
        api_versions=tuple(
            sorted(
                (
                    ApiVersionRange(v.api_key, v.min_version, v.max_version)
                    for v in result.api_versions
                ),
                key=lambda v: v.api_key,
            )
        ),
    )


def partitions_from_response(resp: pb.ListPartitionInfosResponse) -> tuple[PartitionInfo, ...]:
    out = []
    for info in resp.partitions_info:
        spec = [(kv.key, kv.value) for kv in info.partition_spec.partition_key_values]
        out.append(
            PartitionInfo(
                partition_id=info.partition_id,
                name=partition_name_of(spec),
                spec=FrozenDict(dict(spec)),
                remote_data_dir=opt(info, "remote_data_dir"),
            )
        )
    return tuple(sorted(out, key=lambda p: p.partition_id))


def missing_table(path: TablePath) -> ServerError:
    return TableNotExistError(
        f"Table '{path}' is not in the metadata reply", api=ApiKey.GET_METADATA.name
    )


def bucket_info(table_id: int, pid: int | None, pname: str | None, b: BucketMetadata) -> BucketInfo:
    return BucketInfo(
        table_id=table_id,
        partition_id=pid,
        partition_name=pname,
        bucket_id=b.bucket_id,
        leader_id=b.leader_id,
        replica_ids=b.replica_ids,
        leader_epoch=b.leader_epoch,
    )

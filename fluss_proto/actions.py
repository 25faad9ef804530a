"""The cluster-changing admin calls an operator makes, typed (no konsole knowledge).

Each method sends one request to the coordinator through a client whose write grant holds
its key (:data:`fluss_proto.api_keys.OPERATOR_ACTIONS`); without it the client's gate
refuses before anything is sent (:class:`~fluss_proto.errors.ReadOnlyViolationError`).
Server failures come back as the typed :class:`~fluss_proto.errors.ServerError` of their
code. The codes of tags, goals and config operations are Fluss's own (same at 0.9.1 and
the 1.0 line).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.admin import AdminClient
from fluss_proto.api_keys import ApiKey
from fluss_proto.catalog import PathLike, TablePath
from fluss_proto.model import AclBinding, AclFilter

__all__ = [
    "AclResult",
    "AlterOp",
    "ConfigChange",
    "FlussActions",
    "Goal",
    "ServerTag",
]


class ServerTag(IntEnum):
    """A tablet server's tag: the rebalance moves every replica off a tagged server."""

    PERMANENT_OFFLINE = 0
    TEMPORARY_OFFLINE = 1


class Goal(IntEnum):
    """A rebalance goal, by priority when several are given."""

    REPLICA_DISTRIBUTION = 0
    LEADER_DISTRIBUTION = 1
    RACK_AWARE = 2


class AlterOp(IntEnum):
    """How a config change applies its value."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True, slots=True)
class ConfigChange:
    """One key's change; ``value`` is None for DELETE."""

    key: str
    value: str | None
    op: AlterOp = AlterOp.SET

    def message(self) -> pb.PbAlterConfig:
        change = pb.PbAlterConfig(config_key=self.key, op_type=int(self.op))
        if self.value is not None:
            change.config_value = self.value
        return change


@dataclass(frozen=True, slots=True)
class AclResult:
    """One ACL binding the server created or dropped, with its own error (code 0: done)."""

    binding: AclBinding
    error_code: int
    error_message: str | None


class FlussActions:
    """The write half of the admin API: tags, rebalance, configs, ACLs, partitions, tables."""

    def __init__(self, client: AdminClient, *, timeout: float | None = None) -> None:
        self._client = client
        self._timeout = timeout

    async def _send(self, api: ApiKey, request: Message) -> Any:
        return await self._client.call(api, request, coordinator=True, timeout=self._timeout)

    async def add_server_tag(self, server_ids: Sequence[int], tag: ServerTag) -> None:
        req = pb.AddServerTagRequest(server_ids=list(server_ids), server_tag=int(tag))
        await self._send(ApiKey.ADD_SERVER_TAG, req)

    async def remove_server_tag(self, server_ids: Sequence[int], tag: ServerTag) -> None:
        req = pb.RemoveServerTagRequest(server_ids=list(server_ids), server_tag=int(tag))
        await self._send(ApiKey.REMOVE_SERVER_TAG, req)

    async def rebalance(self, goals: Sequence[Goal]) -> str:
        """Start a rebalance; its id (follow it with ``FlussAdmin.rebalance_progress``)."""
        resp = await self._send(
            ApiKey.REBALANCE, pb.RebalanceRequest(goals=[int(g) for g in goals])
        )
        return str(resp.rebalance_id)

    async def cancel_rebalance(self, rebalance_id: str | None = None) -> None:
        req = pb.CancelRebalanceRequest()
        if rebalance_id is not None:
            req.rebalance_id = rebalance_id
        await self._send(ApiKey.CANCEL_REBALANCE, req)

    async def alter_cluster_configs(self, changes: Iterable[ConfigChange]) -> None:
        req = pb.AlterClusterConfigsRequest(alter_configs=[c.message() for c in changes])
        await self._send(ApiKey.ALTER_CLUSTER_CONFIGS, req)

    async def create_acls(self, bindings: Iterable[AclBinding]) -> tuple[AclResult, ...]:
        req = pb.CreateAclsRequest(acl=[_acl_info(b) for b in bindings])
        resp = await self._send(ApiKey.CREATE_ACLS, req)
        return tuple(_result(r) for r in resp.acl_results)

    async def drop_acls(self, filters: Iterable[AclFilter]) -> tuple[AclResult, ...]:
        """Drop what the filters match; every matched binding with its own result (a failed
        filter gives one result with an empty binding)."""
        req = pb.DropAclsRequest(acl_filter=[_acl_filter(f) for f in filters])
        resp = await self._send(ApiKey.DROP_ACLS, req)
        out: list[AclResult] = []
        for fr in resp.filter_results:
            if fr.HasField("error_code") and fr.error_code:
                out.append(
                    AclResult(AclBinding(0, "", "", "", "", 0, 0), fr.error_code, fr.error_message)
                )
            out.extend(_result(m) for m in fr.matching_acls)
        return tuple(out)

    async def create_partition(
        self, path: PathLike, spec: Mapping[str, str], *, ignore_if_exists: bool = False
    ) -> None:
        req = pb.CreatePartitionRequest(
            table_path=_path(path),
            partition_spec=_spec(spec),
            ignore_if_not_exists=ignore_if_exists,
        )
        await self._send(ApiKey.CREATE_PARTITION, req)

    async def drop_partition(
        self, path: PathLike, spec: Mapping[str, str], *, ignore_if_missing: bool = False
    ) -> None:
        req = pb.DropPartitionRequest(
            table_path=_path(path),
            partition_spec=_spec(spec),
            ignore_if_not_exists=ignore_if_missing,
        )
        await self._send(ApiKey.DROP_PARTITION, req)

    async def alter_table_properties(self, path: PathLike, changes: Iterable[ConfigChange]) -> None:
        req = pb.AlterTableRequest(
            table_path=_path(path),
            ignore_if_not_exists=False,
            config_changes=[c.message() for c in changes],
        )
        await self._send(ApiKey.ALTER_TABLE, req)


def _path(path: PathLike) -> pb.PbTablePath:
    p = TablePath.of(path)
    return pb.PbTablePath(database_name=p.database, table_name=p.table)


def _spec(spec: Mapping[str, str]) -> pb.PbPartitionSpec:
    return pb.PbPartitionSpec(
        partition_key_values=[pb.PbKeyValue(key=k, value=v) for k, v in spec.items()]
    )


def _acl_info(b: AclBinding) -> pb.PbAclInfo:
    return pb.PbAclInfo(
        resource_name=b.resource_name,
        resource_type=int(b.resource_type),
        principal_name=b.principal_name,
        principal_type=b.principal_type,
        host=b.host,
        operation_type=int(b.operation),
        permission_type=int(b.permission),
    )


def _acl_filter(f: AclFilter) -> pb.PbAclFilter:
    out = pb.PbAclFilter(
        resource_type=int(f.resource_type),
        operation_type=int(f.operation),
        permission_type=int(f.permission),
    )
    for name in ("resource_name", "principal_name", "principal_type", "host"):
        value = getattr(f, name)
        if value is not None:
            setattr(out, name, value)
    return out


def _result(r: pb.PbCreateAclResult | pb.PbDropAclsMatchingAcl) -> AclResult:
    a = r.acl
    binding = AclBinding(
        a.resource_type,
        a.resource_name,
        a.principal_name,
        a.principal_type,
        a.host,
        a.operation_type,
        a.permission_type,
    )
    code = r.error_code if r.HasField("error_code") else 0
    message = r.error_message if r.HasField("error_message") else None
    return AclResult(binding, code, message)

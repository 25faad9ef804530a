"""What FlussClient's parts share: where a request goes (:class:`Target`), which requests
change the cluster, and the standby coordinator's answer.

Part of :class:`~fluss_proto.client.FlussClient`; see :mod:`fluss_proto.client`.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.cluster import SERVER_TYPE_COORDINATOR, SERVER_TYPE_TABLET, ServerNode
from fluss_proto.errors import FlussError, ServerError

#: NOT_COORDINATOR_LEADER: a standby coordinator's answer to everything but API_VERSIONS.
NOT_COORDINATOR_LEADER: Final = 65

Role = Literal["coordinator", "tablet", "bootstrap"]


class Target(NamedTuple):
    """One server a request is sent to, and the role metadata gives it."""

    address: str
    role: Role
    node_id: int | None = None

    @classmethod
    def coordinator(cls, node: ServerNode) -> Target:
        return cls(node.address, "coordinator", node.node_id)

    @classmethod
    def tablet(cls, node: ServerNode) -> Target:
        return cls(node.address, "tablet", node.node_id)

    @property
    def expected_type(self) -> int | None:
        return {"coordinator": SERVER_TYPE_COORDINATOR, "tablet": SERVER_TYPE_TABLET}.get(self.role)


def request_mutates(api: ApiKey, request: object) -> bool:
    """Whether sending ``request`` changes the cluster (never retried, gated by allow_writes)."""
    if API_INFO[api].mutating:
        return True
    # A lookup may ask the server to insert missing keys: that is a write.
    return api is ApiKey.LOOKUP and bool(getattr(request, "insert_if_not_exists", False))


def is_standby_answer(target: Target, exc: FlussError) -> bool:
    """A standby coordinator's NOT_COORDINATOR_LEADER: follow to the active one."""
    return (
        isinstance(exc, ServerError)
        and exc.code == NOT_COORDINATOR_LEADER
        and target.role == "coordinator"
    )

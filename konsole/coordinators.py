"""Probe one coordinator address: active, standby or unreachable.

GetMetadata names only the active coordinator, so standbys are found by asking each
configured address directly, on a connection of its own (the client's pooled one would
follow the active coordinator): ApiVersions, SASL when configured, then ListDatabases,
the cheapest coordinator request. A 1.0 standby answers ApiVersions and fails every other
request with NOT_COORDINATOR_LEADER (65). Any other answer, even an error such as a
missing permission, means the address is the active coordinator. No answer is
"unreachable". An address whose ApiVersions says it is a tablet server is reported so;
the poller stops probing it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from fluss_proto import messages
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.client import (
    CLIENT_SOFTWARE_NAME,
    CLIENT_SOFTWARE_VERSION,
    SERVER_TYPE_TABLET,
    ServerApiVersions,
)
from fluss_proto.connection import Connection
from fluss_proto.errors import FlussError, ServerError
from fluss_proto.sasl import SaslPlain, authenticate
from konsole.snapshot import CoordinatorRole, CoordinatorStatus

__all__ = ["NOT_COORDINATOR_LEADER", "ProbeResult", "probe_coordinator"]

NOT_COORDINATOR_LEADER: Final = 65


@dataclass(frozen=True, slots=True)
class ProbeResult:
    status: CoordinatorStatus
    #: True when the address turned out to be a tablet server (not a coordinator).
    is_tablet: bool = False


def _split(address: str) -> tuple[str, int]:
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        return host, int(rest[1:])
    host, _, port = address.rpartition(":")
    return host, int(port)


def _is_standby_answer(exc: BaseException) -> bool:
    # Authentication wraps the server's error: look one level down as well.
    for err in (exc, exc.__cause__):
        if isinstance(err, ServerError) and err.code == NOT_COORDINATOR_LEADER:
            return True
    return False


async def probe_coordinator(
    address: str, *, timeout: float = 2.0, sasl: SaslPlain | None = None
) -> ProbeResult:
    """Classify ``address``; never raises (except cancellation)."""
    t0 = time.monotonic()

    def result(role: CoordinatorRole, error: str | None = None) -> ProbeResult:
        status = CoordinatorStatus(address, role, error, time.monotonic() - t0)
        return ProbeResult(status)

    try:
        host, port = _split(address)
    except ValueError:
        return result(CoordinatorRole.UNREACHABLE, "not a host:port address")
    try:
        async with asyncio.timeout(timeout):
            conn = await Connection.open(
                host, port, connect_timeout=timeout, request_timeout=timeout
            )
            try:
                info = await _api_versions(conn, address)
                if info.server_type == SERVER_TYPE_TABLET:
                    return ProbeResult(
                        CoordinatorStatus(address, CoordinatorRole.UNREACHABLE, "a tablet server"),
                        is_tablet=True,
                    )
                if sasl is not None:
                    version = info.negotiate(ApiKey.AUTHENTICATE)
                    await authenticate(conn, sasl, timeout=timeout, version=version or 0)
                version = info.negotiate(ApiKey.LIST_DATABASES)
                if version is None:
                    return result(CoordinatorRole.UNREACHABLE, "does not serve ListDatabases")
                await conn.request(
                    int(ApiKey.LIST_DATABASES),
                    version,
                    messages.encode_request(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest()),
                    api_name=ApiKey.LIST_DATABASES.name,
                )
            finally:
                await conn.close()
    except TimeoutError:
        return result(CoordinatorRole.UNREACHABLE, f"no answer within {timeout:g}s")
    except FlussError as exc:
        if _is_standby_answer(exc):
            return result(CoordinatorRole.STANDBY)
        if isinstance(exc, ServerError):
            # It served the request (e.g. refused it for lack of permission): it leads.
            return result(CoordinatorRole.ACTIVE, f"{type(exc).__name__}: {exc}"[:200])
        return result(CoordinatorRole.UNREACHABLE, f"{type(exc).__name__}: {exc}"[:200])
    except (OSError, ValueError) as exc:
        return result(CoordinatorRole.UNREACHABLE, f"{type(exc).__name__}: {exc}"[:200])
    return result(CoordinatorRole.ACTIVE)


async def _api_versions(conn: Connection, address: str) -> ServerApiVersions:
    request = pb.ApiVersionsRequest(
        client_software_name=CLIENT_SOFTWARE_NAME,
        client_software_version=CLIENT_SOFTWARE_VERSION,
    )
    raw = await conn.request(
        int(ApiKey.API_VERSIONS),
        0,
        messages.encode_request(ApiKey.API_VERSIONS, request),
        api_name=ApiKey.API_VERSIONS.name,
    )
    response = messages.decode_response(ApiKey.API_VERSIONS, raw)
    assert isinstance(response, pb.ApiVersionsResponse)
    return ServerApiVersions(
        address=address,
        server_type=response.server_type if response.HasField("server_type") else None,
        versions=MappingProxyType(
            {v.api_key: (v.min_version, v.max_version) for v in response.api_versions}
        ),
        recorded_at=time.time(),
    )

"""probe_coordinators against fake servers: active, standby, tablet server, dead, silent."""

from __future__ import annotations

import socket

from fluss_proto.api_keys import ApiKey
from fluss_proto.coordinators import probe_coordinators
from fluss_proto.errors import AuthenticationError, RequestTimeoutError, UnreachableError
from fluss_proto.sasl import SaslPlain
from tests.unit.test_client import DROP, FakeServer, default_apis


def dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_roles_of_every_kind_of_address() -> None:
    active = FakeServer(1, apis=default_apis(1, fluss_1_0=True))
    standby = FakeServer(1, apis=default_apis(1, fluss_1_0=True), standby=True)
    tablet = FakeServer(2)
    silent = FakeServer(1, handlers={ApiKey.LIST_DATABASES: lambda _s, _f: DROP})
    servers = [active, standby, tablet, silent]
    for server in servers:
        await server.start()
    try:
        dead = f"127.0.0.1:{dead_port()}"
        probes = await probe_coordinators(
            [standby.address, active.address, tablet.address, dead, silent.address],
            timeout=0.5,
        )
    finally:
        for server in servers:
            await server.stop()
    assert [p.role for p in probes] == [
        "standby",
        "active",
        "tablet-server",
        "unreachable",
        "unreachable",
    ]
    assert [p.address for p in probes][:2] == [standby.address, active.address]
    assert probes[1].active and not probes[0].active
    assert probes[0].latency_s is not None and probes[0].error is None
    assert isinstance(probes[3].error, UnreachableError) and probes[3].latency_s is None
    assert isinstance(probes[4].error, RequestTimeoutError)
    # A standby is asked ApiVersions and one read-only request, nothing else.
    assert standby.apis_seen() == [ApiKey.API_VERSIONS, ApiKey.LIST_DATABASES]


async def test_a_0_9_coordinator_is_active_and_sasl_is_used_when_given() -> None:
    server = FakeServer(1, sasl={"admin": "pw"})
    await server.start()
    try:
        ok = await probe_coordinators(server.address, sasl=SaslPlain("admin", "pw"))
        bad = await probe_coordinators(server.address, sasl=SaslPlain("admin", "nope"))
    finally:
        await server.stop()
    assert [p.role for p in ok] == ["active"]
    assert bad[0].role == "unreachable" and isinstance(bad[0].error, AuthenticationError)
    assert "nope" not in str(bad[0].error)

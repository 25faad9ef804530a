"""probe_coordinators against fake servers: active, standby, tablet server, dead, silent."""

from __future__ import annotations

import asyncio
import socket

import pytest

from fluss_proto.api_keys import ApiKey
from fluss_proto.coordinators import probe_coordinators
from fluss_proto.errors import AuthenticationError, RequestTimeoutError, UnreachableError
from fluss_proto.sasl import SaslPlain
from tests._testutil.fakes import DROP, Err, FakeServer, default_apis


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
            timeout=2.0,  # the silent one waits it out; the others answer in it when starved
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


@pytest.mark.parametrize(
    ("code", "role"), [(48, "active"), (41, "unreachable"), (-1, "unreachable")]
)
async def test_server_errors_on_list_databases(code: int, role: str) -> None:
    """Refused for lack of permission: only the leader checks permissions, so "active"
    (the error kept); any other error says nothing of the role."""
    server = FakeServer(
        1,
        apis=default_apis(1, fluss_1_0=True),
        handlers={ApiKey.LIST_DATABASES: lambda _s, _f: Err(code, "refused: because")},
    )
    await server.start()
    try:
        (probe,) = await probe_coordinators(server.address, timeout=1.0)
    finally:
        await server.stop()
    assert probe.role == role
    assert probe.error is not None and "because" in str(probe.error)


async def test_a_standby_refusing_the_sasl_handshake_with_65_is_standby() -> None:
    server = FakeServer(
        1,
        apis=default_apis(1, fluss_1_0=True),
        sasl={"ops": "pw"},
        handlers={ApiKey.AUTHENTICATE: lambda _s, _f: Err(65, "not the current leader")},
    )
    await server.start()
    try:
        (probe,) = await probe_coordinators(
            server.address, timeout=1.0, sasl=SaslPlain("ops", "pw")
        )
    finally:
        await server.stop()
    assert probe.role == "standby" and probe.error is None


@pytest.mark.parametrize(("standby", "sasl"), [(False, True), (True, True), (True, False)])
async def test_standby_and_active_with_and_without_sasl(standby: bool, sasl: bool) -> None:
    server = FakeServer(
        1,
        apis=default_apis(1, fluss_1_0=True),
        standby=standby,
        sasl={"ops": "pw"} if sasl else None,
    )
    await server.start()
    try:
        (probe,) = await probe_coordinators(
            server.address, timeout=2.0, sasl=SaslPlain("ops", "pw") if sasl else None
        )
    finally:
        await server.stop()
    assert probe.role == ("standby" if standby else "active")
    assert server.count(ApiKey.API_VERSIONS) == 1


async def test_an_address_answering_garbage_is_unreachable() -> None:
    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(64)
        writer.write(b"\x00\x00\x00\x06\xff\x00garb")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(garbage, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        (probe,) = await probe_coordinators(f"127.0.0.1:{port}", timeout=1.0)
    finally:
        server.close()
        await server.wait_closed()
    assert probe.role == "unreachable" and probe.error is not None

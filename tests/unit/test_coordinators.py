"""Coordinator probe: active / standby / unreachable / tablet, on a scripted connection."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fluss_proto import messages
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.error_codes import from_code
from fluss_proto.errors import DecodeError, RequestTimeoutError, UnreachableError
from fluss_proto.sasl import SaslPlain
from konsole import coordinators
from konsole.coordinators import probe_coordinator
from konsole.snapshot import CoordinatorRole

ADDRESS = "127.0.0.1:9123"


def api_versions(server_type: int, *keys: ApiKey) -> bytes:
    response = pb.ApiVersionsResponse(server_type=server_type)
    for key in keys:
        response.api_versions.add(api_key=int(key), min_version=0, max_version=5)
    return messages.encode_response(ApiKey.API_VERSIONS, response)


AV, LD, AUTH = int(ApiKey.API_VERSIONS), int(ApiKey.LIST_DATABASES), int(ApiKey.AUTHENTICATE)
COORDINATOR = api_versions(1, ApiKey.API_VERSIONS, ApiKey.LIST_DATABASES, ApiKey.AUTHENTICATE)
LIST_DATABASES = messages.encode_response(ApiKey.LIST_DATABASES, pb.ListDatabasesResponse())


class FakeConnection:
    """Answers per api key: bytes, an exception to raise, or "hang"."""

    def __init__(self, answers: dict[int, Any]) -> None:
        self.answers = answers
        self.address = ADDRESS
        self.sent: list[int] = []
        self.closed = False

    async def request(self, api_key: int, api_version: int, body: bytes, **_: Any) -> bytes:
        self.sent.append(api_key)
        answer = self.answers[api_key]
        if answer == "hang":
            await asyncio.sleep(10)
        if isinstance(answer, BaseException):
            raise answer
        assert isinstance(answer, bytes)
        return answer

    async def close(self) -> None:
        self.closed = True


def not_leader() -> Exception:
    return from_code(65, "This coordinator server is not the current leader.", api="X")


@pytest.mark.parametrize(
    ("answers", "role", "is_tablet", "error"),
    [
        ({AV: COORDINATOR, LD: LIST_DATABASES}, CoordinatorRole.ACTIVE, False, None),
        ({AV: COORDINATOR, LD: not_leader()}, CoordinatorRole.STANDBY, False, None),
        ({AV: api_versions(2, ApiKey.LIST_DATABASES)}, CoordinatorRole.UNREACHABLE, True, "tablet"),
        (
            {AV: COORDINATOR, LD: from_code(41, "no DESCRIBE permission", api="LIST_DATABASES")},
            CoordinatorRole.ACTIVE,
            False,
            "no DESCRIBE permission",
        ),
        ({AV: COORDINATOR, LD: "hang"}, CoordinatorRole.UNREACHABLE, False, "no answer within"),
        ({AV: b"\xff\x00garbage"}, CoordinatorRole.UNREACHABLE, False, "DecodeError"),
        ({AV: DecodeError("bad frame")}, CoordinatorRole.UNREACHABLE, False, "bad frame"),
        (
            {AV: RequestTimeoutError("API_VERSIONS timed out")},
            CoordinatorRole.UNREACHABLE,
            False,
            "timed out",
        ),
        (
            {AV: api_versions(1, ApiKey.API_VERSIONS)},
            CoordinatorRole.UNREACHABLE,
            False,
            "ListDatabases",
        ),
    ],
)
async def test_probe(
    monkeypatch: pytest.MonkeyPatch,
    answers: dict[int, Any],
    role: CoordinatorRole,
    is_tablet: bool,
    error: str | None,
) -> None:
    conn = FakeConnection(answers)

    async def open_(*args: Any, **kwargs: Any) -> FakeConnection:
        return conn

    monkeypatch.setattr(coordinators.Connection, "open", open_)
    result = await probe_coordinator(ADDRESS, timeout=0.05)
    assert (result.status.role, result.is_tablet) == (role, is_tablet)
    assert result.status.address == ADDRESS
    if error is None:
        assert result.status.error is None
    else:
        assert error in (result.status.error or "")
    assert conn.closed


async def test_unreachable_address(monkeypatch: pytest.MonkeyPatch) -> None:
    async def open_(*args: Any, **kwargs: Any) -> FakeConnection:
        raise UnreachableError("could not connect to 127.0.0.1:9123: refused")

    monkeypatch.setattr(coordinators.Connection, "open", open_)
    result = await probe_coordinator(ADDRESS)
    assert result.status.role is CoordinatorRole.UNREACHABLE
    assert "refused" in (result.status.error or "")


async def test_bad_address() -> None:
    result = await probe_coordinator("no-port-here")
    assert result.status.role is CoordinatorRole.UNREACHABLE


@pytest.mark.parametrize(
    ("auth_answer", "role"),
    [
        (messages.encode_response(ApiKey.AUTHENTICATE, pb.AuthenticateResponse()), "active"),
        (not_leader(), "standby"),  # a standby refuses even the SASL handshake
    ],
)
async def test_probe_with_sasl(
    monkeypatch: pytest.MonkeyPatch, auth_answer: Any, role: str
) -> None:
    conn = FakeConnection({AV: COORDINATOR, LD: LIST_DATABASES, AUTH: auth_answer})

    async def open_(*args: Any, **kwargs: Any) -> FakeConnection:
        return conn

    monkeypatch.setattr(coordinators.Connection, "open", open_)
    result = await probe_coordinator(ADDRESS, sasl=SaslPlain("ops", "pw"), timeout=0.5)
    assert result.status.role is CoordinatorRole(role)
    assert AUTH in conn.sent


# --------------------------------------------------------------------------- real frames


@pytest.mark.parametrize(
    ("server_type", "standby", "sasl", "role", "is_tablet"),
    [
        (1, False, False, CoordinatorRole.ACTIVE, False),
        (1, True, False, CoordinatorRole.STANDBY, False),
        (1, False, True, CoordinatorRole.ACTIVE, False),
        (1, True, True, CoordinatorRole.STANDBY, False),
        (2, False, False, CoordinatorRole.UNREACHABLE, True),
    ],
)
async def test_probe_over_loopback_against_a_fake_server(
    server_type: int, standby: bool, sasl: bool, role: CoordinatorRole, is_tablet: bool
) -> None:
    """Real frames through the real Connection, against test_client's fake server."""
    from tests.unit.test_client import FakeServer, default_apis

    server = FakeServer(
        server_type,
        apis=default_apis(server_type, fluss_1_0=True),
        standby=standby,
        sasl={"ops": "pw"} if sasl else None,
    )
    await server.start()
    try:
        result = await probe_coordinator(
            server.address, timeout=2.0, sasl=SaslPlain("ops", "pw") if sasl else None
        )
    finally:
        await server.stop()
    assert (result.status.role, result.is_tablet) == (role, is_tablet)
    assert server.count(ApiKey.API_VERSIONS) == 1

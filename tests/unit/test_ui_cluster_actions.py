"""The action requests the faces build: the value typed, the cancel plan, the one dispatch
table, and the request kinds the service refuses (no server: no client is ever opened)."""

from __future__ import annotations

import asyncio

import pytest

from konsole.collect.actions.service import KINDS, ActionRequest, ActionService
from konsole.collect.profiles import resolve_profile
from konsole.errors import ActionInputError
from konsole.model.actions import plan_cancel
from konsole.ui.actions import ACTIONS, server_request


def test_a_typed_value_replaces_the_requests() -> None:
    request = ActionRequest("table-set", "shop.orders").with_value("table.log.ttl=3d")
    assert request == ActionRequest("table-set", "shop.orders", "table.log.ttl=3d")
    config = ActionRequest("config-set", "k").with_value("a=b")
    assert config == ActionRequest("config-set", "k", "a=b")  # a key given: the value as typed


def test_a_config_set_without_a_key_takes_key_equals_value() -> None:
    request = ActionRequest("config-set").with_value(" datalake.format = paimon ")
    assert request == ActionRequest("config-set", "datalake.format", "paimon")
    for bad in ("no-equals", "=v", "k="):
        with pytest.raises(ActionInputError, match="KEY=VALUE"):
            ActionRequest("config-set").with_value(bad)


def test_cancel_plan_names_the_running_rebalance_or_says_there_is_none() -> None:
    plan = plan_cancel("rb-7")
    assert plan.subject == "rebalance" and plan.sends == ("CANCEL_REBALANCE",)
    assert plan.params == {"rebalance_id": "rb-7"} and "rb-7" in plan.notes[0]
    assert "no rebalance is running" in plan_cancel(None).notes[0]
    assert not plan_cancel(None).blocking(force=False)
    named = plan_cancel("rb-7", "rb-6")  # --id: the one named, typed as its id
    assert named.subject == "rb-6" and named.params == {"rebalance_id": "rb-6"}


def test_every_request_a_face_builds_is_in_the_one_table() -> None:
    console = {"rebalance", "rebalance-cancel", "config-set", "config-delete"}
    console |= {"partition-create", "partition-drop", "table-set"}
    console |= {server_request(name, 3).kind for name, _ in ACTIONS}
    cli_only = {"acl-create", "acl-drop", "server-retire"}
    assert console | cli_only == set(KINDS)
    assert server_request("drain", 3) == ActionRequest(
        "server-drain", "3", "REPLICA_DISTRIBUTION,LEADER_DISTRIBUTION"
    )
    assert server_request("untag", 3) == ActionRequest("server-untag", "3", "TEMPORARY_OFFLINE")


def _never(*, writes: bool) -> object:
    raise AssertionError("a client was opened")


@pytest.mark.parametrize("kind", ["acl-frobnicate", "server-reboot", ""])
def test_an_unknown_kind_is_refused_before_any_client_opens(kind: str) -> None:
    profile = resolve_profile(bootstrap="127.0.0.1:1")
    service = ActionService(profile, None, open_client=_never)  # type: ignore[arg-type]
    with pytest.raises(ActionInputError, match="unknown action"):
        asyncio.run(service.plan(ActionRequest(kind)))
    with pytest.raises(ActionInputError, match="unknown action"):
        asyncio.run(service.execute(ActionRequest(kind), lambda *p: None))
    assert service.read_clients() == (0, 0)


def test_without_writes_nothing_connects_and_the_reason_is_the_profiles() -> None:
    from konsole.errors import WritesNotAllowedError

    profile = resolve_profile(bootstrap="127.0.0.1:1")
    service = ActionService(profile, None, open_client=_never)  # type: ignore[arg-type]
    assert "writes = true" in (service.unavailable() or "")
    with pytest.raises(WritesNotAllowedError):
        asyncio.run(service.execute(ActionRequest("table-set", "db.t", "k=v"), lambda *p: None))
    assert ActionService(None, None).unavailable() == "actions need a cluster profile"


class _FakeClient:
    closed = False

    async def close(self) -> None:
        self.closed = True


def test_the_read_client_is_one_for_every_holder_and_closes_with_the_last() -> None:
    """The Config and Rebalance screens' holds share one read-only client."""
    opened: list[tuple[bool, _FakeClient]] = []

    async def open_client(*, writes: bool) -> _FakeClient:
        client = _FakeClient()
        opened.append((writes, client))
        return client

    profile = resolve_profile(bootstrap="127.0.0.1:1")
    service = ActionService(profile, None, open_client=open_client)  # type: ignore[arg-type]

    async def flow() -> None:
        config, rebalance = service.reads(), service.reads()
        first = await config._client()
        assert await rebalance._client() is first
        await config.aclose()
        await config.aclose()  # twice: one release
        assert service.read_clients() == (1, 0) and not first.closed
        await rebalance.aclose()
        assert service.read_clients() == (1, 1) and first.closed
        with pytest.raises(Exception, match="the reads were closed"):
            await rebalance.progress()
        again = service.reads()  # a later holder: a new client
        assert await again._client() is not first
        await again.aclose()

    asyncio.run(flow())
    assert [w for w, _ in opened] == [False, False] and service.read_clients() == (2, 2)

"""The console's cluster action requests: the value typed, the cancel plan, and the
request kinds the live actions refuse (no server: the runner is never reached)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from konsole.errors import ActionInputError
from konsole.ui.cluster_actions import ActionRequest, _plan, cancel_plan


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
    plan = cancel_plan("rb-7")
    assert plan.subject == "rebalance" and plan.sends == ("CANCEL_REBALANCE",)
    assert plan.params == {"rebalance_id": "rb-7"} and "rb-7" in plan.notes[0]
    assert "no rebalance is running" in cancel_plan(None).notes[0]
    assert not cancel_plan(None).blocking(force=False)


def test_an_unknown_kind_is_refused_before_the_runner_is_asked() -> None:
    runner = cast(Any, object())  # any attribute asked of it would raise AttributeError
    with pytest.raises(ActionInputError, match="unknown action 'acl-create'"):
        asyncio.run(_plan(runner, ActionRequest("acl-create")))

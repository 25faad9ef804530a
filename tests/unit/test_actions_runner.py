"""The write gate as a set of keys, the runner's flow and audit, and `konsole admin`'s
refusal without the opt-in (no server: a stub client, a tmp history file)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ALL_WRITES, OPERATOR_ACTIONS, ApiKey, write_grant
from fluss_proto.client import FlussClient
from fluss_proto.error_codes import from_code
from fluss_proto.errors import ReadOnlyViolation
from fluss_proto.model import HealthStatus
from konsole.collect.actions.runner import ActionRunner, Audit, Options, require_writes
from konsole.collect.profiles import parse_profiles, resolve_profile
from konsole.errors import (
    ActionFailedError,
    ActionInputError,
    ActionInterruptedError,
    ActionRefusedError,
    ExitCode,
    WritesNotAllowedError,
)
from konsole.model.actions import Plan, plan_drain
from konsole.model.placement import placement
from store import open_reader
from tests._testutil.builders import table, view

# --------------------------------------------------------------------------- the gate


def test_write_grant_values() -> None:
    assert write_grant(False) == frozenset()
    assert write_grant(True) == ALL_WRITES and ApiKey.LOOKUP in ALL_WRITES
    assert write_grant(OPERATOR_ACTIONS) == OPERATOR_ACTIONS
    assert ApiKey.PRODUCE_LOG not in OPERATOR_ACTIONS and ApiKey.DROP_TABLE not in OPERATOR_ACTIONS
    with pytest.raises(ValueError, match="NOTIFY_LEADER_AND_ISR"):
        write_grant([ApiKey.NOTIFY_LEADER_AND_ISR])
    with pytest.raises(ValueError, match="GET_METADATA"):
        write_grant([ApiKey.GET_METADATA])


async def test_operator_grant_lifts_exactly_its_keys() -> None:
    client = FlussClient("127.0.0.1:1", allow_writes=OPERATOR_ACTIONS)
    assert client.allow_writes and client.write_keys == OPERATOR_ACTIONS
    for key in (ApiKey.DROP_TABLE, ApiKey.CREATE_DATABASE, ApiKey.PRODUCE_LOG):
        with pytest.raises(ReadOnlyViolation, match="may not send it"):
            await client.call(key, object())  # refused before the request is even looked at
    read_only = FlussClient("127.0.0.1:1")
    with pytest.raises(ReadOnlyViolation, match="read-only"):
        await read_only.call(ApiKey.ADD_SERVER_TAG, pb.AddServerTagRequest(server_tag=0))
    assert not read_only.sent_api_keys


# --------------------------------------------------------------------------- the opt-in


def test_profile_writes_key() -> None:
    profiles = parse_profiles(
        '[profiles.a]\nbootstrap = "h:1"\nwrites = true\n[profiles.b]\nbootstrap = "h:2"\n',
        Path("c.toml"),
    )
    assert profiles["a"].writes and not profiles["b"].writes
    require_writes(profiles["a"])
    with pytest.raises(WritesNotAllowedError, match="writes = true") as info:
        require_writes(profiles["b"])
    assert info.value.exit_code == ExitCode.NO_PERMISSION == 77
    with pytest.raises(Exception, match="true or false"):
        parse_profiles('[profiles.a]\nbootstrap = "h"\nwrites = "yes"\n', Path("c.toml"))


def test_admin_without_opt_in_exits_77_and_connects_nothing(monkeypatch, tmp_path) -> None:
    from konsole.cli.main import main

    async def boom(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("connected")

    monkeypatch.setattr(FlussClient, "connect", boom)
    history = tmp_path / "h.sqlite"
    for args in (["server", "drain", "1"], ["config", "set", "k", "v", "--dry-run"]):
        result = CliRunner().invoke(
            main, ["admin", *args, "--bootstrap", "127.0.0.1:1", "--history", str(history)]
        )
        assert result.exit_code == 77, result.output
        assert "read-only: pass --allow-writes" in result.output
    assert not history.exists()


# --------------------------------------------------------------------------- the runner


class StubClient:
    """Answers what the runner's follow and sends ask; records every call."""

    def __init__(self, answers: dict[ApiKey, Any]) -> None:
        self.answers = answers
        self.calls: list[ApiKey] = []

    async def call(self, api: ApiKey, request: Any, **kwargs: Any) -> Any:
        self.calls.append(ApiKey(api))
        answer = self.answers[ApiKey(api)]
        if isinstance(answer, list):
            answer = answer.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def close(self) -> None:
        pass


class Recorder:
    def __init__(self, confirm: bool = False) -> None:
        self.lines: list[str] = []
        self.confirmed = confirm
        self.seen: list[Any] = []

    def show(self, lines: Any) -> None:
        self.lines += list(lines)

    def confirm(self, plan: Plan) -> bool:
        return self.confirmed

    def progress(self, progress: Any) -> None:
        self.seen.append(progress)


def runner(tmp_path: Path, answers: dict[ApiKey, Any], **options: Any) -> ActionRunner:
    profile = resolve_profile(bootstrap="127.0.0.1:1")
    audit = Audit(tmp_path / "h.sqlite", who="ops@box", clock=lambda: 100.0)
    return ActionRunner(
        profile,
        StubClient(answers),  # type: ignore[arg-type]
        audit,
        Recorder(options.pop("confirm", False)),
        Options(**options),
    )


def outcomes(path: Path) -> list[tuple[str, str]]:
    with open_reader(path) as reader:
        rows = reader.events(kinds=["operator"])
    return [(r.subject, json.loads(r.details)["details"]["outcome"]) for r in rows]


def drain_plan(**kwargs: Any) -> Plan:
    v = view((0, 1, 2, 3), [table("db.t", 1, [(3, (3, 0), 1), (0, (0, 1), 1)])])
    return plan_drain(v, placement(v), 3, goals=["REPLICA_DISTRIBUTION"], **kwargs)


def test_dry_run_audits_the_plan_and_sends_nothing(tmp_path) -> None:
    r = runner(tmp_path, {}, dry_run=True)
    sent = asyncio.run(r.run(drain_plan(health=HealthStatus.GREEN, running=None), _never))
    assert sent is None and "dry run: nothing sent" in r.operator.lines  # type: ignore[attr-defined]
    assert outcomes(tmp_path / "h.sqlite") == [("tablet-server 3", "planned")]


def test_a_rail_refuses_and_force_lifts_it(tmp_path) -> None:
    plan = drain_plan(health=HealthStatus.RED, running=None)
    r = runner(tmp_path, {}, yes=True)
    with pytest.raises(ActionRefusedError, match="health is RED \\(--force overrides\\)") as info:
        asyncio.run(r.run(plan, _never))
    assert info.value.exit_code == ExitCode.REFUSED == 75
    forced = runner(tmp_path, {}, yes=True, force=True)
    assert asyncio.run(forced.run(plan, _value)) == "done"
    assert [o for _, o in outcomes(tmp_path / "h.sqlite")] == [
        "planned",
        "refused",
        "planned",
        "sent",
        "succeeded",
    ]


def test_unconfirmed_sends_nothing(tmp_path) -> None:
    r = runner(tmp_path, {})
    with pytest.raises(ActionRefusedError, match="not confirmed"):
        asyncio.run(r.run(drain_plan(health=HealthStatus.GREEN, running=None), _never))
    assert [o for _, o in outcomes(tmp_path / "h.sqlite")] == ["planned", "refused"]


@pytest.mark.parametrize(
    ("code", "message", "error"),
    [
        (58, "Server 9 not exists", ActionInputError),
        (64, "not allowed to be changed dynamically", ActionInputError),
        (
            -1,
            "org.apache.fluss.exception.ConfigException: Cannot parse\n\tat x.y",
            ActionInputError,
        ),
        (61, "Rebalance task already exists", ActionRefusedError),
        (-1, "boom", ActionFailedError),
    ],
)
def test_server_errors_are_typed_one_line_and_audited(tmp_path, code, message, error) -> None:
    async def fails() -> None:
        raise from_code(code, message)

    r = runner(tmp_path, {}, yes=True)
    with pytest.raises(error) as info:
        asyncio.run(r.run(drain_plan(health=HealthStatus.GREEN, running=None), fails))
    assert "\n" not in str(info.value)
    assert [o for _, o in outcomes(tmp_path / "h.sqlite")] == ["planned", "sent", "failed"]


def test_follow_is_bounded_and_reports_progress(tmp_path) -> None:
    running = pb.ListRebalanceProgressResponse(rebalance_id="r", rebalance_status=1)
    done = pb.ListRebalanceProgressResponse(rebalance_id="r", rebalance_status=3)
    r = runner(tmp_path, {ApiKey.LIST_REBALANCE_PROGRESS: [running, running, done]}, interval=0.01)
    assert asyncio.run(r.follow("r")).status.name == "COMPLETED"  # type: ignore[union-attr]
    assert len(r.operator.seen) == 3  # type: ignore[attr-defined]
    stuck = runner(tmp_path, {ApiKey.LIST_REBALANCE_PROGRESS: running}, interval=0.01, timeout=0.05)
    assert asyncio.run(stuck.follow("r")).status.name == "REBALANCING"  # type: ignore[union-attr]
    assert len(stuck.operator.seen) <= 8  # type: ignore[attr-defined]


def test_a_wait_that_ends_early_leaves_the_rebalance_running(tmp_path) -> None:
    running = pb.ListRebalanceProgressResponse(rebalance_id="r", rebalance_status=1)
    r = runner(tmp_path, {ApiKey.LIST_REBALANCE_PROGRESS: running}, interval=0.01, timeout=0.03)
    plan = drain_plan(health=HealthStatus.GREEN, running=None)
    progress = asyncio.run(r.follow("r"))
    with pytest.raises(ActionRefusedError, match=r"timed out: .*keeps running.*rebalance cancel"):
        r.check_ended(plan, "r", progress)
    r.stop.set()  # Ctrl-C
    assert len(asyncio.run(r.follow("r")).tables) == 0 and r.stop.is_set()
    with pytest.raises(ActionInterruptedError) as info:
        r.check_ended(plan, "r", progress)
    assert info.value.exit_code == ExitCode.INTERRUPTED == 130
    assert [o for _, o in outcomes(tmp_path / "h.sqlite")] == ["left_running", "left_running"]


async def _never() -> None:
    raise AssertionError("sent")


async def _value() -> str:
    return "done"

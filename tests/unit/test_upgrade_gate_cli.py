"""`konsole upgrade gate`'s loop over looks (faked): it says each new set of waits once,
exits 0 on the first safe look, and with the last verdict's code at its timeout."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from fluss_proto.model import RebalanceProgress, RebalanceStatus
from konsole.cli import upgrade as upgrade_cmd
from konsole.cli.main import main
from konsole.model.check import Thresholds, assess
from konsole.model.health import HealthRules
from konsole.model.upgrade_gate import GateVerdict, judge_gate
from tests._testutil.builders import all_metrics, snap, table, view
from tests._testutil.judging import judged

T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
OK = {"disk_usage_ratio": 0.2, "disk_write_locked": False, "under_replicated": 0}


def verdict(*, rebalancing: bool = False) -> GateVerdict:
    metrics = all_metrics(**OK)
    s = snap(view(tables=[T]), metrics=metrics)
    poll = judged(s, HealthRules())
    result = assess(poll, thresholds=Thresholds())
    progress = RebalanceProgress("r-1", RebalanceStatus.REBALANCING) if rebalancing else None
    return judge_gate(poll, result, rebalance=progress)


def fake_looks(monkeypatch: pytest.MonkeyPatch, verdicts: list[GateVerdict]) -> list[int]:
    calls: list[int] = []
    it: Iterator[GateVerdict] = iter(verdicts)

    async def look(*args: Any, **kw: Any) -> GateVerdict:
        calls.append(1)
        return next(it)

    monkeypatch.setattr(upgrade_cmd, "gate_look", look)
    now = [0.0]  # a fake clock: a pause moves it on, nothing waits
    monkeypatch.setattr(upgrade_cmd, "_clock", lambda: now[0])
    monkeypatch.setattr(upgrade_cmd, "_pause", lambda s: now.__setitem__(0, now[0] + s))
    return calls


ARGS = ["upgrade", "gate", "--bootstrap", "127.0.0.1:1", "--interval", "2"]


def test_it_says_each_change_once_and_opens_on_the_first_safe_look(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waiting = verdict(rebalancing=True)
    calls = fake_looks(monkeypatch, [waiting, waiting, waiting, verdict()])
    out = CliRunner().invoke(main, [*ARGS, "--timeout", "60"])
    assert out.exit_code == 0, out.output
    assert len(calls) == 4
    said = [line for line in out.stderr.splitlines() if line.startswith("waiting:")]
    assert said == ["waiting: rebalance: cluster: rebalance r-1 rebalancing"]
    assert out.stdout.strip() == "SAFE: the next server may be taken down now"


def test_at_its_timeout_it_exits_with_the_last_verdicts_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = fake_looks(monkeypatch, [verdict(rebalancing=True)] * 1000)
    out = CliRunner().invoke(main, [*ARGS, "--timeout", "30", "--format", "json"])
    assert out.exit_code == 1, out.output  # healthy, but a rebalance runs: WARNING
    assert len(calls) == 15  # a look every 2 s of fake time, the last one at 28 s
    assert '"safe": false' in out.stdout


def test_the_gate_as_a_function_keeps_its_waits_for_a_script(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``gate_for`` (what ``konsole demo --upgrade`` asks before each step): the command's
    own loop, its waits kept in the answer instead of printed, and how long it waited."""
    from konsole.cli.options import ConnectionArgs

    waiting = verdict(rebalancing=True)
    calls = fake_looks(monkeypatch, [waiting, waiting, verdict()])
    ask = upgrade_cmd.gate_for(ConnectionArgs(bootstrap="127.0.0.1:1"), timeout=60, interval=2)
    heard: list[str] = []
    answer = ask(None, heard.append)
    assert answer.safe and len(calls) == 3
    assert heard == list(answer.said)  # said as it came
    assert answer.summary == "SAFE: the next server may be taken down now"
    assert answer.said == ("waiting: rebalance: cluster: rebalance r-1 rebalancing",)
    assert answer.waited_s == 4.0  # two pauses of 2 s on the fake clock
    fake_looks(monkeypatch, [waiting] * 100)
    held = ask(2, heard.append)  # at its timeout: the last verdict, not safe
    assert not held.safe and held.summary.startswith("WAIT: ") and held.waited_s == 58.0


def test_the_gate_as_a_function_is_not_safe_for_a_bad_profile() -> None:
    from konsole.cli.options import ConnectionArgs

    answer = upgrade_cmd.gate_for(ConnectionArgs(profile="no-such-profile"))(None, print)
    assert not answer.safe and answer.summary.startswith("UNKNOWN")

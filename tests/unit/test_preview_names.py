"""`konsole preview` refuses names Fluss would refuse before it opens any connection."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from konsole.cli import main as cli
from konsole.cli.preview import invalid_name


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("orders", True),
        ("Order_events-2024", True),
        ("x" * 200, True),
        ("x" * 201, False),
        ("", False),
        (".name", False),
        ("..", False),
        ("a b", False),
        ("naïve", False),
        ("db/t", False),
    ],
)
def test_names_follow_the_fluss_rule(name: str, valid: bool) -> None:
    assert (invalid_name(name) is None) is valid


@pytest.mark.parametrize("table", ["bad..name", "db.t t", "d b.t", f"db.{'x' * 201}"])
def test_an_invalid_name_is_a_usage_error_before_connecting(
    table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[Any] = []

    async def connect(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise AssertionError("must not connect")

    monkeypatch.setattr("fluss_proto.client.FlussClient.connect", connect)
    res = CliRunner().invoke(cli.main, ["preview", table, "--bootstrap", "127.0.0.1:1"])
    assert res.exit_code == 3, res.output
    assert "is invalid" in res.output and attempts == []

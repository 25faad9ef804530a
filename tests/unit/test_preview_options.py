"""`konsole preview` takes the same connection options as `konsole watch`:
--profile, --local (+ --run-dir), --bootstrap, FLUSS_BOOTSTRAP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fluss_proto.errors import UnreachableError
from konsole.cli import main as cli
from konsole.localcluster.cluster import ClusterDescription
from tests._testutil.fakes import local_description


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    """Records each connection attempt; every attempt fails as unreachable (exit 2)."""
    seen: list[tuple[Any, dict[str, Any]]] = []

    async def connect(bootstrap: Any, **kwargs: Any) -> Any:
        # The profile's addresses as one text, whichever shape the caller passes.
        seen.append((bootstrap if isinstance(bootstrap, str) else ",".join(bootstrap), kwargs))
        raise UnreachableError("refused")

    monkeypatch.setattr("fluss_proto.client.FlussClient.connect", connect)
    monkeypatch.delenv("FLUSS_BOOTSTRAP", raising=False)
    return seen


def preview(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli.main, ["preview", "db.t", *args], env=env)


def test_profile_gives_bootstrap_and_sasl(
    connects: list[tuple[Any, dict[str, Any]]], tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[profiles.prod]\nbootstrap = ["h1:9123", "h2:9123"]\n'
        'sasl_user = "ops"\npassword_env = "PROD_PW"\n'
    )
    res = preview("--profile", "prod", "--config", str(config), env={"PROD_PW": "s3cret"})
    assert res.exit_code == 2, res.output
    ((bootstrap, kwargs),) = connects
    assert bootstrap == "h1:9123,h2:9123"
    assert kwargs["sasl"].username == "ops"
    assert "s3cret" not in res.output


def test_profile_with_a_missing_password_variable_is_bad_configuration(
    connects: list[tuple[Any, dict[str, Any]]], tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[profiles.p]\nbootstrap = ["h:1"]\nsasl_user = "u"\npassword_env = "NOPE"\n')
    res = preview("--profile", "p", "--config", str(config), env={"NOPE": ""})
    assert res.exit_code == 3 and "NOPE" in res.output and connects == []


def test_local_uses_the_running_cluster(
    connects: list[tuple[Any, dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    class FakeLocal:
        def __init__(self, run_dir: Path | None) -> None:
            assert run_dir == tmp_path

        def status(self) -> ClusterDescription:
            return local_description("127.0.0.1:35783")

    import konsole.localcluster

    monkeypatch.setattr(konsole.localcluster, "LocalCluster", FakeLocal)
    res = preview("--local", "--run-dir", str(tmp_path))
    assert res.exit_code == 2, res.output
    assert connects[0][0] == "127.0.0.1:35783"


def test_local_without_a_running_cluster_is_unavailable(
    connects: list[tuple[Any, dict[str, Any]]], tmp_path: Path
) -> None:
    res = preview("--local", "--run-dir", str(tmp_path / "none"))
    assert res.exit_code == 69 and "--local" in res.output and connects == []


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--bootstrap", "b:1"], {}, "b:1"),
        ([], {"FLUSS_BOOTSTRAP": "e:2"}, "e:2"),
        ([], {}, "localhost:9123"),
    ],
)
def test_bootstrap_environment_and_default(
    connects: list[tuple[Any, dict[str, Any]]],
    args: list[str],
    env: dict[str, str],
    expected: str,
) -> None:
    assert preview(*args, env=env).exit_code == 2
    assert connects[0][0] == expected


@pytest.mark.parametrize(
    "args",
    [["--bootstrap", "b:1", "--local"], ["--bootstrap", "h:x"], ["--profile", "nope"]],
)
def test_conflicting_or_bad_options_exit_3(
    connects: list[tuple[Any, dict[str, Any]]], tmp_path: Path, args: list[str]
) -> None:
    res = preview(*args, "--config", str(tmp_path / "missing.toml"))
    assert res.exit_code == 3, res.output
    assert connects == []

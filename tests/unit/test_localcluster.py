"""Local cluster runner: argument parsing, config rendering and bad input, without Java."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from konsole.cli.main import main
from konsole.localcluster import jars
from konsole.localcluster.cluster import (
    COORDINATOR,
    TABLET_SERVER,
    ClusterError,
    ClusterState,
    LocalCluster,
    parse_sasl_user,
    parse_setting,
    parse_target,
)
from konsole.localcluster.config import write_server_config
from konsole.localcluster.java import JavaError, find_java, parse_java_major
from konsole.localcluster.versions import SUPPORTED_VERSIONS, UnknownVersionError, lookup


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("a.b=1", (None, "a.b", "1")),
        (
            "ts1:server.data-disk.write-limit-ratio=0.001",
            ("ts1", "server.data-disk.write-limit-ratio", "0.001"),
        ),
        ("coordinator:x=y=z", ("coordinator", "x", "y=z")),
        ("k=a:b", (None, "k", "a:b")),
    ],
)
def test_parse_setting(spec: str, expected: tuple[str | None, str, str]) -> None:
    assert parse_setting(spec) == expected


@pytest.mark.parametrize("spec", ["novalue", "=1", "bogus7:key=1"])
def test_parse_setting_rejects(spec: str) -> None:
    with pytest.raises(ClusterError):
        parse_setting(spec)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("ts", (TABLET_SERVER, None)),
        ("ts2", (TABLET_SERVER, 2)),
        ("tablet-server0", (TABLET_SERVER, 0)),
        ("cs", (COORDINATOR, None)),
        ("coordinator1", (COORDINATOR, 1)),
    ],
)
def test_parse_target(target: str, expected: tuple[str, int | None]) -> None:
    assert parse_target(target) == expected


def test_parse_sasl_user() -> None:
    assert parse_sasl_user("admin:s3cret") == ("admin", "s3cret")
    for bad in ["admin", ":x", "a b:x", "admin:pa,ss", 'admin:pa"ss']:
        with pytest.raises(ClusterError):
            parse_sasl_user(bad)


@pytest.mark.parametrize(
    ("text", "major"),
    [
        ("    java.specification.version = 17\n", 17),
        ("    java.specification.version = 1.8\n", 8),
        ('openjdk version "21.0.2" 2024-01-16\n', 21),
        ('java version "1.8.0_392"\n', 8),
    ],
)
def test_parse_java_major(text: str, major: int) -> None:
    assert parse_java_major(text) == major


def test_no_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(JavaError, match="no Java runtime found"):
        find_java()


def test_old_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "java"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho '    java.specification.version = 1.8' >&2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(JavaError, match="Java 11 or newer"):
        find_java()


def test_unknown_version_lists_supported() -> None:
    with pytest.raises(UnknownVersionError) as info:
        lookup("2.0")
    for v in SUPPORTED_VERSIONS:
        assert v in str(info.value)


def test_cli_unknown_version(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["cluster", "start", "--version", "9.9", "--run-dir", str(tmp_path)]
    )
    assert result.exit_code == 3  # a usage error, refused before anything starts
    assert "supported: 1.0.0, 0.9.1-incubating" in result.output


def test_cli_standby_needs_a_version_with_one(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "cluster",
            "start",
            "--version",
            "0.9.1-incubating",
            "--coordinators",
            "2",
            "--run-dir",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 1
    assert "no standby coordinator" in result.output


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["stop"], "nothing is running in"),
        (["status"], "no cluster in"),
        (["kill", "ts", "1"], "no cluster in"),
        (["stop-server", "ts", "1"], "no cluster in"),
        (["start-server", "ts", "1"], "no cluster in"),
        (["seed"], "no running cluster in"),
    ],
)
def test_every_cluster_command_without_a_cluster_exits_69(
    tmp_path: Path, args: list[str], words: str
) -> None:
    # one code for one situation (docs/cli.md): `stop` used to exit 0 here and `kill` 1
    result = CliRunner().invoke(main, ["cluster", *args, "--run-dir", str(tmp_path)])
    assert result.exit_code == 69, result.output
    assert result.stderr.startswith(f"konsole: error: {words} {tmp_path}")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("command", ["kill", "stop-server"])
def test_set_is_offered_by_start_server_only(tmp_path: Path, command: str) -> None:
    helped = CliRunner().invoke(main, ["cluster", command, "--help"]).output
    assert "--set" not in helped
    assert "--set" in CliRunner().invoke(main, ["cluster", "start-server", "--help"]).output
    refused = CliRunner().invoke(main, ["cluster", command, "ts", "1", "--set", "a=b"])
    assert refused.exit_code == 3 and "No such option '--set'" in refused.stderr


MAVEN_MISSING = [
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-dependency-plugin:3.6.0:"
    "copy-dependencies (default-cli) on project fluss-runtime: Could not resolve dependencies "
    "for project konsole.local:fluss-runtime:pom:1: Could not find artifact "
    "org.apache.fluss:fluss-server:jar:1.0.0 in central (https://example.invalid/m2) "
    "-> [Help 1]",
    "[ERROR] ",
    "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.",
    "[ERROR] Re-run Maven using the -X switch to enable full debug logging.",
    "[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/DependencyResolutionException",
]


def test_maven_error_summary_keeps_the_cause_only() -> None:
    summary = jars.maven_error_summary(MAVEN_MISSING)
    assert "Could not find artifact org.apache.fluss:fluss-server:jar:1.0.0" in summary
    assert "http" not in summary
    assert "-X switch" not in summary
    assert len(summary.splitlines()) == 1


def test_maven_failure_is_a_summary_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A fake mvn that fails like Maven does: ensure_jars raises JarFetchError with the cause."""
    fake = tmp_path / "bin" / "mvn"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\n" + "".join(f"echo '{line}'\n" for line in MAVEN_MISSING) + "exit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    monkeypatch.setenv("KONSOLE_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(jars.JarFetchError) as info:
        jars.ensure_jars("0.9.1-incubating", progress=lambda _line: None)
    assert str(info.value).startswith("Failed to execute goal")
    assert "Could not find artifact" in str(info.value)
    assert not jars.is_cached("0.9.1-incubating")


def _state(cluster: LocalCluster, users: bool) -> ClusterState:
    state = ClusterState(
        version="0.9.1-incubating",
        lib="/lib",
        java="java",
        java_major=17,
        sasl_users=["admin"] if users else [],
        settings=[],
    )
    names = ["rpc", "client"] if users else ["rpc"]
    state.servers.append(cluster._new_server("zookeeper", 0, ["client"]))
    state.servers.append(cluster._new_server(COORDINATOR, 0, [*names, "metrics"]))
    state.servers.append(cluster._new_server(TABLET_SERVER, 0, [*names, "metrics"]))
    state.servers.append(cluster._new_server(TABLET_SERVER, 1, [*names, "metrics"]))
    return state


def _yaml(path: str) -> dict[str, str]:
    text = (Path(path) / "server.yaml").read_text()
    return dict(line.split(": ", 1) for line in text.splitlines())


def test_server_config_with_sasl_and_targeted_settings(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path)
    state = _state(cluster, users=True)
    settings = [parse_setting("ts1:server.x=1"), parse_setting("kv.y=2")]
    for s in state.servers:
        write_server_config(cluster.run_dir, state, s, {"admin": "pw"}, settings)
    coord, ts0, ts1 = state.servers[1], state.servers[2], state.servers[3]
    c = _yaml(coord.config_dir)
    assert c["default.replication.factor"] == "2"
    assert c["security.protocol.map"] == "CLIENT:SASL, FLUSS:PLAINTEXT"
    assert c["bind.listeners"] == (
        f"FLUSS://127.0.0.1:{coord.ports['rpc']}, CLIENT://127.0.0.1:{coord.ports['client']}"
    )
    assert 'user_admin="pw"' in c["security.sasl.plain.jaas.config"]
    assert "server.x" not in c and c["kv.y"] == "2"
    t1 = _yaml(ts1.config_dir)
    assert t1["tablet-server.id"] == "1" and t1["server.x"] == "1"
    assert "server.x" not in _yaml(ts0.config_dir)
    assert (Path(ts0.config_dir) / "server.yaml").stat().st_mode & 0o077 == 0


def test_description_hides_passwords(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path)
    state = _state(cluster, users=True)
    secret = "Zr9-unit-Secret"
    users = dict([parse_sasl_user(f"admin:{secret}")])
    for s in state.servers:
        write_server_config(cluster.run_dir, state, s, users, [])
    cluster._save(state)
    # the secret reached the servers' config (so the checks below can fail) ...
    assert secret in (Path(state.servers[1].config_dir) / "server.yaml").read_text()
    desc = cluster.describe(state)
    # ... and nothing the runner describes or saves
    assert secret not in json.dumps(desc.to_dict()) and desc.sasl.users == ("admin",)
    assert desc.to_dict()["sasl"] == {"enabled": True, "mechanism": "PLAIN", "users": ["admin"]}
    assert secret not in cluster.state_path.read_text()
    assert secret not in repr(cluster.load())
    # clients use the SASL listener; servers talk on the internal one
    coord = state.servers[1]
    assert desc.bootstrap_servers.split(",")[0] == f"127.0.0.1:{coord.ports['client']}"
    assert not desc.running


def test_description_json_shape_is_the_cli_contract(tmp_path: Path) -> None:
    """`cluster start/status --json` print ``to_dict()``: keys and nesting stay as they were."""
    cluster = LocalCluster(tmp_path)
    doc = cluster.describe(_state(cluster, users=False)).to_dict()
    assert list(doc) == [
        "version",
        "fluss_home",
        "run_dir",
        "running",
        "bootstrap_servers",
        "internal_bootstrap_servers",
        "sasl",
        "zookeeper",
        "ready_seconds",
        "processes",
        "run_id",
    ]
    assert doc["sasl"] == {"enabled": False}
    assert [p["role"] for p in doc["processes"]] == [
        "zookeeper",
        "coordinator",
        "tablet-server",
        "tablet-server",
    ]
    assert set(doc["processes"][1]) == {
        "role",
        "id",
        "pid",
        "alive",
        "ports",
        "log",
        "metrics_url",
        "endpoint",
        "coordinator_role",
        "version",
    }
    json.dumps(doc)  # plain JSON values only


class _Signals:
    """Stands in for the cluster's processes: every server alive; records each signal."""

    def __init__(self) -> None:
        self.sent: list[tuple[list[str], int, float]] = []

    def alive(self, pid: int | None) -> bool:
        return pid is not None

    def signal_and_wait(self, servers: list[Any], sig: int, timeout: float) -> None:
        self.sent.append(([f"{s.role} {s.id}" for s in servers], sig, timeout))


def _running(tmp_path: Path) -> tuple[LocalCluster, _Signals]:
    cluster = LocalCluster(tmp_path)
    state = _state(cluster, users=False)
    for pid, server in enumerate(state.servers, start=1000):
        server.pid = pid
    cluster._save(state)
    fake = _Signals()
    cluster.processes = fake  # type: ignore[assignment]
    return cluster, fake


def test_a_graceful_stop_terms_the_roles_in_turn(tmp_path: Path) -> None:
    cluster, fake = _running(tmp_path)
    stopped = cluster.stop(timeout=30)
    assert fake.sent == [
        (["tablet-server 0", "tablet-server 1"], signal.SIGTERM, 30),
        (["coordinator 0"], signal.SIGTERM, 30),
        (["zookeeper 0"], signal.SIGTERM, 30),
    ]
    assert len(stopped) == 4
    assert all(s.pid is None for s in cluster.load().servers)  # type: ignore[union-attr]


def test_a_throwaway_stop_kills_every_server_at_once(tmp_path: Path) -> None:
    cluster, fake = _running(tmp_path)
    stopped = cluster.stop(graceful=False)
    everyone = ["zookeeper 0", "coordinator 0", "tablet-server 0", "tablet-server 1"]
    assert fake.sent == [(everyone, signal.SIGKILL, 10)]
    assert sorted(stopped) == sorted(everyone)
    assert all(s.pid is None for s in cluster.load().servers)  # type: ignore[union-attr]

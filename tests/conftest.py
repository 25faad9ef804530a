"""Shared pytest set-up: hypothesis profiles and the session-scoped real Fluss cluster."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from konsole.localcluster import DEFAULT_VERSION, LocalCluster

# "ci" runs in `make test`; "fuzz" is `make fuzz` (much longer).
settings.register_profile("ci", max_examples=200, deadline=None)
settings.register_profile(
    "fuzz", max_examples=20_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TABLET_SERVERS = 3


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fluss-version",
        default=os.environ.get("KONSOLE_TEST_FLUSS_VERSION", DEFAULT_VERSION),
        help="Fluss server version for the live tests",
    )


@pytest.fixture(scope="session")
def fluss_version(request: pytest.FixtureRequest) -> str:
    return str(request.config.getoption("--fluss-version"))


@pytest.fixture(scope="session")
def fluss_cluster(
    fluss_version: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """A real cluster (1 coordinator, 3 tablet servers) on loopback for the whole session."""
    run_dir = tmp_path_factory.mktemp("fluss-cluster")
    cluster = LocalCluster(run_dir)
    desc = cluster.start(fluss_version, tablet_servers=TABLET_SERVERS, ready_timeout=180)
    desc["cluster"] = cluster
    try:
        yield desc
    finally:
        cluster.stop(timeout=60)
        leftover = our_java_processes(Path(desc["run_dir"]))
        assert not leftover, f"Java processes of the test cluster remain: {leftover}"


@pytest.fixture(scope="session")
def bootstrap(fluss_cluster: dict[str, Any]) -> str:
    return str(fluss_cluster["bootstrap_servers"])


def our_java_processes(run_dir: Path) -> list[int]:
    """Pids whose command line carries the run dir marker the runner puts on each server."""
    marker = f"-Dkonsole.run.dir={run_dir}".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in args and state != "Z":
            pids.append(int(proc.name))
    return pids


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/live talks to a real cluster: mark it so `-m "not live"` works."""
    for item in items:
        if "/tests/live/" in str(item.path):
            item.add_marker(pytest.mark.live)

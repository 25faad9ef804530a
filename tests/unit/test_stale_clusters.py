"""The session-start sweep of clusters a killed pytest left running: whose servers it
stops, and whose it never touches (tests/_testutil/stale_clusters.py)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests._testutil.stale_clusters import (
    OWNER_VAR,
    Owner,
    Server,
    claim,
    is_stale,
    owner_in,
    start_time,
    sweep,
)

ALIVE = Owner(100, 5000)


def _running(owner: Owner) -> bool:
    return owner == ALIVE


def test_a_server_whose_owner_is_gone_is_stale() -> None:
    assert is_stale(Server(7, 1, "/tmp/x/run", Owner(101, 5000)), _running)


def test_a_recycled_owner_pid_is_not_the_owner() -> None:
    # Same pid, another start time: the pytest that owned the cluster is gone.
    assert is_stale(Server(7, 1, "/tmp/x/run", Owner(100, 9999)), _running)


def test_a_server_whose_owner_runs_is_left_alone() -> None:
    assert not is_stale(Server(7, 1, "/tmp/x/run", ALIVE), _running)


def test_a_server_without_a_known_owner_is_left_alone() -> None:
    assert not is_stale(Server(7, 1, "/tmp/x/run", None), _running)


@pytest.mark.parametrize(
    ("environ", "owner"),
    [
        (b"A=1\0KONSOLE_TEST_OWNER=42:77\0B=2\0", Owner(42, 77)),
        (b"A=1\0B=2\0", None),
        (b"KONSOLE_TEST_OWNER=42\0", None),
        (b"KONSOLE_TEST_OWNER=x:77\0", None),
        (b"KONSOLE_TEST_OWNER=0:77\0", None),
        (b"KONSOLE_TEST_OWNER=:\0", None),
        (b"", None),
    ],
)
def test_the_owner_is_read_from_the_environment(environ: bytes, owner: Owner | None) -> None:
    assert owner_in(environ) == owner


def _stat(pid: int, started: int) -> str:
    # Fields after the command name: state is field 3, start time field 22.
    rest = ["S", *["0"] * 18, str(started), "0"]
    return f"{pid} (java weird) name) {' '.join(rest)}\n"


def _process(proc: Path, pid: int, started: int, args: list[str], env: bytes | None) -> None:
    entry = proc / str(pid)
    entry.mkdir()
    (entry / "stat").write_text(_stat(pid, started))
    (entry / "cmdline").write_bytes(b"\0".join(a.encode() for a in args) + b"\0")
    if env is not None:
        (entry / "environ").write_bytes(env)


def test_the_sweep_kills_only_servers_of_a_gone_owner(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    java = ["java", "-Xmx1g"]
    _process(proc, 100, 5000, ["python", "-m", "pytest"], b"")  # a running pytest
    owned_alive = b"KONSOLE_TEST_OWNER=100:5000\0"
    owned_gone = b"KONSOLE_TEST_OWNER=200:6000\0"
    _process(proc, 11, 1, [*java, "-Dkonsole.run.dir=/tmp/a/run"], owned_alive)
    _process(proc, 12, 1, [*java, "-Dkonsole.run.dir=/tmp/b/run"], owned_gone)
    _process(proc, 13, 1, [*java, "-Dkonsole.run.dir=/tmp/b/run"], owned_gone)
    _process(proc, 14, 1, [*java, "-Dkonsole.run.dir=/tmp/user/run"], b"HOME=/x\0")
    _process(proc, 15, 1, [*java, "-Dkonsole.run.dir=/tmp/other-user/run"], None)
    _process(proc, 16, 1, ["java", "SomethingElse"], owned_gone)
    (proc / "self").mkdir()
    killed: list[tuple[int, int]] = []

    gone = sweep(lambda pid, sig: killed.append((pid, sig)), proc)

    assert sorted(killed) == [(12, signal.SIGKILL), (13, signal.SIGKILL)]
    assert {s.run_dir for s in gone} == {"/tmp/b/run"}


def test_this_session_claims_what_it_starts() -> None:
    environ: dict[str, str] = {}
    me = claim(environ)
    assert environ[OWNER_VAR] == f"{os.getpid()}:{me.started}"
    assert start_time(os.getpid()) == me.started
    assert start_time(2**22 + 1) is None  # above the kernel's pid limit: no such process

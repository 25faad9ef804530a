"""A starting server that lost a port race is started again on fresh ports.

The processes are stand-ins (no JVM); what is read is the server's real log file.
"""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from konsole.errors import ClusterError
from konsole.localcluster import readiness
from konsole.localcluster.processes import REPORTER_UNBOUND
from konsole.localcluster.state import COORDINATOR, TABLET_SERVER, ClusterState, ServerState

REPORTER_LINE = (
    "2026-12-07 18:00:00,000 ERROR ReporterSetup [main] - "
    + REPORTER_UNBOUND.decode()
    + ". Ports: 41234\n"
)


class StandInProcesses:
    """Tells a pid alive unless it is in ``dead``; records what was signalled."""

    def __init__(self) -> None:
        self.dead: set[int] = set()
        self.signalled: list[tuple[str, int]] = []

    def alive(self, pid: int | None) -> bool:
        return pid is not None and pid not in self.dead

    def signal_and_wait(self, servers: list[ServerState], sig: int, timeout: float) -> None:
        for s in servers:
            self.signalled.append((s.role, s.id))
            assert s.pid is not None
            self.dead.add(s.pid)


def _server(tmp_path: Path, role: str, sid: int, pid: int) -> ServerState:
    log = tmp_path / f"{role}-{sid}.log"
    log.write_text("2026-12-07 17:00:00,000 INFO  TabletServer [main] - starting\n")
    ports = {"rpc": 1000 + sid, "metrics": 2000 + sid}
    return ServerState(role, sid, ports, str(tmp_path), str(tmp_path), str(log), pid=pid)


def _state(*servers: ServerState) -> ClusterState:
    return ClusterState("1.0", "lib", "java", 17, [], [], servers=list(servers))


class Relaunch:
    """The reallocate callback: fresh ports and a new pid."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def __call__(self, server: ServerState) -> None:
        self.calls.append((server.role, server.id))
        server.ports = {name: port + 100 for name, port in server.ports.items()}
        server.pid = (server.pid or 0) + 1000


class Logging:
    """readiness_gap's stand-in. The server logs ``line`` during its start-up, after
    wait_ready began: at the first call, and (``every_start``) the first call after each
    relaunch. The gap stays open until ``closed()``."""

    def __init__(
        self, server: ServerState, line: str, relaunch: Relaunch, every_start: bool
    ) -> None:
        self.server, self.line, self.relaunch, self.every_start = (
            server,
            line,
            relaunch,
            every_start,
        )
        self.logged_at: int | None = None

    def __call__(self, processes: object, state: ClusterState) -> str | None:
        starts = len(self.relaunch.calls)
        if self.logged_at is None or (self.every_start and self.logged_at != starts):
            self.logged_at = starts
            with open(self.server.log, "a") as f:
                f.write(self.line)
        if self.relaunch.calls and not self.every_start:
            return None
        return f"{self.server.role} {self.server.id} metrics endpoint"


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    """wait_ready's pause between looks costs nothing here: the stand-ins change at once."""
    monkeypatch.setattr(
        readiness, "time", SimpleNamespace(monotonic=time.monotonic, sleep=lambda _: None)
    )


def _wait(processes: StandInProcesses, relaunch: Relaunch, *servers: ServerState) -> None:
    deadline = time.monotonic() + 5
    readiness.wait_ready(processes, _state(*servers), relaunch, deadline)  # type: ignore[arg-type]


def test_a_server_running_without_its_metrics_port_is_started_again_on_fresh_ports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = _server(tmp_path, COORDINATOR, 0, pid=10)
    ts = _server(tmp_path, TABLET_SERVER, 1, pid=11)
    processes, relaunch = StandInProcesses(), Relaunch()
    # The message twice: in the error line and in its stack trace; one start lost its port.
    lines = REPORTER_LINE + "java.lang.RuntimeException: " + REPORTER_LINE
    monkeypatch.setattr(readiness, "readiness_gap", Logging(ts, lines, relaunch, every_start=False))
    _wait(processes, relaunch, cs, ts)
    assert processes.signalled == [(TABLET_SERVER, 1)]  # the old process does not stay
    assert relaunch.calls == [(TABLET_SERVER, 1)]
    assert ts.ports == {"rpc": 1101, "metrics": 2101} and ts.pid == 1011


def test_a_line_left_in_the_log_by_an_earlier_start_is_not_read_as_this_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ts = _server(tmp_path, TABLET_SERVER, 1, pid=11)
    with open(ts.log, "a") as f:
        f.write(REPORTER_LINE)  # the log is appended to across starts
    processes, relaunch = StandInProcesses(), Relaunch()
    monkeypatch.setattr(readiness, "readiness_gap", lambda p, s: None)
    _wait(processes, relaunch, ts)
    assert relaunch.calls == [] and processes.signalled == []


def test_a_server_that_keeps_losing_its_metrics_port_fails_the_start_with_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ts = _server(tmp_path, TABLET_SERVER, 1, pid=11)
    processes, relaunch = StandInProcesses(), Relaunch()
    logging = Logging(ts, REPORTER_LINE, relaunch, every_start=True)
    monkeypatch.setattr(readiness, "readiness_gap", logging)
    with pytest.raises(ClusterError, match=r"ran on without its metrics port, 4 times") as err:
        _wait(processes, relaunch, ts)
    assert len(relaunch.calls) == readiness.BIND_RETRIES
    assert REPORTER_UNBOUND.decode() in str(err.value)  # the end of its log


def test_a_server_that_exited_for_another_reason_fails_the_start_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ts = _server(tmp_path, TABLET_SERVER, 1, pid=11)
    processes, relaunch = StandInProcesses(), Relaunch()
    processes.dead.add(11)
    monkeypatch.setattr(readiness, "readiness_gap", lambda p, s: "x")
    with pytest.raises(ClusterError, match=r"tablet-server 1 exited during start-up"):
        _wait(processes, relaunch, ts)
    assert relaunch.calls == []

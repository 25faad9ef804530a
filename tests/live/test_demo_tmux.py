"""`konsole demo --incident` as a person runs it: the real binary in a real terminal (tmux).

The demo starts a local cluster, writes the demo tables, opens the console and plays its
scripted incident; keys are typed with ``tmux send-keys`` and the screen read with
``capture-pane``; the console's history is read as it records. Quitting the console must
stop the cluster: no server process of the run dir may remain.

tmux runs on its own socket, killed at the end; the history goes to a temporary user data
dir (``XDG_DATA_HOME``), never the real one. Every wait is bounded in time.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from konsole.localcluster.incident import incident_steps
from konsole.localcluster.seed import DEMO_TABLES
from store import HistoryError, open_reader
from tests._testutil.system_tools import need_binary
from tests._testutil.waiting import wait_until
from tests.conftest import FlussServer, our_java_processes

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.client_side(
        "the demo is konsole's own (its cluster runner, seed, console and incident script, each"
        " proven on both lines by its own tests); the server line changes only the incident's"
        " steps, and the 1.0 line's are 0.9.1's (a tablet server stopped, started) plus a write"
        " lock and a coordinator failover"
    ),
]


@dataclass
class Terminal:
    socket: str
    binary: str

    def tmux(self, *args: str) -> str:
        out = subprocess.run(
            [self.binary, "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        return out.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "demo")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "demo", *keys)

    def wait(self, what: str, predicate: Callable[[str], bool], timeout: float) -> str:
        deadline = time.monotonic() + timeout
        text = ""
        for _ in range(int(timeout / 0.25) + 1):
            text = self.screen()
            if predicate(text):
                return text
            if time.monotonic() > deadline:
                break
            time.sleep(0.25)
        raise AssertionError(f"{what}: not within {timeout:g}s; the screen:\n{text}")


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    # skips where tmux is missing; fails under CI=true (.ci/run installs it)
    term = Terminal(f"konsole-test-{os.getpid()}", need_binary("tmux"))
    try:
        yield term
    finally:
        term.tmux("kill-server")


#: Seconds before the demo's scripted incident begins: the console has polled by then.
INCIDENT_AFTER = 20


def _recorded(data: Path) -> tuple[list[str], list[str]]:
    """The demo's history so far: its event kinds and its operator notes' texts."""
    files = sorted((data / "konsole" / "history").glob("*.sqlite"))
    if len(files) != 1:
        return [], []
    try:
        with open_reader(files[0]) as reader:
            return [e.kind for e in reader.events()], [n.text for n in reader.notes()]
    except HistoryError:
        return [], []


def _said(notes: list[str]) -> list[str]:
    """The notes of the incident's steps (and its end), without the announcement."""
    return [n for n in notes if n.startswith("demo incident: ") and "begins in" not in n]


def test_demo_plays_its_incident_into_the_history_and_quitting_stops_the_cluster(
    fluss_server: FlussServer, terminal: Terminal, tmp_path: Path
) -> None:
    """`konsole demo --incident` (its minute's wait shortened): the console opens and lists
    the demo's tables; the scripted incident's steps become notes in the console's history,
    in order, and what they did becomes events there (the tablet server left and joined
    again; on the 1.0 line the coordinator failover too); quitting stops the incident
    (no step failed) and the cluster."""
    run_dir = tmp_path / "demo-cluster"
    data = tmp_path / "data"
    command = [
        sys.executable,
        "-m",
        "konsole.cli",
        "demo",
        *fluss_server.cli_args(),
        "--tablet-servers",
        "1",
        "--run-dir",
        str(run_dir),
        "--incident",
        "--incident-after",
        str(INCIDENT_AFTER),
    ]
    steps = incident_steps(0, one_zero=fluss_server.is_1_0)
    events = {"server_left", "server_joined"} | (
        {"coordinator_failover"} if fluss_server.is_1_0 else set()
    )
    env = f"XDG_DATA_HOME={shlex.quote(str(data))} TERM=xterm-256color"
    terminal.tmux(
        "new-session",
        "-d",
        "-s",
        "demo",
        "-x",
        "120",
        "-y",
        "36",
        f"env {env} {shlex.join(command)}; echo DEMO-EXIT=$?; sleep 600",
    )
    try:
        terminal.wait("the console's first poll", lambda s: " LIVE " in s, 300)
        terminal.keys("t")
        table = DEMO_TABLES[0].split(".", 1)[1]
        terminal.wait(f"the tables screen lists {table}", lambda s: table in s, 30)

        # the steps' own timetable (on 1.0 the failover is the third step, at 55 s)
        # The steps that make those events: the stop and start (and on 1.0 the kill).
        needed = 3 if fluss_server.is_1_0 else 2
        kinds, notes = wait_until(
            lambda: _recorded(data),
            lambda seen: events <= set(seen[0]) and len(_said(seen[1])) >= needed,
            "the incident's events and its steps' notes in the history",
            timeout=240,
            step=1,
        )
        assert kinds.index("server_left") < kinds.index("server_joined"), kinds
        said = _said(notes)
        planned = [f"demo incident: {s.what}" for s in steps] + ["demo incident: over"]
        assert said == planned[: len(said)], said  # in order, none failed
        terminal.keys("q")
        text = terminal.wait("the demo's exit", lambda s: "DEMO-EXIT=" in s, 120)
        assert "DEMO-EXIT=0" in text, text
        summary = re.search(rf"incident: (\d) of {len(steps)} steps done\n", text)
        assert summary, text
        # the last needed step may still be under way when q stops the script
        assert int(summary.group(1)) >= needed - 1, summary.group(0)
        assert "stopping:" in text, text
        assert not our_java_processes(run_dir)
    finally:
        if our_java_processes(run_dir):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "konsole.cli",
                    "cluster",
                    "stop",
                    "--run-dir",
                    str(run_dir),
                ],
                timeout=120,
                check=False,
            )

"""`konsole demo` as a person runs it: the real binary in a real terminal (tmux).

The demo starts a local cluster, writes the demo tables, opens the console; keys are
typed with ``tmux send-keys`` and the screen read with ``capture-pane``. Quitting the
console must stop the cluster: no server process of the run dir may remain.

tmux runs on its own socket, killed at the end; the history goes to a temporary user data
dir (``XDG_DATA_HOME``), never the real one. Every wait is bounded in time.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from konsole.localcluster.seed import DEMO_TABLES
from tests.conftest import FlussServer, our_java_processes

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(420),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@dataclass
class Terminal:
    socket: str

    def tmux(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10
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
    term = Terminal(f"konsole-test-{os.getpid()}")
    try:
        yield term
    finally:
        term.tmux("kill-server")


def test_demo_opens_the_console_and_quitting_stops_the_cluster(
    fluss_server: FlussServer, terminal: Terminal, tmp_path: Path
) -> None:
    run_dir = tmp_path / "demo-cluster"
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
    ]
    env = f"XDG_DATA_HOME={shlex.quote(str(tmp_path / 'data'))} TERM=xterm-256color"
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
        terminal.keys("q")
        text = terminal.wait("the demo's exit", lambda s: "DEMO-EXIT=" in s, 120)
        assert "DEMO-EXIT=0" in text, text
        assert "stopping:" in text, text
        assert not our_java_processes(run_dir)
        assert (tmp_path / "data" / "konsole" / "history").is_dir()
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

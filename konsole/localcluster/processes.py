"""The servers as operating-system processes: launch, tell ours alive, signal, read logs.

A process is *ours* when its command line carries the run dir's marker
(``-Dkonsole.run.dir=...``): a pid recycled by a stranger is never signalled.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterable
from pathlib import Path

from konsole.localcluster.state import HEAP, HOST, MAIN_CLASS, ZOOKEEPER, ClusterState, ServerState


def server_tmp_dir(server: ServerState) -> Path:
    """The JVM's ``java.io.tmpdir``: a dir of its own in the server's run dir.

    A tablet server copies RocksDB's native library (10 MB a copy) into its temp dir when it
    opens its first KV table, and a killed server never removes them. In the machine's
    ``/tmp`` the tests' and demos' servers had left 2,447 copies (24.5 GB), enough to make
    the disk read 80% used: the 1.0 servers report that ratio, and the health rules warned
    of it in every test that expected OK. Here the copies go with the cluster's run dir.
    """
    return Path(server.config_dir).parent / "tmp"


class Processes:
    """The processes of the cluster in ``run_dir``."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.marker = f"-Dkonsole.run.dir={run_dir}"

    def alive(self, pid: int | None) -> bool:
        """Alive and ours: the pid's command line carries this run dir's marker."""
        if pid is None:
            return False
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)  # reap our own exited children (no zombies)
        proc = Path(f"/proc/{pid}")
        if proc.exists():
            try:
                status = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                raw = (proc / "cmdline").read_bytes()
            except OSError:
                return False
            if status[0] == "Z":
                return False
            # Right after Popen returns, the child may still be inside execve: its new
            # command line is not mapped yet and reads as empty. That is our server
            # starting, not a stranger with a recycled pid.
            return not raw.strip(b"\0") or self.marker.encode() in raw.split(b"\0")
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True

    def any_alive(self, servers: Iterable[ServerState]) -> bool:
        return any(self.alive(s.pid) for s in servers)

    def command(self, state: ClusterState, server: ServerState) -> list[str]:
        from konsole.localcluster.java import JavaRuntime

        java = JavaRuntime(state.java, state.java_major)
        args = [
            state.java,
            f"-Xmx{HEAP[server.role]}",
            *java.jvm_flags(),
            f"-Djava.io.tmpdir={server_tmp_dir(server)}",
            f"-Dlog.file={server.log}",
            f"-Dlog4j.configurationFile=file:{self.run_dir / 'log4j.properties'}",
            "-Dlog4j.shutdownHookEnabled=false",
            self.marker,
            "-cp",
            state.java_class_path(server),
            MAIN_CLASS[server.role],
        ]
        if server.role == ZOOKEEPER:
            return [*args, str(Path(server.config_dir) / "zoo.cfg")]
        return [*args, "--configDir", server.config_dir]

    def launch(self, state: ClusterState, server: ServerState) -> None:
        """Start ``server`` detached (its own session), output to ``<log>.out``."""
        out = Path(server.log).with_suffix(".out")
        # The server's own temp dir, emptied: what an earlier run of it left there (it may
        # have been killed) is never read again.
        tmp = server_tmp_dir(server)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        # An empty plugins dir: reporters come from the class path; this avoids a warning.
        plugins = self.run_dir / "plugins"
        plugins.mkdir(exist_ok=True)
        env["FLUSS_PLUGINS_DIR"] = str(plugins)
        with open(out, "ab") as sink:
            proc = subprocess.Popen(
                self.command(state, server),
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.run_dir,
                env=env,
                start_new_session=True,
            )
        server.pid = proc.pid

    def _wait_gone(self, servers: list[ServerState], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.any_alive(servers):
                return True
            time.sleep(0.1)
        return False

    def _send(self, servers: list[ServerState], sig: int) -> None:
        for s in servers:
            if s.pid is not None and self.alive(s.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(s.pid, sig)

    def signal_and_wait(self, servers: list[ServerState], sig: int, timeout: float) -> None:
        """Send ``sig``, wait up to ``timeout``, then SIGKILL what is left (10 s more)."""
        self._send(servers, sig)
        if self._wait_gone(servers, timeout):
            return
        self._send(servers, signal.SIGKILL)
        self._wait_gone(servers, 10)


def tail_lines(path: Path, lines: int, max_bytes: int = 64 * 1024) -> list[str]:
    """The last ``lines`` lines of a log, read from at most its last ``max_bytes``; [] when
    unreadable."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            data = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    return data.splitlines()[-lines:]


def tail(path: Path, lines: int) -> str:
    """:func:`tail_lines` as one text; empty when unreadable."""
    return "\n".join(tail_lines(path, lines))


def failure_text(server: ServerState, what: str, lines: int = 25) -> str:
    """Why a server failed, with the end of its log."""
    text = tail(Path(server.log), lines) or tail(Path(server.log).with_suffix(".out"), lines)
    return f"{server.role} {server.id} {what}; last lines of {server.log}:\n{text}"


def bind_failed(server: ServerState) -> bool:
    text = tail(Path(server.log), 200) + tail(Path(server.log).with_suffix(".out"), 200)
    return "Address already in use" in text or "BindException" in text


#: What Fluss's Prometheus reporter logs when every port it was given is taken. The server
#: goes on running, without a metrics endpoint.
REPORTER_UNBOUND = b"Could not start PrometheusReporter HTTP server on any configured port"


def _logs(server: ServerState) -> tuple[Path, Path]:
    return Path(server.log), Path(server.log).with_suffix(".out")


def log_marks(server: ServerState) -> tuple[int, int]:
    """Where what ``server`` logs next begins in each of its logs (kept across its starts)."""
    marks = []
    for path in _logs(server):
        try:
            marks.append(path.stat().st_size)
        except OSError:
            marks.append(0)
    return marks[0], marks[1]


def reporter_unbound_since(server: ServerState, marks: tuple[int, int]) -> bool:
    """Whether ``server``'s logs say after ``marks`` that its metrics port was taken."""
    for path, mark in zip(_logs(server), marks, strict=True):
        with contextlib.suppress(OSError), open(path, "rb") as f:
            f.seek(mark)
            if REPORTER_UNBOUND in f.read():
                return True
    return False


def four_letter(port: int, word: bytes) -> bytes | None:
    """ZooKeeper's answer to a four-letter word (``ruok`` -> ``imok``), or None."""
    try:
        with socket.create_connection((HOST, port), timeout=1.0) as s:
            s.sendall(word)
            return s.recv(64).strip()
    except OSError:
        return None


# Loopback only: never route a scrape through a proxy from the environment.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def scrape(port: int, timeout: float = 2.0) -> str | None:
    """A server's Prometheus text, or None when the endpoint does not serve yet."""
    try:
        with _NO_PROXY.open(f"http://{HOST}:{port}/metrics", timeout=timeout) as resp:
            return str(resp.read().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None

"""A real Alertmanager on loopback and the webhook receiver it notifies, for live tests.

:class:`Webhook` is a small threaded HTTP server that records every notification body
Alertmanager posts to it. :class:`AlertmanagerProcess` runs Debian's
``prometheus-alertmanager`` binary with its own storage dir, no cluster gossip
(``--cluster.listen-address=`` empty) and a route that forwards every alert to the
webhook at once (group_wait 1 s, group_interval 2 s, resolved notifications on); it can be
stopped and started again on the same port; :func:`pair` makes two that gossip on loopback
(an HA pair), with a configuration of the test's own. Every wait is bounded.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["PEER_TIMEOUT_S", "AlertmanagerProcess", "Notification", "Webhook", "free_port", "pair"]

#: A pair's peer timeout: the second instance waits this long before it would notify, so a
#: duplicate notification shows up this much later (wait longer before counting). Keep the
#: route's group_interval well above it: a flush of the second instance that waited across
#: the first one's resolved notification sends "firing" again (Alertmanager's own race).
PEER_TIMEOUT_S = 2.0
#: Starts tried when a port was taken between its choice and the bind.
BIND_ATTEMPTS = 3


class _PortTaken(Exception):
    """Alertmanager exited at start: one of its ports was taken."""


_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Notification:
    received: float
    body: dict[str, Any]

    @property
    def alerts(self) -> list[dict[str, Any]]:
        return list(self.body.get("alerts", []))


@dataclass
class Webhook:
    """Records Alertmanager's webhook notifications (one JSON object per POST)."""

    received: list[Notification] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    def start(self) -> Webhook:
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(size) or b"{}")
                with hook.lock:
                    hook.received.append(Notification(time.time(), body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def mark(self) -> int:
        with self.lock:
            return len(self.received)

    def alerts(self, since: int = 0) -> list[dict[str, Any]]:
        with self.lock:
            return [a for n in self.received[since:] for a in n.alerts]

    def wait_alert(self, since: int, status: str, timeout: float, **labels: str) -> dict[str, Any]:
        """The first alert with ``status`` and these labels received after ``since``."""

        def match(a: dict[str, Any]) -> bool:
            return a.get("status") == status and all(
                a["labels"].get(k) == v for k, v in labels.items()
            )

        found = wait_for(lambda: next((a for a in self.alerts(since) if match(a)), None), timeout)
        if found is None:
            seen = [(a.get("status"), a.get("labels")) for a in self.alerts(since)]
            raise AssertionError(
                f"no {status} alert {labels} within {timeout:g}s; received since: {seen}"
            )
        return found

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def wait_for(probe: Callable[[], Any], timeout: float, every: float = 0.2) -> Any:
    """``probe()``'s first truthy value within ``timeout`` seconds, else None (bounded)."""
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout / every) + 2):
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            break
        time.sleep(every)
    return None


class AlertmanagerProcess:
    """``prometheus-alertmanager`` on 127.0.0.1, notifying ``webhook_url``."""

    def __init__(
        self, binary: str, work: Path, webhook_url: str, *, config_text: str | None = None
    ) -> None:
        """``config_text``: the configuration to run (default: every alert to the webhook at
        once, grouped by alertname, cluster and server)."""
        self.binary = binary
        self.work = work
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        #: Gossip: this instance's loopback port and its peers (see :func:`pair`).
        self.gossip_port: int | None = None
        self.peers: list[AlertmanagerProcess] = []
        work.mkdir(parents=True, exist_ok=True)
        (work / "data").mkdir(exist_ok=True)
        self.config = work / "alertmanager.yml"
        self.config.write_text(
            config_text
            or "global: {resolve_timeout: 1m}\n"
            "route: {receiver: hook, group_by: [alertname, cluster, server], "
            "group_wait: 1s, group_interval: 2s, repeat_interval: 1h}\n"
            "receivers: [{name: hook, webhook_configs: "
            f'[{{url: "{webhook_url}", send_resolved: true}}]}}]\n'
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        """Started and ready; on fresh ports again (at most twice) when another process took
        one between :func:`free_port` and the bind (r26: the gossip port, picked before a
        Fluss cluster's start, was taken by then)."""
        for _ in range(BIND_ATTEMPTS - 1):
            try:
                return self._start_once(timeout)
            except _PortTaken:
                self.port = free_port()
                if self.gossip_port is not None:
                    self.gossip_port = free_port()
        self._start_once(timeout)

    def _start_once(self, timeout: float) -> None:
        log = (self.work / "alertmanager.log").open("ab")
        self.proc = subprocess.Popen(
            [
                self.binary,
                f"--config.file={self.config}",
                f"--storage.path={self.work / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                *self._cluster_args(),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        if not wait_for(self._ready, timeout):
            self.stop()
            tail = (self.work / "alertmanager.log").read_text(errors="replace")[-2000:]
            raise AssertionError(f"Alertmanager not ready within {timeout:g}s:\n{tail}")

    def _cluster_args(self) -> list[str]:
        if self.gossip_port is None:
            return ["--cluster.listen-address="]  # no gossip port on all interfaces
        return [
            f"--cluster.listen-address=127.0.0.1:{self.gossip_port}",
            *(f"--cluster.peer=127.0.0.1:{p.gossip_port}" for p in self.peers),
            f"--cluster.settle-timeout={PEER_TIMEOUT_S:g}s",
            f"--cluster.peer-timeout={PEER_TIMEOUT_S:g}s",
        ]

    def _ready(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            tail = (self.work / "alertmanager.log").read_text(errors="replace")[-2000:]
            if "address already in use" in tail.rsplit("Starting Alertmanager", 1)[-1]:
                raise _PortTaken(tail)
            raise AssertionError(f"Alertmanager exited with {self.proc.returncode}:\n{tail}")
        try:
            with _NO_PROXY.open(f"{self.url}/-/ready", timeout=2) as resp:
                return bool(resp.status == 200)
        except OSError:
            return False

    def held(self) -> list[dict[str, Any]]:
        """The alerts it holds now (``GET /api/v2/alerts``)."""
        with _NO_PROXY.open(f"{self.url}/api/v2/alerts", timeout=5) as resp:
            return list(json.loads(resp.read()))

    def cluster_peers(self) -> int:
        """How many members its gossip cluster has (``GET /api/v2/status``), itself too."""
        with _NO_PROXY.open(f"{self.url}/api/v2/status", timeout=5) as resp:
            return len(json.loads(resp.read())["cluster"].get("peers") or [])

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


def pair(binary: str, work: Path, webhook_url: str, config_text: str) -> list[AlertmanagerProcess]:
    """Two instances gossiping on loopback (an HA pair: they deduplicate through the shared
    notification log), each given the other as peer; not started."""
    members = [
        AlertmanagerProcess(binary, work / f"am-{i}", webhook_url, config_text=config_text)
        for i in (1, 2)
    ]
    for i, member in enumerate(members):
        member.gossip_port = free_port()
        member.peers = [members[1 - i]]  # its port read at start: it may have moved
    return members

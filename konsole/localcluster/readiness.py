"""When a starting cluster is ready, and what to do while it is not.

Ready means: every server's ports answer, its Prometheus endpoint serves, the
coordinator's metadata lists every tablet server, and every tablet server's own metadata
answer knows the coordinator and all its peers. A server that lost a race for a port it
was given is started again on other ports (at most ``BIND_RETRIES`` times), also when it
lost only its metrics port and runs on without one.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

from konsole.errors import ClusterError
from konsole.localcluster.ports import port_open
from konsole.localcluster.probe import probe_metadata
from konsole.localcluster.processes import (
    Processes,
    bind_failed,
    failure_text,
    four_letter,
    log_marks,
    reporter_unbound_since,
    scrape,
)
from konsole.localcluster.state import (
    BIND_RETRIES,
    COORDINATOR,
    HOST,
    TABLET_SERVER,
    ZOOKEEPER,
    ClusterState,
    ServerState,
)

#: Starts ``server`` again on fresh ports (its config rewritten).
Reallocate = Callable[[ServerState], None]


def zookeeper_up(zk: ServerState) -> bool:
    return four_letter(zk.ports["client"], b"ruok") == b"imok"


def wait_zookeeper(
    processes: Processes, zk: ServerState, reallocate: Reallocate, deadline: float
) -> None:
    tries = 0
    while time.monotonic() < deadline:
        if not processes.alive(zk.pid):
            if tries < BIND_RETRIES and bind_failed(zk):
                tries += 1
                reallocate(zk)
                continue
            raise ClusterError(failure_text(zk, "exited during start-up"))
        if zookeeper_up(zk):
            return
        time.sleep(0.2)
    raise ClusterError(failure_text(zk, "did not answer in time"))


def wait_ready(
    processes: Processes, state: ClusterState, reallocate: Reallocate, deadline: float
) -> None:
    """Every server alive with its ports open, and the coordinator counting every TS.

    A server that lost a port race is started again on fresh ports: one that exited with a
    bind error, and one that runs on without metrics because its Prometheus reporter found
    its port taken (its log says so after its last launch).
    """
    retries: dict[tuple[str, int], int] = {}
    marks = {(s.role, s.id): log_marks(s) for s in state.servers}
    pending: str | None = "start-up"
    while time.monotonic() < deadline:
        for server in state.servers:
            key = (server.role, server.id)
            if processes.alive(server.pid):
                if not reporter_unbound_since(server, marks[key]):
                    continue
                why = "ran on without its metrics port"
            elif bind_failed(server):
                why = "exited: a port was taken"
            else:
                raise ClusterError(failure_text(server, "exited during start-up"))
            if retries.get(key, 0) >= BIND_RETRIES:
                raise ClusterError(failure_text(server, f"{why}, {BIND_RETRIES + 1} times"))
            retries[key] = retries.get(key, 0) + 1
            processes.signal_and_wait([server], signal.SIGKILL, 10)
            marks[key] = log_marks(server)
            reallocate(server)
        pending = readiness_gap(processes, state)
        if pending is None:
            return
        time.sleep(0.25)
    blame = next((s for s in state.servers if s.role == COORDINATOR), state.servers[0])
    raise ClusterError(failure_text(blame, f"not ready in time: {pending}"))


def readiness_gap(processes: Processes, state: ClusterState) -> str | None:
    """What is still missing before the cluster is ready (module docstring), or None."""
    want = frozenset(s.id for s in state.servers if s.role == TABLET_SERVER)
    standby_possible = sum(1 for s in state.servers if s.role == COORDINATOR) > 1
    for server in state.servers:
        if server.role == ZOOKEEPER or not processes.alive(server.pid):
            continue
        for name in ("rpc", "client"):
            if name in server.ports and not port_open(server.ports[name]):
                return f"{server.role} {server.id} {name} port {server.ports[name]}"
        if scrape(server.ports["metrics"]) is None:
            return f"{server.role} {server.id} metrics endpoint"
        view = probe_metadata(HOST, server.ports["rpc"])
        if view is None:
            if server.role == COORDINATOR and standby_possible:
                continue  # a standby answers only ApiVersions
            return f"{server.role} {server.id} does not answer GetMetadata"
        if view.tablet_servers != want or view.coordinator is None:
            seen = ",".join(str(i) for i in sorted(view.tablet_servers)) or "none"
            return f"{server.role} {server.id} sees tablet servers [{seen}] of {len(want)}"
    return None


def wait_restarted(
    processes: Processes, state: ClusterState, server: ServerState, deadline: float
) -> None:
    """One server started again: alive, and the cluster ready (ZooKeeper: answering)."""
    while time.monotonic() < deadline:
        if not processes.alive(server.pid):
            raise ClusterError(failure_text(server, "exited during start-up"))
        if server.role == ZOOKEEPER:
            if zookeeper_up(server):
                return
        elif readiness_gap(processes, state) is None:
            return
        time.sleep(0.25)
    raise ClusterError(failure_text(server, "not ready in time"))

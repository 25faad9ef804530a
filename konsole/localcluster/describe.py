"""What a local cluster is now: its processes, which coordinator is active, its addresses."""

from __future__ import annotations

import dataclasses

from konsole.localcluster.probe import probe_metadata
from konsole.localcluster.processes import Processes
from konsole.localcluster.state import (
    COORDINATOR,
    HOST,
    TABLET_SERVER,
    ZOOKEEPER,
    ClusterDescription,
    ClusterState,
    ProcessInfo,
    SaslInfo,
    ServerState,
)


def process_info(processes: Processes, s: ServerState, version: str | None = None) -> ProcessInfo:
    alive = processes.alive(s.pid)
    client = s.ports.get("client") if s.role != ZOOKEEPER else None
    rpc = client or s.ports.get("rpc") or s.ports.get("client")
    return ProcessInfo(
        role=s.role,
        id=s.id,
        pid=s.pid if alive else None,
        alive=alive,
        ports=s.ports,
        log=s.log,
        metrics_url=f"http://{HOST}:{s.ports['metrics']}/metrics" if "metrics" in s.ports else None,
        endpoint=f"{HOST}:{rpc}" if rpc else None,
        version=version,
    )


def active_coordinator(processes: Processes, state: ClusterState) -> int | None:
    """The id of the coordinator that won the election, as the servers see it.

    A tablet server's metadata names the active coordinator's internal address; with no
    tablet server answering, the coordinator that answers GetMetadata is the active one
    (a standby fails everything but ApiVersions).
    """
    coordinators = {
        s.ports["rpc"]: s.id
        for s in state.servers
        if s.role == COORDINATOR and processes.alive(s.pid)
    }
    if not coordinators:
        return None
    for s in state.servers:
        if s.role == TABLET_SERVER and processes.alive(s.pid):
            view = probe_metadata(HOST, s.ports["rpc"], timeout=1.0)
            if view is not None and view.coordinator is not None:
                return coordinators.get(view.coordinator[1])
    for port, sid in coordinators.items():
        if probe_metadata(HOST, port, timeout=1.0) is not None:
            return sid
    return None


def describe(processes: Processes, state: ClusterState) -> ClusterDescription:
    infos = [process_info(processes, s, state.server_version(s)) for s in state.servers]
    if any(i.role == COORDINATOR and i.alive for i in infos):
        active = active_coordinator(processes, state)
        infos = [
            i
            if i.role != COORDINATOR or not i.alive
            else dataclasses.replace(
                i,
                coordinator_role=None
                if active is None
                else ("active" if i.id == active else "standby"),
            )
            for i in infos
        ]
    bootstrap = [i.endpoint for i in infos if i.role in (COORDINATOR, TABLET_SERVER)]
    internal = [f"{HOST}:{s.ports['rpc']}" for s in state.servers if s.role != ZOOKEEPER]
    zk = next(s for s in state.servers if s.role == ZOOKEEPER)
    return ClusterDescription(
        version=state.version,
        fluss_home=state.fluss_home,
        run_dir=str(processes.run_dir),
        running=any(i.alive for i in infos),
        bootstrap_servers=",".join(b for b in bootstrap if b),
        internal_bootstrap_servers=",".join(internal),
        sasl=SaslInfo(bool(state.sasl_users), tuple(state.sasl_users)),
        zookeeper=f"{HOST}:{zk.ports['client']}",
        ready_seconds=state.ready_seconds,
        processes=tuple(infos),
        run_id=state.identity(),
    )

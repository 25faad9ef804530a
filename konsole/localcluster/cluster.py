"""A real Fluss cluster on 127.0.0.1: ZooKeeper, coordinator(s) and tablet servers.

Each server is a separate detached Java process started from the published jars (fetched
with Maven) or from an unpacked Fluss distribution (``--fluss-home``), with its
own config dir, data dir, log file, RPC port(s) and Prometheus port under one run dir.
The run dir's ``cluster.json`` is the cluster's state, so a later ``konsole cluster stop``
(another process) can find and stop what ``start`` left running.

:class:`LocalCluster` orchestrates; it holds the cluster's :class:`Processes` and calls
the configuration writers (:mod:`.config`) and the readiness checks (:mod:`.readiness`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

import platformdirs

from konsole.errors import ClusterAlreadyRunningError, ClusterError, NoLocalClusterError
from konsole.localcluster import describe as describing
from konsole.localcluster import disks as small_disks
from konsole.localcluster import jars, readiness
from konsole.localcluster.config import (
    Setting,
    reconfigure,
    write_log_config,
    write_server_config,
)
from konsole.localcluster.distribution import Distribution, from_home, from_maven
from konsole.localcluster.java import JavaRuntime, find_java
from konsole.localcluster.ports import free_ports
from konsole.localcluster.processes import Processes
from konsole.localcluster.state import (
    COORDINATOR,
    HOST,
    ROLE_ALIASES,
    STATE_FILE,
    TABLET_SERVER,
    ZOOKEEPER,
    ClusterDescription,
    ClusterState,
    ProcessInfo,
    SaslInfo,
    ServerState,
    parse_sasl_user,
    parse_setting,
    parse_target,
)
from konsole.localcluster.versions import DEFAULT_VERSION, lookup

__all__ = [
    "COORDINATOR",
    "TABLET_SERVER",
    "ZOOKEEPER",
    "ClusterAlreadyRunning",
    "ClusterDescription",
    "ClusterError",
    "ClusterState",
    "LocalCluster",
    "ProcessInfo",
    "SaslInfo",
    "ServerState",
    "default_run_dir",
    "parse_sasl_user",
    "parse_setting",
    "parse_target",
    "temporary_cluster",
]

# Kept importable from here; the classes live with konsole's other errors.
ClusterAlreadyRunning = ClusterAlreadyRunningError


def default_run_dir() -> Path:
    override = os.environ.get("KONSOLE_RUN_DIR")
    if override:
        return Path(override)
    return Path(platformdirs.user_state_dir("konsole")) / "local-cluster"


class LocalCluster:
    """Starts, inspects and stops the cluster that lives in one run dir."""

    def __init__(self, run_dir: Path | str | None = None) -> None:
        self.run_dir = Path(run_dir).resolve() if run_dir else default_run_dir().resolve()
        self.processes = Processes(self.run_dir)
        self.marker = self.processes.marker

    # ----- state -----------------------------------------------------------------------

    @property
    def state_path(self) -> Path:
        return self.run_dir / STATE_FILE

    def load(self) -> ClusterState | None:
        try:
            raw = json.loads(self.state_path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise ClusterError(f"unreadable cluster state {self.state_path}: {exc}") from exc
        servers = [ServerState(**s) for s in raw.pop("servers")]
        return ClusterState(**raw, servers=servers)

    def _save(self, state: ClusterState) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(state), indent=2))
        tmp.replace(self.state_path)

    # ----- start -----------------------------------------------------------------------

    def start(
        self,
        version: str | None = None,
        *,
        fluss_home: Path | str | None = None,
        tablet_servers: int = 1,
        coordinators: int = 1,
        sasl: Iterable[str] = (),
        settings: Iterable[str] = (),
        ready_timeout: float = 120.0,
        progress: Callable[[str], None] | None = None,
        disks: Mapping[int, Sequence[int]] | None = None,
    ) -> ClusterDescription:
        """Start a cluster from published jars (``version``) or a distribution (``fluss_home``).

        ``disks``: tablet server id -> the size (MiB) of each of its data dirs, each a tmpfs
        of its own (konsole.localcluster.disks; root only), unmounted when the cluster stops.
        Every argument and the distribution are checked before anything starts.
        """
        say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
        if tablet_servers < 1:
            raise ClusterError("--tablet-servers must be at least 1")
        if coordinators < 1 or coordinators > 2:
            raise ClusterError("--coordinators must be 1 or 2")
        users = dict(parse_sasl_user(s) for s in sasl)
        settings = [*base_settings(), *settings]  # the caller's come last: they win
        parsed = [parse_setting(s) for s in settings]
        disks = dict(disks or {})
        if any(not 0 <= sid < tablet_servers or not sizes for sid, sizes in disks.items()):
            raise ClusterError(f"disks name tablet servers 0..{tablet_servers - 1} with sizes")
        dist, java = self._distribution(version, fluss_home, coordinators, say)
        state = self._lay_out(dist, java, users, list(settings), coordinators, tablet_servers)
        t0 = time.monotonic()
        try:
            self._mount(state, disks, say)
            self._boot(state, users, parsed, t0 + ready_timeout, say)
        except BaseException as exc:
            tail = exc.args[0] if isinstance(exc, ClusterError) else repr(exc)
            self.processes.signal_and_wait(state.servers, signal.SIGKILL, timeout=10)
            self._unmount(state)
            self._save(state)
            raise ClusterError(f"the cluster did not start: {tail}") from exc
        state.ready_seconds = round(time.monotonic() - t0, 2)
        self._save(state)
        say(
            f"Fluss {dist.version} ready in {state.ready_seconds:.1f}s "
            f"({coordinators} coordinator(s), {tablet_servers} tablet server(s))"
        )
        return self.describe(state)

    def _distribution(
        self,
        version: str | None,
        fluss_home: Path | str | None,
        coordinators: int,
        say: Callable[[str], None],
    ) -> tuple[Distribution, JavaRuntime]:
        """The servers to run and the Java to run them, checked against the arguments and
        against what already runs here."""
        dist: Distribution | None = None
        if fluss_home is not None:
            dist = from_home(fluss_home)
            if version is not None and version != dist.version:
                raise ClusterError(
                    f"--version {version} but {dist.home} holds Fluss {dist.version}; "
                    "give one of them"
                )
        else:
            version = version or DEFAULT_VERSION
            lookup(version)
        existing = self.load()
        if existing is not None and self.processes.any_alive(existing.servers):
            raise ClusterAlreadyRunningError(
                f"a cluster is already running in {self.run_dir}; "
                "use `konsole cluster status` or `konsole cluster stop`"
            )
        java = find_java()
        if dist is None:
            assert version is not None
            dist = from_maven(version, lambda v: jars.ensure_jars(v, say))
        dist.check_java(java.major)
        if coordinators == 2 and not dist.standby_coordinator:
            raise ClusterError(
                f"Fluss {dist.version} has no standby coordinator; use --coordinators 1"
            )
        if existing is not None:
            say(f"Removing the stopped cluster left in {self.run_dir}")
        return dist, java

    def _lay_out(
        self,
        dist: Distribution,
        java: JavaRuntime,
        users: dict[str, str],
        settings: list[str],
        coordinators: int,
        tablet_servers: int,
    ) -> ClusterState:
        """A fresh run dir and the state of every server to start (ports picked)."""
        self._wipe()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        write_log_config(self.run_dir)
        state = ClusterState(
            version=dist.version,
            lib=dist.lib,
            java=java.executable,
            java_major=java.major,
            sasl_users=sorted(users),
            settings=settings,
            started_at=time.time(),
            run_id=uuid.uuid4().hex[:12],
            class_path=list(dist.class_path),
            fluss_home=dist.home,
        )
        state.servers.append(self._new_server(ZOOKEEPER, 0, ["client"]))
        listener_ports = ["rpc", "client"] if users else ["rpc"]
        for i in range(coordinators):
            state.servers.append(self._new_server(COORDINATOR, i, [*listener_ports, "metrics"]))
        for i in range(tablet_servers):
            state.servers.append(self._new_server(TABLET_SERVER, i, [*listener_ports, "metrics"]))
        self._save(state)
        return state

    def _mount(
        self, state: ClusterState, disks: Mapping[int, Sequence[int]], say: Callable[[str], None]
    ) -> None:
        """A tmpfs per data dir of the tablet servers ``disks`` names (listed in the state
        first, so that whatever happens next unmounts them)."""
        for server in state.servers:
            sizes = disks.get(server.id) if server.role == TABLET_SERVER else None
            if not sizes:
                continue
            base = Path(server.data_dir).parent
            server.data_dirs = [str(base / f"disk-{i}") for i in range(len(sizes))]
            server.mounts = list(server.data_dirs)
        self._save(state)
        for server in state.servers:
            sizes = disks.get(server.id) if server.role == TABLET_SERVER else None
            for path, mib in zip(server.mounts, sizes or (), strict=False):
                small_disks.mount_tmpfs(Path(path), mib)
                say(f"tablet server {server.id}: data dir {path} on a {mib} MiB tmpfs")

    def _unmount(self, state: ClusterState) -> None:
        """Takes away the tmpfs mounts of ``state`` (its servers stopped first)."""
        for server in state.servers:
            if server.mounts:
                left = small_disks.unmount(server.mounts)
                server.mounts = left

    def _boot(
        self,
        state: ClusterState,
        users: dict[str, str],
        settings: list[Setting],
        deadline: float,
        say: Callable[[str], None],
    ) -> None:
        """ZooKeeper first, then every Fluss server; returns when the cluster is ready."""

        def reallocate(server: ServerState) -> None:
            self._reallocate(state, server, users, settings)

        for server in state.servers:
            write_server_config(self.run_dir, state, server, users, settings)
        zk = self._server(state, ZOOKEEPER, 0)
        self.processes.launch(state, zk)
        self._save(state)
        readiness.wait_zookeeper(self.processes, zk, reallocate, deadline)
        say(f"ZooKeeper up on {HOST}:{zk.ports['client']}")
        for server in state.servers:
            if server.role != ZOOKEEPER:
                self.processes.launch(state, server)
        self._save(state)
        readiness.wait_ready(self.processes, state, reallocate, deadline)

    def _new_server(self, role: str, sid: int, port_names: list[str]) -> ServerState:
        name = f"{role}-{sid}"
        # Wildcard check: the Prometheus reporter binds every interface, not just loopback.
        ports = dict(zip(port_names, free_ports(len(port_names), host="0.0.0.0"), strict=True))
        return ServerState(
            role=role,
            id=sid,
            ports=ports,
            config_dir=str(self.run_dir / name / "conf"),
            data_dir=str(self.run_dir / name / "data"),
            log=str(self.run_dir / "logs" / f"{name}.log"),
        )

    def _reallocate(
        self,
        state: ClusterState,
        server: ServerState,
        users: dict[str, str],
        settings: list[Setting],
    ) -> None:
        """A port picked as free was taken before the server bound it: pick others, retry."""
        fresh = free_ports(len(server.ports), host="0.0.0.0")
        server.ports = dict(zip(server.ports, fresh, strict=True))
        write_server_config(self.run_dir, state, server, users, settings)
        if server.role == ZOOKEEPER:
            for other in state.servers:
                if other.role != ZOOKEEPER:
                    write_server_config(self.run_dir, state, other, users, settings)
        self.processes.launch(state, server)
        self._save(state)

    # ----- stop, kill, restart ---------------------------------------------------------

    def stop(self, timeout: float = 60.0, *, graceful: bool = True) -> list[str]:
        """Stop every server (tablet servers, then coordinators, then ZooKeeper).

        ``graceful=False`` is for a throwaway cluster (a test's, a benchmark's) whose data
        and logs nobody reads afterwards: every server is killed at once, which takes well
        under a second where a graceful stop takes 5-25 s (each Fluss server spends seconds
        in its shutdown hooks, and the groups stop one after the other).
        Returns what was stopped; an empty list means nothing was running.
        """
        state = self.load()
        if state is None:
            return []
        running = [s for s in state.servers if self.processes.alive(s.pid)]
        if not graceful:
            self.processes.signal_and_wait(running, signal.SIGKILL, timeout=10)
        else:
            for role in (TABLET_SERVER, COORDINATOR, ZOOKEEPER):
                group = [s for s in running if s.role == role]
                if group:
                    self.processes.signal_and_wait(group, signal.SIGTERM, timeout)
        for s in state.servers:
            s.pid = None
        self._unmount(state)
        self._save(state)
        return [f"{s.role} {s.id}" for s in running]

    def _server(self, state: ClusterState, role: str, sid: int) -> ServerState:
        for s in state.servers:
            if s.role == role and s.id == sid:
                return s
        raise ClusterError(f"no {role} with id {sid} in {self.run_dir}")

    def _require_state(self) -> ClusterState:
        state = self.load()
        if state is None:
            raise NoLocalClusterError(f"no cluster in {self.run_dir}; run `konsole cluster start`")
        return state

    def _running(self, role: str, sid: int) -> ServerState:
        server = self._server(self._require_state(), ROLE_ALIASES.get(role, role), sid)
        if not self.processes.alive(server.pid):
            raise ClusterError(f"{server.role} {sid} is not running")
        return server

    def kill(self, role: str, sid: int) -> None:
        """SIGKILL one server: a crash, as a fault to inject."""
        self.processes.signal_and_wait([self._running(role, sid)], signal.SIGKILL, timeout=10)

    def stop_server(self, role: str, sid: int, timeout: float = 60.0) -> None:
        self.processes.signal_and_wait([self._running(role, sid)], signal.SIGTERM, timeout)

    def start_server(
        self,
        role: str,
        sid: int,
        ready_timeout: float = 90.0,
        settings: Iterable[str] = (),
        fluss_home: Path | str | None = None,
        wait: bool = True,
    ) -> ProcessInfo:
        """Start one server again with the same id, data dir, ports and config dir.

        ``settings`` (``KEY=VALUE``) apply on top of the configuration the cluster was started
        with, for this start only: a later start without them goes back to that configuration.
        ``fluss_home``: run it from this distribution from now on (a rolling upgrade's step);
        it stays on it for later starts. Checked (a distribution, Java new enough) before
        anything starts. ``wait=False`` returns once the process is launched, as a service
        manager's restart does, without waiting for the cluster to be ready.
        """
        state = self._require_state()
        server = self._server(state, ROLE_ALIASES.get(role, role), sid)
        if self.processes.alive(server.pid):
            raise ClusterError(f"{server.role} {sid} is already running (pid {server.pid})")
        if fluss_home is not None:
            dist = from_home(fluss_home)
            dist.check_java(state.java_major)
            server.class_path = list(dist.class_path)
            server.version = None if dist.version == state.version else dist.version
        reconfigure(server, [parse_setting(s) for s in settings])
        self.processes.launch(state, server)
        self._save(state)
        if wait:
            readiness.wait_restarted(
                self.processes, state, server, deadline=time.monotonic() + ready_timeout
            )
        return describing.process_info(self.processes, server, state.server_version(server))

    # ----- description -----------------------------------------------------------------

    def active_coordinator(self, state: ClusterState | None = None) -> int | None:
        """The id of the coordinator that won the election, as the servers see it."""
        return describing.active_coordinator(self.processes, state or self._require_state())

    def describe(self, state: ClusterState | None = None) -> ClusterDescription:
        return describing.describe(self.processes, state or self._require_state())

    def status(self) -> ClusterDescription | None:
        state = self.load()
        return None if state is None else self.describe(state)

    def _wipe(self) -> None:
        with contextlib.suppress(ClusterError):
            old = self.load()
            if old is not None:
                self._unmount(old)  # a stopped cluster whose mounts were left
        if self.run_dir.exists():
            for child in self.run_dir.iterdir():
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)


@contextlib.contextmanager
def temporary_cluster(
    version: str | None = None, *, tablet_servers: int = 1, prefix: str = "konsole-", **start: Any
) -> Iterator[ClusterDescription]:
    """A cluster in a temporary run dir for the duration of a ``with`` block (benchmarks,
    scripts); stopped and removed on exit. Yields the description from ``start``."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        cluster = LocalCluster(Path(tmp) / "cluster")
        try:
            yield cluster.start(version, tablet_servers=tablet_servers, **start)
        finally:
            cluster.stop(graceful=False)  # its run dir is removed next


#: Settings every cluster this process starts begins with, before the caller's own
#: (``[TARGET:]KEY=VALUE`` separated by spaces): e.g. a test run on a machine whose disk is
#: 75% full raises the tablet servers' write limit so that its servers do not all warn of
#: their room (docs/local-cluster.md).
BASE_SETTINGS_VAR: Final = "KONSOLE_CLUSTER_SET"


def base_settings() -> list[str]:
    return os.environ.get(BASE_SETTINGS_VAR, "").split()

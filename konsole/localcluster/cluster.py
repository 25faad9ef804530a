"""A real Fluss cluster on 127.0.0.1: ZooKeeper, coordinator(s) and tablet servers.

Each server is a separate detached Java process started from the published jars (fetched
with Maven) or from an unpacked Fluss distribution (``--fluss-home``), with its
own config dir, data dir, log file, RPC port(s) and Prometheus port under one run dir.
The run dir's ``cluster.json`` is the cluster's state, so a later ``konsole cluster stop``
(another process) can find and stop what ``start`` left running.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import platformdirs

from konsole.localcluster import jars
from konsole.localcluster.distribution import Distribution, from_home, from_maven
from konsole.localcluster.java import find_java
from konsole.localcluster.ports import free_ports, port_open
from konsole.localcluster.probe import probe_metadata
from konsole.localcluster.versions import DEFAULT_VERSION, lookup

ZOOKEEPER = "zookeeper"
COORDINATOR = "coordinator"
TABLET_SERVER = "tablet-server"
ROLES = (ZOOKEEPER, COORDINATOR, TABLET_SERVER)
ROLE_ALIASES = {
    "zk": ZOOKEEPER,
    "zookeeper": ZOOKEEPER,
    "cs": COORDINATOR,
    "coordinator": COORDINATOR,
    "coordinator-server": COORDINATOR,
    "ts": TABLET_SERVER,
    "tablet": TABLET_SERVER,
    "tablet-server": TABLET_SERVER,
}
MAIN_CLASS = {
    ZOOKEEPER: "org.apache.fluss.shaded.zookeeper3.org.apache.zookeeper.server.quorum."
    "QuorumPeerMain",
    COORDINATOR: "org.apache.fluss.server.coordinator.CoordinatorServer",
    TABLET_SERVER: "org.apache.fluss.server.tablet.TabletServer",
}
HEAP = {ZOOKEEPER: "256m", COORDINATOR: "512m", TABLET_SERVER: "768m"}
STATE_FILE = "cluster.json"
INTERNAL_LISTENER = "FLUSS"
CLIENT_LISTENER = "CLIENT"
HOST = "127.0.0.1"
PLAIN_LOGIN_MODULE = "org.apache.fluss.security.auth.sasl.plain.PlainLoginModule"
BIND_RETRIES = 3


class ClusterError(RuntimeError):
    """The local cluster could not do what was asked; the message says why."""


class ClusterAlreadyRunning(ClusterError):
    pass


@dataclass
class ServerState:
    role: str
    id: int
    ports: dict[str, int]
    config_dir: str
    data_dir: str
    log: str
    pid: int | None = None


@dataclass(frozen=True)
class ProcessInfo:
    role: str
    id: int
    pid: int | None
    alive: bool
    ports: dict[str, int]
    log: str
    metrics_url: str | None
    endpoint: str | None
    # Coordinators only: "active" (won the election), "standby", or None when not known.
    coordinator_role: str | None = None


@dataclass
class ClusterState:
    version: str
    lib: str
    java: str
    java_major: int
    sasl_users: list[str]
    settings: list[str]
    servers: list[ServerState] = field(default_factory=list)
    started_at: float = 0.0
    ready_seconds: float | None = None
    # Class path entries; state files written before --fluss-home have only ``lib``.
    class_path: list[str] = field(default_factory=list)
    fluss_home: str | None = None

    def java_class_path(self) -> str:
        return ":".join(self.class_path or [f"{self.lib}/*"])


def default_run_dir() -> Path:
    override = os.environ.get("KONSOLE_RUN_DIR")
    if override:
        return Path(override)
    return Path(platformdirs.user_state_dir("konsole")) / "local-cluster"


def parse_sasl_user(spec: str) -> tuple[str, str]:
    user, sep, password = spec.partition(":")
    if not sep or not user or not password:
        raise ClusterError("--sasl takes USER:PASSWORD")
    if not user.replace("_", "").isalnum():
        raise ClusterError(f"SASL user names are word characters only: {user!r}")
    if any(c in password for c in ',:";\\') or not password.isprintable():
        raise ClusterError('SASL passwords may not contain , : " ; \\ or control characters')
    return user, password


def parse_setting(spec: str) -> tuple[str | None, str, str]:
    """``[TARGET:]key=value`` where TARGET is a role alias with an optional id (``ts1``)."""
    lhs, sep, value = spec.partition("=")
    if not sep or not lhs:
        raise ClusterError(f"--set takes [TARGET:]KEY=VALUE, got {spec!r}")
    target, colon, key = lhs.partition(":")
    if not colon:
        return None, lhs.strip(), value.strip()
    parse_target(target)
    return target, key.strip(), value.strip()


def parse_target(target: str) -> tuple[str, int | None]:
    name = target.rstrip("0123456789")
    digits = target[len(name) :]
    role = ROLE_ALIASES.get(name.rstrip("-"))
    if role is None:
        raise ClusterError(f"unknown server role {target!r}; use zk, coordinator/cs or ts")
    return role, int(digits) if digits else None


class LocalCluster:
    """Starts, inspects and stops the cluster that lives in one run dir."""

    def __init__(self, run_dir: Path | str | None = None) -> None:
        self.run_dir = Path(run_dir).resolve() if run_dir else default_run_dir().resolve()
        self.marker = f"-Dkonsole.run.dir={self.run_dir}"

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
    ) -> dict[str, Any]:
        """Start a cluster from published jars (``version``) or a distribution (``fluss_home``).

        Every argument and the distribution are checked before anything starts.
        """
        say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
        if tablet_servers < 1:
            raise ClusterError("--tablet-servers must be at least 1")
        if coordinators < 1 or coordinators > 2:
            raise ClusterError("--coordinators must be 1 or 2")
        users = dict(parse_sasl_user(s) for s in sasl)
        parsed_settings = [parse_setting(s) for s in settings]
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
        if existing is not None and self._any_alive(existing):
            raise ClusterAlreadyRunning(
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
        self._wipe()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._write_log_config()

        state = ClusterState(
            version=dist.version,
            lib=dist.lib,
            java=java.executable,
            java_major=java.major,
            sasl_users=sorted(users),
            settings=list(settings),
            started_at=time.time(),
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

        t0 = time.monotonic()
        try:
            for server in state.servers:
                self._write_config(state, server, users, parsed_settings)
            zk = self._server(state, ZOOKEEPER, 0)
            self._launch(state, zk)
            self._save(state)
            self._wait_zookeeper(state, zk, deadline=time.monotonic() + ready_timeout)
            say(f"ZooKeeper up on {HOST}:{zk.ports['client']}")
            for server in state.servers:
                if server.role != ZOOKEEPER:
                    self._launch(state, server)
            self._save(state)
            self._wait_ready(state, users, parsed_settings, deadline=t0 + ready_timeout)
        except BaseException as exc:
            tail = exc.args[0] if isinstance(exc, ClusterError) else repr(exc)
            self._kill_all(state)
            self._save(state)
            raise ClusterError(f"the cluster did not start: {tail}") from exc
        state.ready_seconds = round(time.monotonic() - t0, 2)
        self._save(state)
        say(
            f"Fluss {dist.version} ready in {state.ready_seconds:.1f}s "
            f"({coordinators} coordinator(s), {tablet_servers} tablet server(s))"
        )
        return self.describe(state)

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

    def _write_log_config(self) -> None:
        (self.run_dir / "logs").mkdir(parents=True, exist_ok=True)
        text = resources.files("konsole.localcluster").joinpath("log4j.properties").read_text()
        (self.run_dir / "log4j.properties").write_text(text)

    def _write_config(
        self,
        state: ClusterState,
        server: ServerState,
        users: dict[str, str],
        settings: list[tuple[str | None, str, str]],
    ) -> None:
        conf = Path(server.config_dir)
        conf.mkdir(parents=True, exist_ok=True)
        Path(server.data_dir).mkdir(parents=True, exist_ok=True)
        if server.role == ZOOKEEPER:
            lines = {
                "dataDir": server.data_dir,
                "clientPort": str(server.ports["client"]),
                "clientPortAddress": HOST,
                "maxClientCnxns": "0",
                "admin.enableServer": "false",
                "tickTime": "1000",
                "4lw.commands.whitelist": "ruok,srvr",
            }
            (conf / "zoo.cfg").write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
            return
        zk = self._server(state, ZOOKEEPER, 0)
        n_ts = sum(1 for s in state.servers if s.role == TABLET_SERVER)
        cfg: dict[str, str] = {
            "zookeeper.address": f"{HOST}:{zk.ports['client']}",
            # Short sessions so a killed server is noticed in seconds, not a minute.
            "zookeeper.client.session-timeout": "10s",
            "remote.data.dir": str(self.run_dir / "remote"),
            "metrics.reporters": "prometheus",
            "metrics.reporter.prometheus.port": str(server.ports["metrics"]),
            "netty.server.num-network-threads": "1",
            "netty.server.num-worker-threads": "3",
        }
        listeners = f"{INTERNAL_LISTENER}://{HOST}:{server.ports['rpc']}"
        if users:
            listeners += f", {CLIENT_LISTENER}://{HOST}:{server.ports['client']}"
            entries = " ".join(f'user_{u}="{p}"' for u, p in sorted(users.items()))
            cfg.update(
                {
                    "internal.listener.name": INTERNAL_LISTENER,
                    "security.protocol.map": (
                        f"{CLIENT_LISTENER}:SASL, {INTERNAL_LISTENER}:PLAINTEXT"
                    ),
                    "security.sasl.enabled.mechanisms": "PLAIN",
                    "security.sasl.plain.jaas.config": f"{PLAIN_LOGIN_MODULE} required {entries};",
                }
            )
        cfg["bind.listeners"] = listeners
        if server.role == COORDINATOR:
            cfg["default.bucket.number"] = "1"
            cfg["default.replication.factor"] = str(min(3, n_ts))
        else:
            cfg["tablet-server.id"] = str(server.id)
            cfg["data.dir"] = server.data_dir
        for target, key, value in settings:
            if target is None or self._matches(target, server):
                cfg[key] = value
        (conf / "server.yaml").write_text("".join(f"{k}: {v}\n" for k, v in cfg.items()))
        if users:
            os.chmod(conf / "server.yaml", 0o600)

    @staticmethod
    def _matches(target: str, server: ServerState) -> bool:
        role, sid = parse_target(target)
        return role == server.role and (sid is None or sid == server.id)

    def _command(self, state: ClusterState, server: ServerState) -> list[str]:
        from konsole.localcluster.java import JavaRuntime

        java = JavaRuntime(state.java, state.java_major)
        args = [
            state.java,
            f"-Xmx{HEAP[server.role]}",
            *java.jvm_flags(),
            f"-Dlog.file={server.log}",
            f"-Dlog4j.configurationFile=file:{self.run_dir / 'log4j.properties'}",
            "-Dlog4j.shutdownHookEnabled=false",
            self.marker,
            "-cp",
            state.java_class_path(),
            MAIN_CLASS[server.role],
        ]
        if server.role == ZOOKEEPER:
            return [*args, str(Path(server.config_dir) / "zoo.cfg")]
        return [*args, "--configDir", server.config_dir]

    def _launch(self, state: ClusterState, server: ServerState) -> None:
        out = Path(server.log).with_suffix(".out")
        env = dict(os.environ)
        # An empty plugins dir: reporters come from the class path; this avoids a warning.
        plugins = self.run_dir / "plugins"
        plugins.mkdir(exist_ok=True)
        env["FLUSS_PLUGINS_DIR"] = str(plugins)
        with open(out, "ab") as sink:
            proc = subprocess.Popen(
                self._command(state, server),
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.run_dir,
                env=env,
                start_new_session=True,
            )
        server.pid = proc.pid

    def _reallocate(
        self,
        state: ClusterState,
        server: ServerState,
        users: dict[str, str],
        settings: list[tuple[str | None, str, str]],
    ) -> None:
        """A port picked as free was taken before the server bound it: pick others, retry."""
        fresh = free_ports(len(server.ports), host="0.0.0.0")
        server.ports = dict(zip(server.ports, fresh, strict=True))
        self._write_config(state, server, users, settings)
        if server.role == ZOOKEEPER:
            for other in state.servers:
                if other.role != ZOOKEEPER:
                    self._write_config(state, other, users, settings)
        self._launch(state, server)
        self._save(state)

    # ----- readiness -------------------------------------------------------------------

    def _wait_zookeeper(self, state: ClusterState, zk: ServerState, deadline: float) -> None:
        tries = 0
        while time.monotonic() < deadline:
            if zk.pid is None or not self._alive(zk.pid):
                if tries < BIND_RETRIES and _bind_failed(zk):
                    tries += 1
                    self._reallocate(state, zk, {}, [])
                    continue
                raise ClusterError(self._failure_text(zk, "exited during start-up"))
            if _four_letter(zk.ports["client"], b"ruok") == b"imok":
                return
            time.sleep(0.2)
        raise ClusterError(self._failure_text(zk, "did not answer in time"))

    def _wait_ready(
        self,
        state: ClusterState,
        users: dict[str, str],
        settings: list[tuple[str | None, str, str]],
        deadline: float,
    ) -> None:
        """Every server alive with its ports open, and the coordinator counting every TS."""
        retries: dict[tuple[str, int], int] = {}
        n_ts = sum(1 for s in state.servers if s.role == TABLET_SERVER)
        pending: str | None = "start-up"
        while time.monotonic() < deadline:
            for server in state.servers:
                if server.pid is None or not self._alive(server.pid):
                    key = (server.role, server.id)
                    if retries.get(key, 0) < BIND_RETRIES and _bind_failed(server):
                        retries[key] = retries.get(key, 0) + 1
                        self._reallocate(state, server, users, settings)
                        continue
                    raise ClusterError(self._failure_text(server, "exited during start-up"))
            pending = self._readiness_gap(state, n_ts)
            if pending is None:
                return
            time.sleep(0.25)
        blame = next((s for s in state.servers if s.role == COORDINATOR), state.servers[0])
        raise ClusterError(self._failure_text(blame, f"not ready in time: {pending}"))

    def _readiness_gap(self, state: ClusterState, n_ts: int) -> str | None:
        """What is still missing before the cluster is ready, or None.

        Ready means: every server's ports answer, its Prometheus endpoint serves, the
        coordinator's metadata lists every tablet server, and every tablet server's own
        metadata answer knows the coordinator and all its peers.
        """
        want = frozenset(s.id for s in state.servers if s.role == TABLET_SERVER)
        for server in state.servers:
            if server.role == ZOOKEEPER or server.pid is None or not self._alive(server.pid):
                continue
            for name in ("rpc", "client"):
                if name in server.ports and not port_open(server.ports[name]):
                    return f"{server.role} {server.id} {name} port {server.ports[name]}"
            if _scrape(server.ports["metrics"]) is None:
                return f"{server.role} {server.id} metrics endpoint"
            view = probe_metadata(HOST, server.ports["rpc"])
            if view is None:
                if server.role == COORDINATOR and _count(state, COORDINATOR) > 1:
                    continue  # a standby answers only ApiVersions
                return f"{server.role} {server.id} does not answer GetMetadata"
            if view.tablet_servers != want or view.coordinator is None:
                seen = ",".join(str(i) for i in sorted(view.tablet_servers)) or "none"
                return f"{server.role} {server.id} sees tablet servers [{seen}] of {len(want)}"
        return None

    def _failure_text(self, server: ServerState, what: str, lines: int = 25) -> str:
        tail = _tail(Path(server.log), lines) or _tail(Path(server.log).with_suffix(".out"), lines)
        return f"{server.role} {server.id} {what}; last lines of {server.log}:\n{tail}"

    # ----- process control -------------------------------------------------------------

    def _alive(self, pid: int) -> bool:
        """Alive and ours: the pid's command line carries this run dir's marker."""
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

    def _any_alive(self, state: ClusterState) -> bool:
        return any(s.pid is not None and self._alive(s.pid) for s in state.servers)

    def _signal_and_wait(self, servers: list[ServerState], sig: int, timeout: float) -> None:
        for s in servers:
            if s.pid is not None and self._alive(s.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(s.pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not any(s.pid is not None and self._alive(s.pid) for s in servers):
                return
            time.sleep(0.1)
        for s in servers:
            if s.pid is not None and self._alive(s.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(s.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
            s.pid is not None and self._alive(s.pid) for s in servers
        ):
            time.sleep(0.1)

    def _kill_all(self, state: ClusterState) -> None:
        self._signal_and_wait(state.servers, signal.SIGKILL, timeout=10)

    def stop(self, timeout: float = 60.0) -> list[str]:
        """Stop every server (tablet servers, then coordinators, then ZooKeeper).

        Returns what was stopped; an empty list means nothing was running.
        """
        state = self.load()
        if state is None:
            return []
        running = [s for s in state.servers if s.pid is not None and self._alive(s.pid)]
        for role in (TABLET_SERVER, COORDINATOR, ZOOKEEPER):
            group = [s for s in running if s.role == role]
            if group:
                self._signal_and_wait(group, signal.SIGTERM, timeout)
        for s in state.servers:
            s.pid = None
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
            raise ClusterError(f"no cluster in {self.run_dir}; run `konsole cluster start`")
        return state

    def kill(self, role: str, sid: int) -> None:
        """SIGKILL one server: a crash, as a fault to inject."""
        state = self._require_state()
        server = self._server(state, ROLE_ALIASES.get(role, role), sid)
        if server.pid is None or not self._alive(server.pid):
            raise ClusterError(f"{server.role} {sid} is not running")
        self._signal_and_wait([server], signal.SIGKILL, timeout=10)

    def stop_server(self, role: str, sid: int, timeout: float = 60.0) -> None:
        state = self._require_state()
        server = self._server(state, ROLE_ALIASES.get(role, role), sid)
        if server.pid is None or not self._alive(server.pid):
            raise ClusterError(f"{server.role} {sid} is not running")
        self._signal_and_wait([server], signal.SIGTERM, timeout)

    def start_server(
        self,
        role: str,
        sid: int,
        ready_timeout: float = 90.0,
        settings: Iterable[str] = (),
    ) -> ProcessInfo:
        """Start one server again with the same id, data dir and ports.

        ``settings`` (``KEY=VALUE``) apply on top of the configuration the cluster was started
        with, for this start only: a later start without them goes back to that configuration.
        """
        state = self._require_state()
        server = self._server(state, ROLE_ALIASES.get(role, role), sid)
        if server.pid is not None and self._alive(server.pid):
            raise ClusterError(f"{server.role} {sid} is already running (pid {server.pid})")
        self._reconfigure(server, [parse_setting(s) for s in settings])
        self._launch(state, server)
        self._save(state)
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if not self._alive(server.pid or -1):
                raise ClusterError(self._failure_text(server, "exited during start-up"))
            if server.role == ZOOKEEPER:
                if _four_letter(server.ports["client"], b"ruok") == b"imok":
                    break
            elif self._readiness_gap(state, _count(state, TABLET_SERVER)) is None:
                break
            time.sleep(0.25)
        else:
            raise ClusterError(self._failure_text(server, "not ready in time"))
        return self._info(server)

    def _reconfigure(
        self, server: ServerState, settings: list[tuple[str | None, str, str]]
    ) -> None:
        """Write this start's server.yaml: the cluster's base config plus ``settings``."""
        if server.role == ZOOKEEPER:
            if settings:
                raise ClusterError("--set applies to coordinators and tablet servers only")
            return
        for target, key, _value in settings:
            if target is not None and not self._matches(target, server):
                raise ClusterError(f"--set {target}:{key} does not name {server.role} {server.id}")
        conf = Path(server.config_dir) / "server.yaml"
        # The config written at cluster start, kept aside the first time it is overridden.
        base = conf.with_name("server.base.yaml")
        if not base.exists():
            if not settings:
                return
            shutil.copy2(conf, base)
        overrides = {key: value for _t, key, value in settings}
        lines = [
            line
            for line in base.read_text().splitlines()
            if line.partition(":")[0].strip() not in overrides
        ]
        lines += [f"{k}: {v}" for k, v in overrides.items()]
        conf.write_text("".join(f"{line}\n" for line in lines))
        shutil.copymode(base, conf)

    # ----- description -----------------------------------------------------------------

    def _info(self, s: ServerState) -> ProcessInfo:
        alive = s.pid is not None and self._alive(s.pid)
        client = s.ports.get("client") if s.role != ZOOKEEPER else None
        rpc = client or s.ports.get("rpc") or s.ports.get("client")
        return ProcessInfo(
            role=s.role,
            id=s.id,
            pid=s.pid if alive else None,
            alive=alive,
            ports=s.ports,
            log=s.log,
            metrics_url=f"http://{HOST}:{s.ports['metrics']}/metrics"
            if "metrics" in s.ports
            else None,
            endpoint=f"{HOST}:{rpc}" if rpc else None,
        )

    def active_coordinator(self, state: ClusterState | None = None) -> int | None:
        """The id of the coordinator that won the election, as the servers see it.

        A tablet server's metadata names the active coordinator's internal address; with no
        tablet server answering, the coordinator that answers GetMetadata is the active one
        (a standby fails everything but ApiVersions).
        """
        state = state or self._require_state()
        coordinators = {
            s.ports["rpc"]: s.id
            for s in state.servers
            if s.role == COORDINATOR and s.pid is not None and self._alive(s.pid)
        }
        if not coordinators:
            return None
        for s in state.servers:
            if s.role == TABLET_SERVER and s.pid is not None and self._alive(s.pid):
                view = probe_metadata(HOST, s.ports["rpc"], timeout=1.0)
                if view is not None and view.coordinator is not None:
                    return coordinators.get(view.coordinator[1])
        for port, sid in coordinators.items():
            if probe_metadata(HOST, port, timeout=1.0) is not None:
                return sid
        return None

    def describe(self, state: ClusterState | None = None) -> dict[str, Any]:
        state = state or self._require_state()
        infos = [self._info(s) for s in state.servers]
        if any(i.role == COORDINATOR and i.alive for i in infos):
            active = self.active_coordinator(state)
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
        zk = self._server(state, ZOOKEEPER, 0)
        return {
            "version": state.version,
            "fluss_home": state.fluss_home,
            "run_dir": str(self.run_dir),
            "running": any(i.alive for i in infos),
            "bootstrap_servers": ",".join(b for b in bootstrap if b),
            "internal_bootstrap_servers": ",".join(internal),
            "sasl": {
                "enabled": bool(state.sasl_users),
                "mechanism": "PLAIN",
                "users": state.sasl_users,
            }
            if state.sasl_users
            else {"enabled": False},
            "zookeeper": f"{HOST}:{zk.ports['client']}",
            "ready_seconds": state.ready_seconds,
            "processes": [asdict(i) for i in infos],
        }

    def status(self) -> dict[str, Any] | None:
        state = self.load()
        return None if state is None else self.describe(state)

    def _wipe(self) -> None:
        if self.run_dir.exists():
            for child in self.run_dir.iterdir():
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)


def _count(state: ClusterState, role: str) -> int:
    return sum(1 for s in state.servers if s.role == role)


def _bind_failed(server: ServerState) -> bool:
    text = _tail(Path(server.log), 200) + _tail(Path(server.log).with_suffix(".out"), 200)
    return "Address already in use" in text or "BindException" in text


def _tail(path: Path, lines: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            data = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])


def _four_letter(port: int, word: bytes) -> bytes | None:
    import socket

    try:
        with socket.create_connection((HOST, port), timeout=1.0) as s:
            s.sendall(word)
            return s.recv(64).strip()
    except OSError:
        return None


# Loopback only: never route a scrape through a proxy from the environment.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _scrape(port: int, timeout: float = 2.0) -> str | None:
    try:
        with _NO_PROXY.open(f"http://{HOST}:{port}/metrics", timeout=timeout) as resp:
            return resp.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def temporary_cluster(
    version: str | None = None, *, tablet_servers: int = 1, prefix: str = "konsole-", **start: Any
) -> Iterator[dict[str, Any]]:
    """A cluster in a temporary run dir for the duration of a ``with`` block (benchmarks,
    scripts); stopped and removed on exit. Yields the description from ``start``."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        cluster = LocalCluster(Path(tmp) / "cluster")
        try:
            yield cluster.start(version, tablet_servers=tablet_servers, **start)
        finally:
            cluster.stop(timeout=60)

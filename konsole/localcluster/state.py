"""The local cluster's state and description: what ``cluster.json`` keeps and what
``start`` / ``status`` report, and the parsers of the runner's arguments."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from konsole.errors import ClusterError

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


@dataclass
class ServerState:
    role: str
    id: int
    ports: dict[str, int]
    config_dir: str
    data_dir: str
    log: str
    pid: int | None = None
    #: A tablet server's data dirs when it has its own disks (``--disk``); empty: ``data_dir``.
    data_dirs: list[str] = field(default_factory=list)
    #: tmpfs mounts made for it, listed before they are made (konsole.localcluster.disks).
    mounts: list[str] = field(default_factory=list)
    #: Its own class path and version when it was started again on another distribution
    #: (``start-server --fluss-home``: a rolling upgrade); empty/None: the cluster's.
    class_path: list[str] = field(default_factory=list)
    version: str | None = None


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
    #: The Fluss version of the jars it runs (the cluster's unless started on another).
    version: str | None = None


@dataclass(frozen=True)
class SaslInfo:
    """SASL/PLAIN on the client listeners: user names only (passwords are never kept)."""

    enabled: bool
    users: tuple[str, ...] = ()
    mechanism: str = "PLAIN"

    def to_dict(self) -> dict[str, Any]:
        if not self.enabled:
            return {"enabled": False}
        return {"enabled": True, "mechanism": self.mechanism, "users": list(self.users)}


@dataclass(frozen=True)
class ClusterDescription:
    """What ``start`` and ``status`` report: the cluster as its processes are now."""

    version: str
    #: The unpacked distribution the servers run from, or None for jars fetched with Maven.
    fluss_home: str | None
    run_dir: str
    running: bool
    #: Client listeners, comma-separated (SASL ones when SASL is on).
    bootstrap_servers: str
    #: The plaintext internal listeners, comma-separated.
    internal_bootstrap_servers: str
    sasl: SaslInfo
    zookeeper: str
    ready_seconds: float | None
    processes: tuple[ProcessInfo, ...]
    #: This start of the cluster (``ClusterState.run_id``): part of the cluster's identity.
    run_id: str | None = None

    def of_role(self, role: str) -> tuple[ProcessInfo, ...]:
        return tuple(p for p in self.processes if p.role == role)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``konsole cluster start/status --json``."""
        return {
            "version": self.version,
            "fluss_home": self.fluss_home,
            "run_dir": self.run_dir,
            "running": self.running,
            "bootstrap_servers": self.bootstrap_servers,
            "internal_bootstrap_servers": self.internal_bootstrap_servers,
            "sasl": self.sasl.to_dict(),
            "zookeeper": self.zookeeper,
            "ready_seconds": self.ready_seconds,
            "processes": [asdict(p) for p in self.processes],
            "run_id": self.run_id,
        }


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
    #: One id per ``start`` (a fresh cluster: new data, new ports); state files written
    #: before it have none (see :meth:`identity`).
    run_id: str | None = None

    def identity(self) -> str | None:
        """This start's id: ``run_id``, else one made of when it started (older files)."""
        if self.run_id:
            return self.run_id
        return f"started-{self.started_at:.3f}" if self.started_at else None

    def java_class_path(self, server: ServerState | None = None) -> str:
        """The class path ``server`` runs on: its own when it has one, else the cluster's."""
        if server is not None and server.class_path:
            return ":".join(server.class_path)
        return ":".join(self.class_path or [f"{self.lib}/*"])

    def server_version(self, server: ServerState) -> str:
        return server.version or self.version


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

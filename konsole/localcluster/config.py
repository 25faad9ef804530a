"""The servers' configuration files: ZooKeeper's ``zoo.cfg``, Fluss's ``server.yaml``.

SASL passwords reach ``server.yaml`` (the servers need them) and nothing else: the file is
made readable by its owner only, and the state file keeps user names alone.
"""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

from konsole.errors import ClusterError
from konsole.localcluster.state import (
    CLIENT_LISTENER,
    COORDINATOR,
    HOST,
    INTERNAL_LISTENER,
    PLAIN_LOGIN_MODULE,
    TABLET_SERVER,
    ZOOKEEPER,
    ClusterState,
    ServerState,
    parse_target,
)

#: ``[TARGET:]key=value`` parsed: (target or None, key, value).
Setting = tuple[str | None, str, str]


def write_log_config(run_dir: Path) -> None:
    """The log4j configuration every server of ``run_dir`` logs with."""
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    text = resources.files("konsole.localcluster").joinpath("log4j.properties").read_text()
    (run_dir / "log4j.properties").write_text(text)


def matches(target: str, server: ServerState) -> bool:
    """Whether a ``--set`` target (``ts``, ``ts1``, ``coordinator``...) names ``server``."""
    role, sid = parse_target(target)
    return role == server.role and (sid is None or sid == server.id)


def _zookeeper_config(server: ServerState) -> str:
    lines = {
        "dataDir": server.data_dir,
        "clientPort": str(server.ports["client"]),
        "clientPortAddress": HOST,
        "maxClientCnxns": "0",
        "admin.enableServer": "false",
        "tickTime": "1000",
        # ZooKeeper caps a client's session at 20 ticks by default; a server given a longer
        # `zookeeper.client.session-timeout` (a test that pauses one) gets what it asked for
        "maxSessionTimeout": "120000",
        "4lw.commands.whitelist": "ruok,srvr",
    }
    return "".join(f"{k}={v}\n" for k, v in lines.items())


def _listeners(server: ServerState, users: dict[str, str]) -> dict[str, str]:
    listeners = f"{INTERNAL_LISTENER}://{HOST}:{server.ports['rpc']}"
    cfg: dict[str, str] = {}
    if users:
        listeners += f", {CLIENT_LISTENER}://{HOST}:{server.ports['client']}"
        entries = " ".join(f'user_{u}="{p}"' for u, p in sorted(users.items()))
        cfg.update(
            {
                "internal.listener.name": INTERNAL_LISTENER,
                "security.protocol.map": f"{CLIENT_LISTENER}:SASL, {INTERNAL_LISTENER}:PLAINTEXT",
                "security.sasl.enabled.mechanisms": "PLAIN",
                "security.sasl.plain.jaas.config": f"{PLAIN_LOGIN_MODULE} required {entries};",
            }
        )
    cfg["bind.listeners"] = listeners
    return cfg


def write_server_config(
    run_dir: Path,
    state: ClusterState,
    server: ServerState,
    users: dict[str, str],
    settings: list[Setting],
) -> None:
    """Write ``server``'s configuration (and make its data dir)."""
    conf = Path(server.config_dir)
    conf.mkdir(parents=True, exist_ok=True)
    Path(server.data_dir).mkdir(parents=True, exist_ok=True)
    if server.role == ZOOKEEPER:
        (conf / "zoo.cfg").write_text(_zookeeper_config(server))
        return
    zk = next(s for s in state.servers if s.role == ZOOKEEPER)
    n_ts = sum(1 for s in state.servers if s.role == TABLET_SERVER)
    cfg: dict[str, str] = {
        "zookeeper.address": f"{HOST}:{zk.ports['client']}",
        # Short sessions so a killed server is noticed in seconds, not a minute.
        "zookeeper.client.session-timeout": "10s",
        "remote.data.dir": str(run_dir / "remote"),
        "metrics.reporters": "prometheus",
        "metrics.reporter.prometheus.port": str(server.ports["metrics"]),
        "netty.server.num-network-threads": "1",
        "netty.server.num-worker-threads": "3",
    }
    cfg.update(_listeners(server, users))
    if server.role == COORDINATOR:
        cfg["default.bucket.number"] = "1"
        cfg["default.replication.factor"] = str(min(3, n_ts))
    else:
        cfg["tablet-server.id"] = str(server.id)
        dirs = server.data_dirs or [server.data_dir]
        # One dir: data.dir, which both lines read. Several: data.dirs (the 1.0 line).
        cfg["data.dir"] = dirs[0]
        if len(dirs) > 1:
            cfg["data.dirs"] = ",".join(dirs)
    for target, key, value in settings:
        if target is None or matches(target, server):
            cfg[key] = value
    (conf / "server.yaml").write_text("".join(f"{k}: {v}\n" for k, v in cfg.items()))
    if users:
        os.chmod(conf / "server.yaml", 0o600)


def reconfigure(server: ServerState, settings: list[Setting]) -> None:
    """Write this start's server.yaml: the cluster's base config plus ``settings``."""
    if server.role == ZOOKEEPER:
        if settings:
            raise ClusterError("--set applies to coordinators and tablet servers only")
        return
    for target, key, _value in settings:
        if target is not None and not matches(target, server):
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

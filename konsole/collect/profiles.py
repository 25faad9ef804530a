"""Connection profiles: which cluster to poll, how, and with which health thresholds.

A profile comes from one of these sources, in this order:

1. ``--profile NAME``: ``[profiles.NAME]`` in ``config.toml`` in konsole's user config dir
   (platformdirs; ``KONSOLE_CONFIG`` or an explicit path overrides it);
2. ``--local``: the running local cluster's description (:func:`profile_from_local`);
3. ``--bootstrap``; 4. ``FLUSS_BOOTSTRAP``; 5. ``localhost:9123``.

Metrics endpoints: a profile's ``metrics`` URLs, else ``metrics_port`` on every server's
host (from metadata), else none; ``--metrics-port`` (:meth:`Profile.with_metrics_port`)
replaces both. :attr:`Profile.metrics_origin` says which, so the health rules can tell an
endpoint that stopped answering from one that was never there. konsole does not guess a
port: the Prometheus reporter's port is a server setting, and whatever answers on a guessed
one need not be this cluster's server.

Passwords never live in the file: a profile names an environment variable
(``password_env``) or a file (``password_file``) and :meth:`Profile.sasl` reads it when a
connection needs it. A :class:`Profile` holds no secret, so its repr, the ``profiles``
listing and every error text are safe to print. Bad input is one :class:`ProfileError`
line naming the file, the line and the key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import platformdirs

from fluss_proto.cluster import parse_bootstrap
from konsole.collect.logs.sources import CommandSource, FileSource, LogConfig, LogSource
from konsole.errors import ProfileError
from konsole.model import subjects
from konsole.model.known_servers import KnownServers
from konsole.model.masking import MaskRules, pattern_problem
from konsole.model.metrics import MetricsOrigin
from konsole.model.thresholds import HealthThresholds

if TYPE_CHECKING:  # imported when a password is read: the console starts without it
    from fluss_proto.sasl import SaslPlain

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_BOOTSTRAP",
    "HealthThresholds",
    "KeyLocator",
    "MetricsEndpoint",
    "MetricsOrigin",
    "Profile",
    "ProfileError",
    "default_config_path",
    "load_profiles",
    "profile_from_local",
    "resolve_profile",
]

DEFAULT_BOOTSTRAP: Final = "localhost:9123"
CONFIG_ENV: Final = "KONSOLE_CONFIG"
BOOTSTRAP_ENV: Final = "FLUSS_BOOTSTRAP"


@dataclass(frozen=True, slots=True)
class MetricsEndpoint:
    """One Prometheus endpoint; role and id are hints (the scrape reads them from labels)."""

    url: str
    role: str | None = None
    server_id: str | None = None


@dataclass(frozen=True, slots=True)
class Profile:
    """Everything needed to poll one cluster. Holds no secret (see :meth:`sasl`)."""

    name: str
    #: Where it came from: "profile", "local", "--bootstrap", FLUSS_BOOTSTRAP or "default".
    source: str
    bootstrap: tuple[str, ...]
    #: Coordinator addresses to probe (active / standby / unreachable); empty = learn them.
    coordinators: tuple[str, ...] = ()
    sasl_user: str | None = None
    password_env: str | None = None
    password_file: Path | None = None
    metrics: tuple[MetricsEndpoint, ...] = ()
    #: Prometheus port on every server's host, when ``metrics`` does not list URLs.
    metrics_port: int | None = None
    connect_timeout: float = 5.0
    request_timeout: float = 10.0
    metrics_timeout: float = 2.0
    #: Seconds one server may take to answer a poll's request (konsole.collect.cluster.poller:
    #: at most a quarter of the poll's budget); a server slower than that is named.
    server_timeout: float = 2.0
    poll_interval: float = 5.0
    #: Earliest offsets are read every Nth poll.
    earliest_every: int = 10
    #: Seconds between storage polls (remote log, KV snapshots, lake, table stats).
    storage_interval: float = 30.0
    health: HealthThresholds = field(default_factory=HealthThresholds)
    #: A local cluster's run id (one per start): a history tells two local clusters apart.
    run_id: str | None = None
    #: ``writes = true``: operator actions (``konsole admin``) may send their write keys
    #: (fluss_proto.api_keys.OPERATOR_ACTIONS); off by default, every other write stays off.
    writes: bool = False
    #: Where the servers' log lines come from (``[profiles.NAME.logs]``; a local cluster:
    #: its servers' own files); none configured: the evidence shows no log.
    logs: LogConfig = field(default_factory=LogConfig)
    #: ``mask = [...]``: columns whose values never leave konsole (konsole.model.masking).
    masks: MaskRules = field(default_factory=MaskRules)
    #: ``export = false``: rows are never written to a file (``--output``), only shown.
    export: bool = True
    #: ``expected_tablet_servers = [1, 2, 3]``: node ids that must be alive; one missing
    #: from metadata is ``server_gone`` until it is back or the list changes.
    expected_tablet_servers: tuple[int, ...] = ()
    #: ``server_gone_grace_s``: seconds after its last sighting a gone tablet server is
    #: forgotten (0: never, until ``konsole admin server retire ID``).
    server_gone_grace_s: float = 0.0

    def sasl(self, env: Mapping[str, str] | None = None) -> SaslPlain | None:
        """The SASL/PLAIN credentials, reading the password now; None without a user.

        Raises :class:`ProfileError` naming the variable or file (never a value).
        """
        if self.sasl_user is None:
            return None
        env = os.environ if env is None else env
        if self.password_env is not None:
            password = env.get(self.password_env)
            if not password:
                raise ProfileError(
                    f"environment variable {self.password_env} (the SASL password of "
                    f"profile {self.name!r}) is not set or empty"
                )
        elif self.password_file is not None:
            from store.file_kinds import input_refusal

            if (why := input_refusal(self.password_file)) is not None:
                raise ProfileError(
                    f"cannot read the SASL password file of profile {self.name!r}: {why}",
                    path=self.password_file,
                )
            try:
                password = self.password_file.read_text(encoding="utf-8").rstrip("\r\n")
            except OSError as exc:
                raise ProfileError(
                    f"cannot read the SASL password file of profile {self.name!r}: "
                    f"{exc.strerror or type(exc).__name__}",
                    path=self.password_file,
                ) from None
            if not password:
                raise ProfileError("the SASL password file is empty", path=self.password_file)
        else:
            raise ProfileError(
                f"profile {self.name!r} has sasl_user but neither password_env nor password_file"
            )
        from fluss_proto.sasl import SaslPlain

        try:
            return SaslPlain(self.sasl_user, password)
        except ValueError as exc:
            raise ProfileError(f"profile {self.name!r}: {exc}") from None

    @property
    def known_servers(self) -> KnownServers:
        """The tablet servers known before any poll: the expected set, and the grace."""
        return KnownServers.of_profile(
            self.name, self.expected_tablet_servers, self.server_gone_grace_s
        )

    @property
    def metrics_origin(self) -> MetricsOrigin:
        """How :meth:`metrics_endpoints` chooses: configured, found (the local cluster's
        description lists its servers' endpoints) or none."""
        if self.metrics and self.source == "local":
            return MetricsOrigin.FOUND
        if self.metrics or self.metrics_port is not None:
            return MetricsOrigin.CONFIGURED
        return MetricsOrigin.NONE

    @property
    def metrics_from_hosts(self) -> bool:
        """Whether the endpoints depend on the servers' hosts (``metrics_port``)."""
        return not self.metrics and self.metrics_port is not None

    def with_metrics_port(self, port: int | None) -> Profile:
        """``--metrics-port``: this port on every server's host, instead of the profile's
        ``metrics`` and ``metrics_port`` (None: the profile as it is)."""
        if port is None:
            return self
        return replace(self, metrics=(), metrics_port=port)

    def metrics_endpoints(self, hosts: Sequence[str] = ()) -> tuple[MetricsEndpoint, ...]:
        """The listed endpoints, else ``metrics_port`` on each host (bootstrap hosts if none)."""
        if self.metrics:
            return self.metrics
        if self.metrics_port is None:
            return ()
        hosts = tuple(hosts) or tuple(_host(a) for a in self.bootstrap)
        seen: dict[str, None] = {}
        for host in hosts:
            shown = f"[{host}]" if ":" in host else host
            seen.setdefault(f"http://{shown}:{self.metrics_port}/metrics")
        return tuple(MetricsEndpoint(url) for url in seen)

    def describe(self) -> dict[str, Any]:
        """A JSON-able summary without secrets (for ``konsole profiles``)."""
        password = (
            f"env {self.password_env}"
            if self.password_env
            else f"file {self.password_file}"
            if self.password_file
            else None
        )
        return {
            "name": self.name,
            "source": self.source,
            "bootstrap": list(self.bootstrap),
            "coordinators": list(self.coordinators),
            "sasl_user": self.sasl_user,
            "password": password,
            "metrics": [e.url for e in self.metrics],
            "metrics_port": self.metrics_port,
            "metrics_origin": self.metrics_origin.value,
            "poll_interval": self.poll_interval,
            "writes": self.writes,
            "mask": list(self.masks.patterns),
            "export": self.export,
            "expected_tablet_servers": list(self.expected_tablet_servers),
            "server_gone_grace_s": self.server_gone_grace_s,
        }


def _host(address: str) -> str:
    if address.startswith("["):
        return address[1:].partition("]")[0]
    return address.rpartition(":")[0] or address


# =========================================================================== file

_PROFILE_KEYS: Final = {
    "bootstrap",
    "writes",
    "mask",
    "export",
    "coordinators",
    "sasl_user",
    "password_env",
    "password_file",
    "metrics",
    "metrics_port",
    "connect_timeout",
    "request_timeout",
    "metrics_timeout",
    "server_timeout",
    "poll_interval",
    "earliest_every",
    "health",
    "logs",
    "storage_interval",
    "expected_tablet_servers",
    "server_gone_grace_s",
}
_TIMEOUT_KEYS: Final = (
    "connect_timeout",
    "request_timeout",
    "metrics_timeout",
    "server_timeout",
    "poll_interval",
    "storage_interval",
)
_HEALTH_KEYS: Final = {f.name: f.type for f in fields(HealthThresholds)}
#: Health keys in seconds, not ratios: >= 0 (0 turns the grace or floor off), or > 0 for
#: the storage limits (a stall of no time would always fire).
_HEALTH_SECONDS: Final = frozenset({"ingest_stall_after", "new_table_grace", "forecast_min_span_s"})
_HEALTH_POSITIVE_SECONDS: Final = frozenset(
    {
        "tiering_stall_s",
        "kv_snapshot_stale_s",
        "write_lock_warn_s",
        "write_lock_critical_s",
        "forecast_window_s",
    }
)
_SECRET_KEYS: Final = {"password", "pass", "secret", "sasl_password"}
_LINE_COL = re.compile(r"\s*\(at line (\d+), column \d+\)\s*$")


def default_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    override = env.get(CONFIG_ENV)
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir("konsole")) / "config.toml"


def load_profiles(path: Path) -> dict[str, Profile]:
    """Every profile in ``path`` (empty when the file does not exist); a FIFO or device
    (KONSOLE_CONFIG may name one) is refused before it is opened: opening a FIFO blocks."""
    from store.file_kinds import input_refusal

    if (why := input_refusal(path)) is not None:
        raise ProfileError(f"cannot read: {why}", path=path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"cannot read: {exc}", path=path) from None
    return parse_profiles(text, path)


def parse_profiles(text: str, path: Path) -> dict[str, Profile]:
    """Parse the TOML text of a config file (``path`` only names it in errors)."""
    import tomllib  # here: a run without a config file (a cron check's --bootstrap) skips it

    lines = text.splitlines()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _LINE_COL.search(message)
        line = int(match.group(1)) if match else None
        key = _key_on_line(lines, line)
        raise ProfileError(
            f"TOML syntax error: {_LINE_COL.sub('', message)}", path=path, line=line, key=key
        ) from None
    locate = KeyLocator(lines, path)
    for top in data:
        # [alerts] belongs to `konsole serve` (konsole.serve.alerts.config reads it).
        if top not in ("profiles", "alerts"):
            raise locate.error("unknown key (only [profiles.NAME] tables belong here)", (), top)
    profiles = data.get("profiles", {})
    if not isinstance(profiles, dict):
        raise locate.error("must be a table of [profiles.NAME]", (), "profiles")
    return {
        name: _profile(name, body, locate)
        for name, body in profiles.items()
        if _is_table(body, locate, name)
    }


def _is_table(body: object, locate: KeyLocator, name: str) -> bool:
    if not isinstance(body, dict):
        raise locate.error("a profile must be a table", ("profiles",), name)
    return True


def _profile(name: str, body: dict[str, Any], locate: KeyLocator) -> Profile:
    table = ("profiles", name)
    for key in body:
        if key.lower() in _SECRET_KEYS:
            raise locate.error(
                "passwords are not stored in the file: use password_env or password_file",
                table,
                key,
            )
        if key not in _PROFILE_KEYS:
            raise locate.error("unknown key", table, key)
    if "bootstrap" not in body:
        raise locate.error("missing key", table, "bootstrap", at_table=True)
    values: dict[str, Any] = {"name": name, "source": "profile"}
    values["bootstrap"] = _addresses(body["bootstrap"], locate, table, "bootstrap")
    if "coordinators" in body:
        values["coordinators"] = _addresses(body["coordinators"], locate, table, "coordinators")
    for key in ("sasl_user", "password_env"):
        if key in body:
            values[key] = _string(body[key], locate, table, key)
    if "password_file" in body:
        raw = _string(body["password_file"], locate, table, "password_file")
        values["password_file"] = Path(raw).expanduser()
    if "password_env" in values and "password_file" in values:
        raise locate.error("give password_env or password_file, not both", table, "password_file")
    if ("password_env" in values or "password_file" in values) and "sasl_user" not in values:
        raise locate.error("a password needs sasl_user", table, "sasl_user", at_table=True)
    if "metrics" in body:
        urls = body["metrics"]
        if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
            raise locate.error("must be a list of URLs", table, "metrics")
        for url in urls:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise locate.error("must be http(s) URLs", table, "metrics")
        values["metrics"] = tuple(MetricsEndpoint(u) for u in urls)
    if "metrics_port" in body:
        port = body["metrics_port"]
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise locate.error("must be a port number", table, "metrics_port")
        values["metrics_port"] = port
    for key in _TIMEOUT_KEYS:
        if key in body:
            values[key] = _positive(body[key], locate, table, key)
    if "earliest_every" in body:
        every = body["earliest_every"]
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise locate.error("must be an integer >= 1", table, "earliest_every")
        values["earliest_every"] = every
    if "health" in body:
        values["health"] = _thresholds(body["health"], locate, (*table, "health"))
    if "writes" in body:
        if not isinstance(body["writes"], bool):
            raise locate.error("must be true or false", table, "writes")
        values["writes"] = body["writes"]
    if "logs" in body:
        values["logs"] = _logs(body["logs"], locate, (*table, "logs"))
    if "mask" in body:
        values["masks"] = _masks(body["mask"], locate, table)
    if "export" in body:
        if not isinstance(body["export"], bool):
            raise locate.error("must be true or false", table, "export")
        values["export"] = body["export"]
    values |= _known_servers(body, locate, table)
    return Profile(**values)


def _known_servers(
    body: dict[str, Any], locate: KeyLocator, table: tuple[str, ...]
) -> dict[str, Any]:
    """``expected_tablet_servers`` and ``server_gone_grace_s`` (konsole.model.known_servers)."""
    values: dict[str, Any] = {}
    if "expected_tablet_servers" in body:
        ids = body["expected_tablet_servers"]
        if not isinstance(ids, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids
        ):
            raise locate.error(
                "must be a list of tablet server ids (integers >= 0)",
                table,
                "expected_tablet_servers",
            )
        values["expected_tablet_servers"] = tuple(sorted(set(ids)))
    if "server_gone_grace_s" in body:
        grace = body["server_gone_grace_s"]
        if isinstance(grace, bool) or not isinstance(grace, int | float) or grace < 0:
            raise locate.error(
                "must be a number of seconds >= 0 (0: until retired)",
                table,
                "server_gone_grace_s",
            )
        values["server_gone_grace_s"] = float(grace)
    return values


def _masks(body: object, locate: KeyLocator, table: tuple[str, ...]) -> MaskRules:
    if not isinstance(body, list):
        raise locate.error("must be a list of COLUMN or DB.TABLE.COLUMN patterns", table, "mask")
    for pattern in body:
        if (problem := pattern_problem(pattern)) is not None:
            raise locate.error(problem, table, "mask")
    return MaskRules(tuple(body))


def _logs(body: object, locate: KeyLocator, table: tuple[str, ...]) -> LogConfig:
    """``[profiles.NAME.logs]``: a default source, and ``servers."<subject>"`` tables."""
    if not isinstance(body, dict):
        raise locate.error("must be a table", table[:-1], table[-1])
    own = {k: v for k, v in body.items() if k != "servers"}
    default = _log_source(own, locate, table) if own else None
    servers: dict[str, LogSource] = {}
    named = body.get("servers", {})
    if not isinstance(named, dict):
        raise locate.error("must be a table of servers", table, "servers")
    for subject, entry in named.items():
        where = (*table, "servers", subject)
        if not isinstance(entry, dict):
            raise locate.error("must be a table", where[:-1], subject)
        if not subject.startswith(("tablet-server ", "coordinator ")):
            raise locate.error(
                'name a server as "tablet-server ID" or "coordinator HOST:PORT"',
                (*table, "servers"),
                subject,
            )
        servers[subject] = _log_source(entry, locate, where)
    return LogConfig(default, servers)


def _log_source(body: dict[str, Any], locate: KeyLocator, table: tuple[str, ...]) -> LogSource:
    for key in body:
        if key not in ("path", "command", "timeout"):
            raise locate.error("unknown key (path, command, timeout)", table, key)
    if ("path" in body) == ("command" in body):
        raise locate.error("give one of path or command", table, "path", at_table=True)
    if "path" in body:
        if "timeout" in body:
            raise locate.error("a timeout applies to a command", table, "timeout")
        return FileSource(_string(body["path"], locate, table, "path"))
    argv = body["command"]
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and a for a in argv):
        raise locate.error(
            "must be a list of arguments (no shell: give sh -c yourself if you need one)",
            table,
            "command",
        )
    timeout = _positive(body["timeout"], locate, table, "timeout") if "timeout" in body else None
    return CommandSource(tuple(argv), **({"timeout": timeout} if timeout else {}))


def _thresholds(body: object, locate: KeyLocator, table: tuple[str, ...]) -> HealthThresholds:
    if not isinstance(body, dict):
        raise locate.error("must be a table", table[:-1], table[-1])
    values: dict[str, Any] = {}
    for key, value in body.items():
        kind = _HEALTH_KEYS.get(key)
        if kind is None:
            raise locate.error("unknown key", table, key)
        if kind == "bool":
            if not isinstance(value, bool):
                raise locate.error("must be true or false", table, key)
        elif kind == "int":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise locate.error("must be an integer >= 1", table, key)
        elif key in _HEALTH_SECONDS:
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise locate.error("must be a number of seconds >= 0", table, key)
        elif key in _HEALTH_POSITIVE_SECONDS:
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise locate.error("must be a number of seconds > 0", table, key)
        elif isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            raise locate.error("must be a ratio in (0, 1]", table, key)
        values[key] = value
    thresholds = replace(HealthThresholds(), **values)
    if thresholds.disk_usage_warn > thresholds.disk_usage_critical:
        raise locate.error(
            "must not exceed disk_usage_critical", table, "disk_usage_warn", at_table=False
        )
    # Headroom and time left: the critical level is the nearer one.
    for warn, critical in (
        ("disk_headroom_warn", "disk_headroom_critical"),
        ("write_lock_warn_s", "write_lock_critical_s"),
    ):
        if getattr(thresholds, critical) > getattr(thresholds, warn):
            raise locate.error(f"must not exceed {warn}", table, critical, at_table=False)
    return thresholds


def _addresses(
    value: object, locate: KeyLocator, table: tuple[str, ...], key: str
) -> tuple[str, ...]:
    if isinstance(value, str):
        items: list[str] = [value]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = list(value)
    else:
        raise locate.error("must be a string or a list of host:port strings", table, key)
    try:
        return tuple(parse_bootstrap(items))
    except ValueError as exc:
        raise locate.error(str(exc), table, key) from None


def _string(value: object, locate: KeyLocator, table: tuple[str, ...], key: str) -> str:
    if not isinstance(value, str) or not value:
        raise locate.error("must be a non-empty string", table, key)
    return value


def _positive(value: object, locate: KeyLocator, table: tuple[str, ...], key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise locate.error("must be a number of seconds > 0", table, key)
    return float(value)


def _key_on_line(lines: list[str], line: int | None) -> str | None:
    if line is None or not 0 < line <= len(lines):
        return None
    text = lines[line - 1].strip()
    if text.startswith("["):
        return text.strip("[] ") or None
    key, eq, _ = text.partition("=")
    return key.strip().strip("\"'") or None if eq else None


class KeyLocator:
    """Finds the line of a key under a table header (tomllib keeps no positions); also
    used for the ``[alerts]`` table (konsole.serve.alerts.config)."""

    def __init__(self, lines: list[str], path: Path) -> None:
        self.lines, self.path = lines, path

    def error(
        self, message: str, table: tuple[str, ...], key: str, *, at_table: bool = False
    ) -> ProfileError:
        dotted = ".".join((*table, key))
        return ProfileError(
            message, path=self.path, line=self._line(table, key, at_table), key=dotted
        )

    def _line(self, table: tuple[str, ...], key: str, at_table: bool) -> int | None:
        wanted = (*table, key)
        header: tuple[str, ...] = ()
        table_line: int | None = None
        for number, raw in enumerate(self.lines, start=1):
            text = raw.strip()
            if text.startswith("["):
                header = tuple(_split_dotted(text.strip("[] ")))
                if not at_table and header == wanted:  # a sub-table such as [profiles.x.health]
                    return number
                if header == table and table_line is None:
                    table_line = number
                continue
            name, eq, _ = text.partition("=")
            if not eq or text.startswith("#"):
                continue
            full = (*header, *_split_dotted(name))
            if not at_table and full == wanted:
                return number
            if table and full[: len(table)] == table and table_line is None:
                table_line = number
        return table_line


def _split_dotted(name: str) -> list[str]:
    return [part.strip().strip("\"'") for part in name.split(".")]


# =========================================================================== resolution


def profile_from_local(description: Mapping[str, Any]) -> Profile:
    """A profile for the local cluster, from the JSON shape of its description
    (``LocalCluster.describe().to_dict()``, as ``konsole cluster status --json`` prints it)."""
    bootstrap = description.get("bootstrap_servers")
    if not bootstrap:
        raise ProfileError("the local cluster description names no bootstrap servers")
    coordinators: list[str] = []
    endpoints: list[MetricsEndpoint] = []
    for process in description.get("processes", ()):
        role = process.get("role")
        if role not in ("coordinator", "tablet-server"):
            continue
        if role == "coordinator" and process.get("endpoint"):
            coordinators.append(process["endpoint"])
        if process.get("metrics_url"):
            endpoints.append(
                MetricsEndpoint(
                    process["metrics_url"],
                    role="coordinator" if role == "coordinator" else "tablet",
                    server_id=str(process.get("id")) if role == "tablet-server" else None,
                )
            )
    sasl = description.get("sasl") or {}
    users = sasl.get("users") or [] if sasl.get("enabled") else []
    logs: dict[str, LogSource] = {}
    for process in description.get("processes", ()):
        subject = _local_subject(process)
        if subject is not None and process.get("log"):
            logs[subject] = FileSource(str(process["log"]))
    return Profile(
        name="local",
        source="local",
        bootstrap=tuple(parse_bootstrap(bootstrap)),
        coordinators=tuple(parse_bootstrap(coordinators)) if coordinators else (),
        # The description keeps no password: the user must give it via FLUSS_PASSWORD.
        sasl_user=users[0] if users else None,
        password_env="FLUSS_PASSWORD" if users else None,
        metrics=tuple(endpoints),
        run_id=description.get("run_id") or None,
        logs=LogConfig(servers=logs),
    )


def _local_subject(process: Mapping[str, Any]) -> str | None:
    """The event subject of a local process (the key of its log source)."""
    if process.get("role") == "tablet-server":
        return subjects.tablet_server(str(process.get("id")))
    if process.get("role") == "coordinator" and process.get("endpoint"):
        return subjects.coordinator(process["endpoint"])
    return None


def resolve_profile(
    *,
    profile: str | None = None,
    bootstrap: str | None = None,
    local: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    config_path: Path | None = None,
) -> Profile:
    """Pick the profile by the module's order; ``local`` is a local cluster description."""
    env = os.environ if env is None else env
    chosen = [
        n
        for n, v in (("--profile", profile), ("--local", local), ("--bootstrap", bootstrap))
        if v or (n == "--bootstrap" and v is not None)  # an empty --bootstrap is an error
    ]
    if len(chosen) > 1:
        raise ProfileError(f"give only one of {', '.join(chosen)}")
    if profile:
        path = config_path or default_config_path(env)
        profiles = load_profiles(path)
        if profile not in profiles:
            known = ", ".join(sorted(profiles)) or "none"
            raise ProfileError(f"no profile {profile!r} (profiles: {known})", path=path)
        return profiles[profile]
    if local is not None:
        return profile_from_local(local)
    for name, value in (("--bootstrap", bootstrap), (BOOTSTRAP_ENV, env.get(BOOTSTRAP_ENV))):
        if value or (name == "--bootstrap" and value is not None):
            try:
                return Profile(name=name, source=name, bootstrap=tuple(parse_bootstrap(value)))
            except ValueError as exc:
                raise ProfileError(f"{name}: {exc}") from None
    return Profile(name="default", source="default", bootstrap=(DEFAULT_BOOTSTRAP,))

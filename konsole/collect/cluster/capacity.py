"""The capacity part of each poll (konsole.model.capacity): the tablet servers' own write
limits and data dirs, the dirs' file systems where konsole can see them, and the forecasts.

- **Configs**, on a slow cadence (``config_interval``, 60 s; the first poll asks at once):
  DescribeClusterConfigs asked of *each* tablet server (fluss_proto ``server_configs``, one
  round trip), since a tablet server's keys are in its own answer only. Per key: a dynamic
  value, else the server's ``server.yaml`` value, else the 1.0 line's default. A server that
  does not export ``diskWriteLocked`` has no write lock (0.9.1): its limits are None. A
  failed read keeps the last answer.
- **Data dirs**: ``data.dirs``, else ``data.dir``, from the same answer. A dir is *visible*
  when the server runs on this host (a loopback or local address) and the dir's
  ``disk.properties`` names this server (1.0 line): then ``statvfs`` gives its file system's
  size and the space usable (what the server's own ratio counts). Otherwise its figures are
  unknown and say why. Two dirs on one file system are one disk (the server counts it once).
- **Forecasts**: the collector keeps, per server and per visible dir of a server with two
  disks or more (with one, the server's own ratio is that disk's), the samples of its usage
  ratio over the forecast window (the profile's ``forecast_window_s``; bounded in
  count too), seeded from the history when a face has one (:meth:`CapacityCollector.seed`),
  and fits them each poll (konsole.model.forecast) against the server's write-limit ratio.

Never raises into the poll: a failure is a ``why`` on the figure it concerns.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import socket
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from konsole.model.capacity import (
    DEFAULT_CHECK_INTERVAL_S,
    DEFAULT_RECOVER_RATIO,
    DEFAULT_WRITE_LIMIT_RATIO,
    CapacityPart,
    ConfigSource,
    DirUsage,
    ServerCapacity,
    WriteLimits,
)
from konsole.model.forecast import Forecast, forecast_crossing
from konsole.model.thresholds import HealthThresholds

if TYPE_CHECKING:
    from fluss_proto.model import ClusterView, ConfigEntry
    from konsole.model.snapshot import ClusterSnapshot

__all__ = [
    "CONFIG_INTERVAL_S",
    "LIMIT_KEY",
    "RECOVER_KEY",
    "CapacityCollector",
    "data_dirs",
    "dir_usage",
    "effective",
    "write_limits",
]

log = logging.getLogger(__name__)

LIMIT_KEY: Final = "server.data-disk.write-limit-ratio"
RECOVER_KEY: Final = "server.data-disk.write-recover-ratio"
INTERVAL_KEY: Final = "server.data-disk.check-interval"
DATA_DIRS_KEY: Final = "data.dirs"
DATA_DIR_KEY: Final = "data.dir"
#: Seconds between two reads of the servers' configs.
CONFIG_INTERVAL_S: Final = 60.0
#: Most samples kept per series (a 1 h window polled every second fits).
MAX_SAMPLES: Final = 4096
#: The 1.0 line's ConfigEntry sources.
_SOURCES: Final = {
    "DYNAMIC_SERVER_CONFIG": ConfigSource.DYNAMIC,
    "INITIAL_SERVER_CONFIG": ConfigSource.INITIAL,
}
_LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})


def effective(entries: Iterable[ConfigEntry], key: str) -> tuple[str | None, ConfigSource]:
    """A key's value as the server applies it: dynamic, else initial (else: default)."""
    found: dict[ConfigSource, str | None] = {}
    for e in entries:
        if e.key == key:
            found[_SOURCES.get(e.source, ConfigSource.INITIAL)] = e.value
    for source in (ConfigSource.DYNAMIC, ConfigSource.INITIAL):
        if source in found:
            return found[source], source
    return None, ConfigSource.DEFAULT


def _duration_s(text: str) -> float | None:
    """A Fluss duration (``30s``, ``1 min``, ``500ms``, ``2h``, a bare number of ms)."""
    units = {
        "ms": 0.001,
        "milli": 0.001,
        "millis": 0.001,
        "s": 1.0,
        "sec": 1.0,
        "secs": 1.0,
        "second": 1.0,
        "seconds": 1.0,
        "m": 60.0,
        "min": 60.0,
        "mins": 60.0,
        "minute": 60.0,
        "minutes": 60.0,
        "h": 3600.0,
        "hour": 3600.0,
        "hours": 3600.0,
        "d": 86400.0,
        "day": 86400.0,
        "days": 86400.0,
    }
    text = text.strip().lower()
    digits = len(text) - len(text.lstrip("0123456789."))
    number, unit = text[:digits], text[digits:].strip()
    try:
        value = float(number)
    except ValueError:
        return None
    if not unit:
        return value / 1000  # Fluss reads a bare number as milliseconds
    factor = units.get(unit)
    return None if factor is None else value * factor


def write_limits(entries: Sequence[ConfigEntry]) -> WriteLimits | str:
    """The write limits a tablet server applies, or why they cannot be read."""
    limit_text, limit_source = effective(entries, LIMIT_KEY)
    recover_text, recover_source = effective(entries, RECOVER_KEY)
    interval_text, _ = effective(entries, INTERVAL_KEY)
    try:
        limit = DEFAULT_WRITE_LIMIT_RATIO if limit_text is None else float(limit_text)
        recover = DEFAULT_RECOVER_RATIO if recover_text is None else float(recover_text)
    except ValueError:
        return f"unreadable {LIMIT_KEY} / {RECOVER_KEY}: {limit_text!r}, {recover_text!r}"
    interval = DEFAULT_CHECK_INTERVAL_S if interval_text is None else _duration_s(interval_text)
    return WriteLimits(limit, recover, limit_source, recover_source, interval)


def data_dirs(entries: Sequence[ConfigEntry]) -> tuple[str, ...]:
    """``data.dirs`` (comma-separated), else ``data.dir``; empty when neither was given."""
    many, _ = effective(entries, DATA_DIRS_KEY)
    if many:
        return tuple(d.strip() for d in many.split(",") if d.strip())
    one, _ = effective(entries, DATA_DIR_KEY)
    return (one.strip(),) if one else ()


def _disk_server_id(path: Path) -> str | None:
    """``server.id`` of a dir's ``disk.properties`` (a Java properties file), or None."""
    try:
        text = (path / "disk.properties").read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(("#", "!")) or "=" not in line:
            continue
        key, _, value = line.partition("=")
        if key.strip() == "server.id":
            return value.strip()
    return None


@functools.lru_cache(maxsize=256)
def _local_host(host: str | None) -> bool:
    """Whether ``host`` is this machine (asked once per host: a name lookup may be slow)."""
    if host is None:
        return False
    if host in _LOOPBACK or host.startswith("127."):
        return True
    try:
        return host in {socket.gethostname(), socket.getfqdn()} or host in {
            a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None)
        }
    except OSError:
        return False


StatFn = Callable[[str], os.statvfs_result]
DeviceFn = Callable[[str], int]


def _device(path: str) -> int:
    return os.stat(path).st_dev


#: (client, tablet server ids) -> each server's config entries, or its failure.
Answers = Mapping[int, "Sequence[ConfigEntry] | Exception"]
ConfigsFn = Callable[[Any, Sequence[int]], Awaitable[Answers]]


async def read_server_configs(client: Any, nodes: Sequence[int]) -> Answers:
    """DescribeClusterConfigs of each tablet server (fluss_proto ``server_configs``)."""
    from fluss_proto.admin import FlussAdmin

    return await FlussAdmin(client).server_configs(nodes)


def dir_usage(
    server_id: str,
    host: str | None,
    paths: Sequence[str],
    *,
    stat: StatFn = os.statvfs,
    device: DeviceFn = _device,
    owner: Callable[[Path], str | None] = _disk_server_id,
) -> tuple[DirUsage, ...]:
    """Each data dir's file system, when visible from here (module docs)."""
    here = _local_host(host)
    out: list[DirUsage] = []
    seen: dict[int, str] = {}
    for path in paths:
        if not here:
            out.append(DirUsage(path, why=f"not on this host (the server runs on {host})"))
            continue
        named = owner(Path(path))
        if named != server_id:
            why = (
                "no disk.properties here (a 1.0-line server writes one)"
                if named is None
                else f"its disk.properties names server {named}"
            )
            out.append(DirUsage(path, why=why))
            continue
        try:
            st = stat(path)
            dev = device(path)
        except OSError as exc:
            out.append(DirUsage(path, why=f"statvfs failed: {exc.strerror or exc}"))
            continue
        out.append(
            DirUsage(
                path,
                total_bytes=st.f_blocks * st.f_frsize,
                free_bytes=st.f_bavail * st.f_frsize,
                same_disk_as=seen.get(dev),
            )
        )
        seen.setdefault(dev, path)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class _ServerConfig:
    limits: WriteLimits | None
    why: str | None
    dirs: tuple[str, ...]
    read_at: float


Point = tuple[float, float]


class CapacityCollector:
    """Makes each poll's capacity part; holds the configs read and the forecast samples."""

    def __init__(
        self,
        thresholds: HealthThresholds | None = None,
        *,
        config_interval: float = CONFIG_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        stat: StatFn = os.statvfs,
        device: DeviceFn = _device,
        configs: ConfigsFn = read_server_configs,
    ) -> None:
        self.thresholds = thresholds or HealthThresholds()
        self._read = configs
        self.config_interval = config_interval
        self._clock = clock
        self._stat = stat
        self._device = device
        self._configs: dict[str, _ServerConfig] = {}
        #: dir -> the server its disk.properties names, read again with the configs
        self._owners: dict[Path, str | None] = {}
        self._due = 0.0
        #: (server id, dir or None) -> (time, usage ratio), oldest first
        self._samples: dict[tuple[str, str | None], deque[Point]] = {}

    # ------------------------------------------------------------------ samples

    def seed(self, series: Mapping[tuple[str, str | None], Sequence[Point]]) -> None:
        """Start the forecasts from recorded samples (a history's; oldest first)."""
        for key, points in series.items():
            kept = self._samples.setdefault(key, deque(maxlen=MAX_SAMPLES))
            merged = sorted({*kept, *((t, v) for t, v in points if v is not None)})
            kept.clear()
            kept.extend(merged[-MAX_SAMPLES:])

    def _add(self, key: tuple[str, str | None], at: float, value: float | None) -> list[Point]:
        samples = self._samples.setdefault(key, deque(maxlen=MAX_SAMPLES))
        if value is not None and (not samples or at > samples[-1][0]):
            samples.append((at, value))
        horizon = at - self.thresholds.forecast_window_s
        while samples and samples[0][0] < horizon:
            samples.popleft()
        return list(samples)

    def _forecast(
        self,
        key: tuple[str, str | None],
        at: float,
        value: float | None,
        limits: WriteLimits | None,
    ) -> Forecast | None:
        points = self._add(key, at, value)
        if limits is None:
            return None
        rules = self.thresholds
        return forecast_crossing(
            points,
            limits.limit_ratio,
            now=at,
            window_s=rules.forecast_window_s,
            min_span_s=rules.forecast_min_span_s,
            step_s=limits.check_interval_s or 0.0,  # the server locks only at a check
        )

    # ------------------------------------------------------------------ configs

    async def _read_configs(self, client: Any, view: ClusterView) -> None:
        nodes = [s.node_id for s in view.tablet_servers if s.error is None]
        if not nodes:
            return
        try:
            answers = await self._read(client, nodes)
        except Exception as exc:  # the batch itself failed: keep what was read before
            log.debug("server configs: %s", exc)
            return
        now = self._clock()
        for node, answer in answers.items():
            key = str(node)
            if isinstance(answer, Exception):
                old = self._configs.get(key)
                why = f"DescribeClusterConfigs failed: {str(answer)[:200]}"
                self._configs[key] = (
                    replace(old, why=old.why or why) if old else _ServerConfig(None, why, (), now)
                )
                continue
            limits = write_limits(answer)
            self._configs[key] = _ServerConfig(
                limits if isinstance(limits, WriteLimits) else None,
                limits if isinstance(limits, str) else None,
                data_dirs(answer),
                now,
            )

    def _owner(self, path: Path) -> str | None:
        if path not in self._owners:
            self._owners[path] = _disk_server_id(path)
        return self._owners[path]

    # ------------------------------------------------------------------ one poll

    async def collect(self, client: Any, snapshot: ClusterSnapshot) -> CapacityPart | None:
        """The capacity part of a successful poll (None for a failed one)."""
        view = snapshot.view
        if view is None or not snapshot.ok:
            return None
        metrics = snapshot.tablet_metrics
        now = self._clock()
        if client is not None and now >= self._due:
            self._due = now + self.config_interval
            self._owners.clear()
            await self._read_configs(client, view)
        hosts = {str(s.node_id): s.host for s in view.tablet_servers}
        ids = sorted(set(hosts) | set(metrics), key=lambda i: (len(i), i))
        # statvfs and disk.properties off the event loop: a data dir on a hung mount must
        # not stop the poll (the poll's timeout bounds the wait; the thread is left to it).
        seen = await asyncio.to_thread(self._dirs, {i: hosts.get(i) for i in ids})
        at = snapshot.taken_at
        servers = {sid: self._server(sid, seen.get(sid, ()), snapshot, at) for sid in ids}
        live = set(servers)
        for key in [k for k in self._samples if k[0] not in live]:
            del self._samples[key]  # bounded: servers of this poll only
        rules = self.thresholds
        return CapacityPart(
            at, MappingProxyType(servers), rules.forecast_window_s, rules.forecast_min_span_s
        )

    def _dirs(self, hosts: Mapping[str, str | None]) -> dict[str, tuple[DirUsage, ...]]:
        """Each server's data dirs as seen from here (blocking: file system calls)."""
        out = {}
        for sid, host in hosts.items():
            config = self._configs.get(sid)
            if config is not None:
                out[sid] = dir_usage(
                    sid, host, config.dirs, stat=self._stat, device=self._device, owner=self._owner
                )
        return out

    def _server(
        self, sid: str, dirs: tuple[DirUsage, ...], snapshot: ClusterSnapshot, at: float
    ) -> ServerCapacity:
        m = snapshot.tablet_metrics.get(sid)
        config = self._configs.get(sid)
        limits, why = (config.limits, config.why) if config else (None, "configs not read yet")
        if m is not None and m.disk_write_locked is None and m.disk_usage_ratio is None:
            limits, why = None, "the server has no data-disk write lock (0.9.1)"
        usage = None if m is None else m.disk_usage_ratio
        # A dir gets its own forecast when the server has two disks or more: with one, the
        # server's own figure is that disk's (its ratio is the worst of its file systems).
        disks = [d for d in dirs if d.used_ratio is not None and d.same_disk_as is None]
        if len(disks) > 1:
            dirs = tuple(
                replace(d, forecast=self._forecast((sid, d.path), at, d.used_ratio, limits))
                if d in disks
                else d
                for d in dirs
            )
        return ServerCapacity(
            sid,
            limits,
            why,
            dirs,
            self._forecast((sid, None), at, usage, limits),
            None if config is None else config.read_at,
        )

"""What a poll learned about the tablet servers' disks beyond their metrics: the capacity
part of a snapshot. Pure; the collector is :mod:`konsole.collect.cluster.capacity`.

Per tablet server: its write-lock limits as the server itself reports its configuration
(DescribeClusterConfigs asked of that server: a dynamic key, else its ``server.yaml``, else
the 1.0 default, each labelled with where it came from), its data dirs (``data.dirs``, else
``data.dir``), what each dir's file system holds when konsole can see it (same host, and the
dir's ``disk.properties`` names this server), and the forecasts made from the recorded
trend (:mod:`konsole.model.forecast`): when the server's ``diskUsageRatio``, and each dir's
usage, reaches the server's write-limit ratio.

The server's own usage ratio and lock state stay in its metrics
(:class:`~konsole.model.metrics.ServerMetrics`); what is derived from both (headroom, the
rules) is :mod:`konsole.model.headroom`'s. Unknown is None everywhere, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final

from konsole.model import subjects
from konsole.model.forecast import Forecast

__all__ = [
    "DEFAULT_CHECK_INTERVAL_S",
    "DEFAULT_RECOVER_RATIO",
    "DEFAULT_WRITE_LIMIT_RATIO",
    "CapacityPart",
    "ConfigSource",
    "DirUsage",
    "ServerCapacity",
    "WriteLimits",
    "used_bytes",
]

#: The 1.0 line's defaults (ConfigOptions.java:449-482): a key a server was not given.
DEFAULT_WRITE_LIMIT_RATIO: Final = 0.85
DEFAULT_RECOVER_RATIO: Final = 0.80
DEFAULT_CHECK_INTERVAL_S: Final = 30.0


class ConfigSource(StrEnum):
    """Where a server's effective value of a key comes from."""

    #: AlterClusterConfigs (``DYNAMIC_SERVER_CONFIG``): the whole cluster's.
    DYNAMIC = "dynamic"
    #: The server's own ``server.yaml`` (``INITIAL_SERVER_CONFIG``).
    INITIAL = "initial"
    #: Neither: the server's default (the 1.0 line's value).
    DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class WriteLimits:
    """A tablet server's data-disk write lock settings, as it reports them."""

    limit_ratio: float
    recover_ratio: float
    limit_source: ConfigSource
    recover_source: ConfigSource
    #: ``server.data-disk.check-interval`` in seconds (None: a value konsole cannot read).
    check_interval_s: float | None = DEFAULT_CHECK_INTERVAL_S

    @property
    def enabled(self) -> bool:
        """A limit of 1.0 turns the lock off (DiskUsageMonitor.update)."""
        return self.limit_ratio < 1.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "write_limit_ratio": self.limit_ratio,
            "write_recover_ratio": self.recover_ratio,
            "write_limit_source": self.limit_source.value,
            "write_recover_source": self.recover_source.value,
            "check_interval_s": self.check_interval_s,
            "enabled": self.enabled,
        }


@dataclass(frozen=True, slots=True)
class DirUsage:
    """One data dir of a tablet server and its file system, as konsole saw it."""

    path: str
    #: The file system's size and what is free for the server (``statvfs``: blocks
    #: available to unprivileged users, which is what the server's Java ``getUsableSpace``
    #: counts); None when konsole cannot see the dir (``why``).
    total_bytes: int | None = None
    free_bytes: int | None = None
    #: When the dir shares a file system with an earlier dir of the same server: that one.
    same_disk_as: str | None = None
    forecast: Forecast | None = None
    why: str | None = None

    @property
    def used_bytes(self) -> int | None:
        return used_bytes(self.total_bytes, self.free_bytes)

    @property
    def used_ratio(self) -> float | None:
        """``(total - usable) / total``: the server's own measure (DiskUsageCollector)."""
        used = self.used_bytes
        if used is None or not self.total_bytes:
            return None
        return used / self.total_bytes


def used_bytes(total: int | None, free: int | None) -> int | None:
    """A file system's bytes not free for the server (None when either is unknown)."""
    return None if total is None or free is None else total - free


@dataclass(frozen=True, slots=True)
class ServerCapacity:
    """One tablet server's capacity facts beyond its metrics."""

    server_id: str
    #: None: not read (``limits_why`` says why), or the server has no write lock (0.9.1).
    limits: WriteLimits | None = None
    limits_why: str | None = None
    #: The data dirs the server names (empty: not read).
    dirs: tuple[DirUsage, ...] = ()
    #: When the server's ``diskUsageRatio`` reaches its write-limit ratio.
    forecast: Forecast | None = None
    #: When the limits were read (configs are read on a slower cadence than polls).
    read_at: float | None = None

    @property
    def subject(self) -> str:
        return subjects.tablet_server(self.server_id)


@dataclass(frozen=True, slots=True)
class CapacityPart:
    """The capacity facts of one poll: tablet server id -> its facts."""

    taken_at: float
    servers: Mapping[str, ServerCapacity] = field(default_factory=lambda: MappingProxyType({}))
    #: The forecast's window and the fewest seconds of history it needs (the profile's).
    window_s: float = 0.0
    min_span_s: float = 0.0

    def server(self, server_id: str) -> ServerCapacity | None:
        return self.servers.get(server_id)

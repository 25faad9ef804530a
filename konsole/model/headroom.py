"""Headroom per tablet server and per data dir, and how soon each reaches its write lock.
Pure: every figure here is derived once from a snapshot (its metrics and its capacity
part, :mod:`konsole.model.capacity`), and the check, the health rules, the events, serve's
series and ``konsole capacity`` read these functions.

For each tablet server:

- **the server's figure**: its ``diskUsageRatio`` (the worst of its file systems, as the
  server measures it) against its *own* write-limit and recover ratios, the lock state it
  reports, and the forecast of its usage reaching the limit;
- **each data dir** konsole can see: bytes total, free and used, the same ratios, its own
  forecast (a server with two disks locks when either one reaches the limit);
- **KV backpressure**: the worst table's pressure on it and the rejections since it started;
- **what drives the growth**: the tables with replicas on it, by rows per second (from two
  polls), and the bytes per second it takes in (its ``bytesInPerSecond``).

*Headroom* is the limit minus the usage (ratio points; and bytes when the dir is visible):
how much may still be written before writes are refused. Unknown (a 0.9.1 server, no
metrics, limits not read) is None, never 0, and judges nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from konsole.model import subjects
from konsole.model.capacity import DirUsage, ServerCapacity, WriteLimits, used_bytes
from konsole.model.forecast import Forecast
from konsole.model.metrics import ServerMetrics
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.table_stats import tables_bucket_rates
from konsole.model.thresholds import HealthThresholds

__all__ = [
    "Headroom",
    "LockOutlook",
    "ServerHeadroom",
    "TableDriver",
    "capacity_measures",
    "capacity_view",
    "headroom_level",
    "least_headroom",
    "lock_eta",
    "lock_outlook",
    "server_headroom",
    "soonest_lock",
    "with_drivers",
]

#: Tables named as growth drivers per server.
MAX_DRIVERS: Final = 5


@dataclass(frozen=True, slots=True)
class Headroom:
    """One disk figure: the server's own (``dir`` None) or one data dir's."""

    server_id: str
    dir: str | None
    used_ratio: float | None
    limit_ratio: float | None
    recover_ratio: float | None
    total_bytes: int | None = None
    free_bytes: int | None = None
    forecast: Forecast | None = None
    #: Why the usage is unknown.
    why: str | None = None

    @property
    def name(self) -> str:
        base = subjects.tablet_server(self.server_id)
        return base if self.dir is None else f"{base} {self.dir}"

    @property
    def used_bytes(self) -> int | None:
        return used_bytes(self.total_bytes, self.free_bytes)

    @property
    def headroom_ratio(self) -> float | None:
        """Ratio points left below the write limit (negative: past it)."""
        if self.used_ratio is None or self.limit_ratio is None:
            return None
        return self.limit_ratio - self.used_ratio

    @property
    def headroom_bytes(self) -> int | None:
        """Bytes that may still be written before the limit (a visible dir only)."""
        used = self.used_bytes
        if used is None or self.total_bytes is None or self.limit_ratio is None:
            return None
        return round(self.limit_ratio * self.total_bytes) - used

    def as_dict(self, now: float) -> dict[str, Any]:
        f = self.forecast
        return {
            "dir": self.dir,
            "used_ratio": self.used_ratio,
            "total_bytes": self.total_bytes,
            "free_bytes": self.free_bytes,
            "used_bytes": self.used_bytes,
            "write_limit_ratio": self.limit_ratio,
            "write_recover_ratio": self.recover_ratio,
            "headroom_ratio": self.headroom_ratio,
            "headroom_bytes": self.headroom_bytes,
            "lock_eta_s": None if f is None else f.eta_from(now),
            "forecast": None if f is None else f.as_dict(),
            "why": self.why,
        }


@dataclass(frozen=True, slots=True)
class TableDriver:
    """A table taking writes on a server: rows per second into its buckets there."""

    table: str
    rows_per_s: float
    #: Buckets of the table with a replica on the server.
    buckets: int


@dataclass(frozen=True, slots=True)
class ServerHeadroom:
    server_id: str
    #: The server's own figure (its ``diskUsageRatio``: its worst file system).
    disk: Headroom
    dirs: tuple[Headroom, ...]
    limits: WriteLimits | None
    limits_why: str | None
    #: The lock as the server reports it (None: unknown, e.g. a 0.9.1 server).
    locked: bool | None
    kv_pressure_max: float | None = None
    kv_pressure_table: str | None = None
    kv_rejections: float | None = None
    #: Bytes it holds on local disk (``physicalStorage_localSize``) and takes in per second.
    local_bytes: int | None = None
    bytes_in_per_s: float | None = None
    drivers: tuple[TableDriver, ...] = ()

    @property
    def subject(self) -> str:
        return subjects.tablet_server(self.server_id)

    @property
    def figures(self) -> tuple[Headroom, ...]:
        return (self.disk, *self.dirs)

    @property
    def tightest(self) -> Headroom | None:
        """The figure with the least headroom left (None: none known)."""
        known = [h for h in self.figures if h.headroom_ratio is not None]
        return min(known, key=lambda h: h.headroom_ratio or 0.0) if known else None

    def as_dict(self, now: float) -> dict[str, Any]:
        tight = self.tightest
        return {
            "server": self.server_id,
            "used_ratio": self.disk.used_ratio,
            "write_locked": self.locked,
            "limits": None if self.limits is None else self.limits.as_dict(),
            "limits_why": self.limits_why,
            "headroom_ratio": None if tight is None else tight.headroom_ratio,
            "disk": self.disk.as_dict(now),
            "dirs": [d.as_dict(now) for d in self.dirs],
            "kv_pressure_max": self.kv_pressure_max,
            "kv_pressure_table": self.kv_pressure_table,
            "kv_rejections": self.kv_rejections,
            "local_bytes": self.local_bytes,
            "bytes_in_per_s": self.bytes_in_per_s,
            "drivers": [
                {"table": d.table, "rows_per_s": d.rows_per_s, "buckets": d.buckets}
                for d in self.drivers
            ],
        }


def _dir_headroom(server_id: str, d: DirUsage, limits: WriteLimits | None) -> Headroom:
    return Headroom(
        server_id,
        d.path,
        d.used_ratio,
        None if limits is None else limits.limit_ratio,
        None if limits is None else limits.recover_ratio,
        d.total_bytes,
        d.free_bytes,
        d.forecast,
        d.why,
    )


def server_headroom(
    server_id: str,
    metrics: ServerMetrics | None,
    facts: ServerCapacity | None,
    drivers: tuple[TableDriver, ...] = (),
) -> ServerHeadroom:
    """One tablet server's headroom from its metrics and its capacity facts."""
    limits = facts.limits if facts is not None else None
    usage = metrics.disk_usage_ratio if metrics is not None else None
    if metrics is None:
        why: str | None = "no metrics from this server"
    elif usage is None:
        why = "the server does not export diskUsageRatio (0.9.1 has no write lock)"
    else:
        why = None
    disk = Headroom(
        server_id,
        None,
        usage,
        None if limits is None else limits.limit_ratio,
        None if limits is None else limits.recover_ratio,
        forecast=None if facts is None else facts.forecast,
        why=why,
    )
    pressure, table = _worst_pressure(metrics)
    return ServerHeadroom(
        server_id,
        disk,
        tuple(_dir_headroom(server_id, d, limits) for d in facts.dirs) if facts else (),
        limits,
        (facts.limits_why if facts is not None else "the capacity collector did not run"),
        None if metrics is None else metrics.disk_write_locked,
        pressure,
        table,
        None if metrics is None else metrics.kv_rejections,
        None if metrics is None else metrics.local_size,
        None if metrics is None else metrics.bytes_in_rate,
        drivers,
    )


def _worst_pressure(metrics: ServerMetrics | None) -> tuple[float | None, str | None]:
    if metrics is None:
        return None, None
    known = [(t.kv_pressure, t.name) for t in metrics.tables if t.kv_pressure is not None]
    if not known:
        return None, None
    value, name = max(known)
    return value, name


def _server_ids(snapshot: ClusterSnapshot) -> list[str]:
    ids: set[str] = set(snapshot.tablet_metrics)
    if snapshot.view is not None:
        ids |= {str(s.node_id) for s in snapshot.view.tablet_servers}
    if snapshot.capacity is not None:
        ids |= set(snapshot.capacity.servers)
    return sorted(ids, key=lambda i: (len(i), i))


def capacity_view(snapshot: ClusterSnapshot) -> tuple[ServerHeadroom, ...]:
    """Every tablet server's headroom, by id (derived once per poll as it is judged:
    :mod:`konsole.model.poll_facts`)."""
    metrics = snapshot.tablet_metrics
    part = snapshot.capacity
    return tuple(
        server_headroom(i, metrics.get(i), part.server(i) if part else None)
        for i in _server_ids(snapshot)
    )


def with_drivers(
    servers: Iterable[ServerHeadroom], snapshot: ClusterSnapshot, previous: ClusterSnapshot | None
) -> tuple[ServerHeadroom, ...]:
    """``servers`` (the headroom of ``snapshot``) with their growth drivers: the tables
    writing the most rows into each, from ``previous``, an earlier good poll (rates need
    two polls). A walk of every bucket: the Capacity screen and ``konsole capacity`` ask for
    it, a poll's judgement does not."""
    drivers = _drivers(snapshot, previous) if previous is not None else {}
    return tuple(replace(s, drivers=drivers.get(s.server_id, ())) for s in servers)


def _drivers(
    snapshot: ClusterSnapshot, previous: ClusterSnapshot
) -> dict[str, tuple[TableDriver, ...]]:
    """server id -> the tables writing the most rows into its replicas."""
    if snapshot.view is None:
        return {}
    per_server: dict[str, dict[str, list[float]]] = {}
    for table, rates in tables_bucket_rates(snapshot, previous):
        for b in table.buckets:
            rate = rates.get((b.partition_id, b.bucket_id))
            if rate is None:
                continue
            for r in b.replica_ids:
                per_server.setdefault(str(r), {}).setdefault(str(table.path), []).append(rate)
    out = {}
    for server, tables in per_server.items():
        ranked = sorted(
            (TableDriver(name, sum(rates), len(rates)) for name, rates in tables.items()),
            key=lambda d: (-d.rows_per_s, d.table),
        )
        out[server] = tuple(d for d in ranked[:MAX_DRIVERS] if d.rows_per_s > 0)
    return out


# =========================================================================== judgement


def headroom_level(server: ServerHeadroom, rules: HealthThresholds) -> tuple[int, Headroom | None]:
    """0 fine, 1 under ``disk_headroom_warn``, 2 under ``disk_headroom_critical``, with the
    tightest figure; 0 while locked (the lock is its own, worse, finding) or unknown."""
    tight = server.tightest
    if server.locked or tight is None or tight.headroom_ratio is None:
        return 0, tight
    room = tight.headroom_ratio
    if room < rules.disk_headroom_critical:
        return 2, tight
    return (1 if room < rules.disk_headroom_warn else 0), tight


@dataclass(frozen=True, slots=True)
class LockOutlook:
    """The soonest confident forecast of a server's write lock."""

    level: int
    figure: Headroom | None
    #: Seconds from the poll until the lock, at the fitted slope; and the interval.
    eta_s: float | None
    soonest_s: float | None = None
    latest_s: float | None = None


def _soonest_forecast(server: ServerHeadroom, now: float) -> tuple[float, Headroom] | None:
    """The confident forecast that reaches a limit first, with its ETA from ``now``; None
    when none does, or while the server reports its lock on or unknown, or its limits are
    unknown (not judged)."""
    if server.locked is not False or server.limits is None:
        return None
    best: tuple[float, Headroom] | None = None
    for figure in server.figures:
        f = figure.forecast
        eta = None if f is None or not f.confident else f.eta_from(now)
        if eta is not None and (best is None or eta < best[0]):
            best = (eta, figure)
    return best


def lock_eta(server: ServerHeadroom, now: float) -> float | None:
    """Seconds until the server's forecast write lock (:func:`_soonest_forecast`); the
    rules' levels do not enter, so serve's series need none."""
    best = _soonest_forecast(server, now)
    return None if best is None else best[0]


def lock_outlook(server: ServerHeadroom, rules: HealthThresholds, now: float) -> LockOutlook:
    """Level 2 when a confident forecast reaches the limit within ``write_lock_critical_s``,
    1 within ``write_lock_warn_s``, else 0; not judged (0, no figure) while the server
    reports its lock on or unknown, or when its limits are unknown."""
    best = _soonest_forecast(server, now)
    if best is None:
        return LockOutlook(0, None, None)
    eta, figure = best
    f = figure.forecast
    assert f is not None
    level = 2 if eta <= rules.write_lock_critical_s else 1 if eta <= rules.write_lock_warn_s else 0
    shift = now - f.at
    soonest = None if f.eta_soonest_s is None else max(0.0, f.eta_soonest_s - shift)
    latest = None if f.eta_latest_s is None else max(0.0, f.eta_latest_s - shift)
    return LockOutlook(level, figure, eta, soonest, latest)


def soonest_lock(servers: Iterable[ServerHeadroom], now: float) -> float | None:
    """Seconds until the first confident forecast lock of any server (None: none)."""
    etas = [eta for s in servers if (eta := lock_eta(s, now)) is not None]
    return min(etas) if etas else None


def least_headroom(servers: Sequence[ServerHeadroom]) -> float | None:
    """The smallest headroom (ratio points) of any server or data dir (None: none known)."""
    known = [t.headroom_ratio for s in servers if (t := s.tightest) is not None]
    values = [v for v in known if v is not None]
    return min(values) if values else None


def capacity_measures(
    snapshot: ClusterSnapshot, servers: Sequence[ServerHeadroom], rules: HealthThresholds
) -> dict[str, tuple[float | None, str | None]]:
    """The check's capacity measures (value, why unknown): the least headroom of any
    server or data dir, the soonest forecast lock, the worst KV backpressure
    (``servers``: the poll's headroom, derived once as it was judged)."""
    labels = ("disk_headroom_min", "write_lock_eta", "kv_pressure_max")
    if not snapshot.ok:
        return {label: (None, "no snapshot") for label in labels}
    room = least_headroom(servers)
    eta = soonest_lock(servers, snapshot.taken_at)
    pressures = [s.kv_pressure_max for s in servers if s.kv_pressure_max is not None]
    if snapshot.capacity is None:
        no_room = "the servers' write limits were not read"
    else:
        no_room = "no server reports its disk usage against a write limit (1.0 line)"
    if room is None:
        no_eta = no_room
    elif eta is None:
        no_eta = "no confident forecast of a lock (needs the recorded trend: a history)"
    else:
        no_eta = None
    return {
        "disk_headroom_min": (room, None if room is not None else no_room),
        "write_lock_eta": (eta, no_eta),
        "kv_pressure_max": (
            (max(pressures), None) if pressures else (None, "no KV backpressure figure (1.0)")
        ),
    }

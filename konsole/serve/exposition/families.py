"""Every family ``konsole serve`` exports, and one poll of one cluster as its samples.

Each family has the label ``cluster`` (the profile's name) first, then ``server``,
``database``, ``table`` where they apply (docs/serve.md lists them all). Every figure is
read from :mod:`konsole.model`: alive servers, offline and under-replicated buckets from
:class:`~konsole.model.placement.Replication`, per-table counts and rows/s from
:func:`~konsole.model.table_stats.table_figures`, the status from the
:class:`~konsole.model.health.Health` serve derived. Unknown is absent, never 0: a failed
poll exports its poll families and nothing of the cluster's state; a server without a
metric has no sample for it.

Nothing is derived here twice: the placement, replication figures and headroom are the
judged poll's own (:attr:`~konsole.model.poll.JudgedPoll.facts`, derived once as the poll
was judged), the ones its events and health were judged on.

Per-table families are bounded: the ``max_tables`` tables with the most buckets (ties by
name) get their own series; the rest are summed into one series with
``database="_other", table="_other"`` so that a cluster of 10,000 tables cannot explode a
scrape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from fluss_proto.model import HealthStatus
from konsole.model.causes import down_servers
from konsole.model.headroom import ServerHeadroom, lock_eta
from konsole.model.health import Health
from konsole.model.placement import Placement, Replication
from konsole.model.poll import JudgedPoll
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole
from konsole.model.table_stats import TableFigures, table_figures
from konsole.model.totals import cluster_totals

__all__ = [
    "DEFAULT_MAX_TABLES",
    "FAMILIES",
    "OTHER",
    "STATUS_CODE",
    "Family",
    "Samples",
    "Seen",
    "cluster_series",
]

#: Tables with their own per-table series; the rest roll up into ``_other``.
DEFAULT_MAX_TABLES: Final = 25
#: The database and table label of the rolled-up series.
OTHER: Final = "_other"
#: ``konsole_health_status`` values: the model's order (GREEN < UNKNOWN < YELLOW < RED).
STATUS_CODE: Final[Mapping[HealthStatus, int]] = {
    HealthStatus.GREEN: 0,
    HealthStatus.UNKNOWN: 1,
    HealthStatus.YELLOW: 2,
    HealthStatus.RED: 3,
}

Kind = Literal["gauge", "counter"]
#: family name -> [(label values after ``cluster``, value)]
Samples = dict[str, list[tuple[tuple[str, ...], float]]]


@dataclass(slots=True)
class Seen:
    """What the series of one cluster remember across polls (since serve started)."""

    #: Health rules that had a finding.
    rules: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    kind: Kind
    help: str
    #: Labels after ``cluster``.
    labels: tuple[str, ...] = ()


_T = ("database", "table")
#: Every per-poll family, in exposition order (the counters of events and polls and the poll
#: age are kept by the sink: :mod:`konsole.serve.exposition.sink`).
FAMILIES: Final[tuple[Family, ...]] = (
    Family("konsole_poll_success", "gauge", "1 if the last poll of the cluster succeeded."),
    Family("konsole_poll_latency_seconds", "gauge", "Duration of the last poll."),
    Family("konsole_poll_timestamp_seconds", "gauge", "When the last poll started (epoch s)."),
    Family(
        "konsole_poll_consecutive_failures", "gauge", "Failed polls in a row (0 after a good one)."
    ),
    Family(
        "konsole_health_status",
        "gauge",
        "Cluster health: 0 GREEN, 1 UNKNOWN, 2 YELLOW, 3 RED.",
    ),
    Family(
        "konsole_health_rule_status",
        "gauge",
        "Worst status of one health rule's findings (0 GREEN ... 3 RED; 0 once it cleared).",
        ("rule",),
    ),
    Family("konsole_health_findings", "gauge", "Findings of one health rule.", ("rule",)),
    Family(
        "konsole_servers",
        "gauge",
        "Servers by role (tablet, coordinator) and state (tablet: alive, offline as in "
        "konsole_tablet_server_up; coordinator: active, standby, unreachable).",
        ("role", "state"),
    ),
    Family(
        "konsole_tablet_server_up",
        "gauge",
        "1 for a tablet server alive in metadata and answering; 0 for one judged down (listed "
        "but not answering, or known and gone from metadata: the findings serve's "
        "FlussTabletServerDown alert reads), until it is back or retired.",
        ("server",),
    ),
    Family(
        "konsole_coordinator_up",
        "gauge",
        "Each probed coordinator address: 1 if it answered (active or standby).",
        ("server", "state"),
    ),
    Family("konsole_tables", "gauge", "Tables in the cluster."),
    Family("konsole_buckets", "gauge", "Buckets in the cluster (all tables and partitions)."),
    Family("konsole_offline_buckets", "gauge", "Buckets without an active leader."),
    Family("konsole_under_replicated_buckets", "gauge", "Under-replicated buckets."),
    Family("konsole_out_of_sync_replicas", "gauge", "Replicas not in sync."),
    Family("konsole_table_buckets", "gauge", "Buckets of a table.", _T),
    Family("konsole_table_offline_buckets", "gauge", "Offline buckets of a table.", _T),
    Family(
        "konsole_table_under_replicated_buckets",
        "gauge",
        "Under-replicated buckets of a table.",
        _T,
    ),
    Family(
        "konsole_table_latest_offset",
        "gauge",
        "Sum of the latest offsets (high watermarks) of a table's buckets.",
        _T,
    ),
    Family(
        "konsole_table_rows_per_second",
        "gauge",
        "Rows per second appended to a table, between the last two good polls.",
        _T,
    ),
    Family(
        "konsole_disk_usage_ratio",
        "gauge",
        "Data disk usage of a tablet server (0..1).",
        ("server",),
    ),
    Family(
        "konsole_disk_write_locked",
        "gauge",
        "1 if a tablet server rejects writes because its disk is over the write limit.",
        ("server",),
    ),
    Family(
        "konsole_kv_backpressure",
        "gauge",
        "Worst KV backpressure (0..1) over the tables of a tablet server (1.0 line).",
        ("server",),
    ),
    Family(
        "konsole_kv_rejections",
        "gauge",
        "PutKv requests a tablet server rejected by KV backpressure since it started (1.0 line).",
        ("server",),
    ),
    Family(
        "konsole_disk_write_limit_ratio",
        "gauge",
        "The usage ratio at which a tablet server locks its writes, as its own config says "
        "(1.0 line; 1 = no lock).",
        ("server",),
    ),
    Family(
        "konsole_disk_headroom_ratio",
        "gauge",
        "Room left below a tablet server's write limit (ratio points): the least of the "
        "server's own figure and its data dirs seen by konsole.",
        ("server",),
    ),
    Family(
        "konsole_write_lock_eta_seconds",
        "gauge",
        "Seconds until a tablet server's write lock by the soonest confident forecast of its "
        "usage (robust fit over the forecast window); absent without one.",
        ("server",),
    ),
    Family(
        "konsole_data_dir_usage_ratio",
        "gauge",
        "Usage of a tablet server's data dir's file system, where konsole can see it.",
        ("server", "dir"),
    ),
    Family(
        "konsole_data_dir_free_bytes",
        "gauge",
        "Bytes free for the server on a data dir's file system, where konsole can see it.",
        ("server", "dir"),
    ),
    # the cluster's throughput and each server's load (konsole.model.totals)
    Family(
        "konsole_messages_in_per_second",
        "gauge",
        "Messages written to the cluster per second: the tablet servers' own rates summed.",
    ),
    Family(
        "konsole_bytes_in_per_second",
        "gauge",
        "Bytes written to the cluster per second: the tablet servers' own rates summed.",
    ),
    Family(
        "konsole_bytes_out_per_second",
        "gauge",
        "Bytes read from the cluster per second: the tablet servers' own rates summed.",
    ),
    Family(
        "konsole_server_bytes_in_per_second",
        "gauge",
        "Bytes written to a tablet server per second, as it reports.",
        ("server",),
    ),
    Family(
        "konsole_server_bytes_out_per_second",
        "gauge",
        "Bytes read from a tablet server per second, as it reports.",
        ("server",),
    ),
    Family(
        "konsole_server_cpu_load",
        "gauge",
        "CPU load of a server's process, 0..1 of its host's cores (tablet servers by id, "
        "coordinators by address).",
        ("server",),
    ),
    Family(
        "konsole_server_heap_used_ratio",
        "gauge",
        "JVM heap used / max of a server (tablet servers by id, coordinators by address).",
        ("server",),
    ),
)


def cluster_series(
    judged: JudgedPoll,
    *,
    max_tables: int = DEFAULT_MAX_TABLES,
    seen: Seen | None = None,
) -> Samples:
    """The samples of one judged poll. Its ``previous_ok`` (the last good poll before it)
    gives the rates; ``seen`` (kept by the caller across polls, updated here) keeps a rule
    that fired and cleared at 0 instead of letting its series vanish. A tablet server is 0
    while the health of this poll judges it down (:func:`~konsole.model.causes.down_servers`,
    the judgement of serve's own alert), 1 when alive in metadata otherwise."""
    snapshot, health, previous_ok = judged.snapshot, judged.health, judged.previous_ok
    seen = seen if seen is not None else Seen()
    out: Samples = {f.name: [] for f in FAMILIES}
    out["konsole_poll_success"].append(((), 1.0 if snapshot.ok else 0.0))
    out["konsole_poll_latency_seconds"].append(((), snapshot.latency_s))
    out["konsole_poll_timestamp_seconds"].append(((), snapshot.taken_at))
    out["konsole_poll_consecutive_failures"].append(((), float(snapshot.consecutive_failures)))
    _health(out, health, seen.rules)
    _coordinators(out, snapshot)
    own = judged.own_facts
    if snapshot.view is None or own is None:
        return out  # a failed poll: the cluster's state is unknown, not zero
    down = set(down_servers(health.findings))
    _placement(out, own.replication, len(snapshot.view.tables), down)
    _tables(out, snapshot, previous_ok, max_tables, own.placement)
    _server_metrics(out, snapshot)
    _capacity(out, snapshot, own.capacity)
    _throughput(out, snapshot)
    return out


def _health(out: Samples, health: Health, rules_seen: set[str]) -> None:
    out["konsole_health_status"].append(((), float(STATUS_CODE[health.status])))
    worst: dict[str, int] = {}
    counts: dict[str, int] = {}
    for f in health.findings:
        worst[f.rule] = max(worst.get(f.rule, 0), STATUS_CODE[f.status])
        counts[f.rule] = counts.get(f.rule, 0) + 1
    rules_seen.update(worst)
    for rule in sorted(rules_seen):
        out["konsole_health_rule_status"].append(((rule,), float(worst.get(rule, 0))))
        out["konsole_health_findings"].append(((rule,), float(counts.get(rule, 0))))


def _coordinators(out: Samples, snapshot: ClusterSnapshot) -> None:
    states = {role: 0 for role in CoordinatorRole}
    for status in snapshot.coordinators:
        states[status.role] += 1
        up = 0.0 if status.role is CoordinatorRole.UNREACHABLE else 1.0
        out["konsole_coordinator_up"].append(((status.address, status.role.value), up))
    if not snapshot.coordinators:
        # Not probed: metadata's coordinator is the active one (the model's reading).
        active = snapshot.active_coordinator
        if active is None:
            return
        states[CoordinatorRole.ACTIVE] = 1
        out["konsole_coordinator_up"].append(((active, CoordinatorRole.ACTIVE.value), 1.0))
    for role, n in states.items():
        out["konsole_servers"].append((("coordinator", role.value), float(n)))


def _placement(out: Samples, rep: Replication, tables: int, down: set[str]) -> None:
    where = rep.placement
    up = {str(node) for node in where.alive} - down
    out["konsole_servers"].append((("tablet", "alive"), float(len(up))))
    out["konsole_servers"].append((("tablet", "offline"), float(len(down))))
    for node in sorted(up | down, key=_server_order):
        out["konsole_tablet_server_up"].append(((node,), 0.0 if node in down else 1.0))
    out["konsole_tables"].append(((), float(tables)))
    out["konsole_buckets"].append(((), float(where.buckets)))
    out["konsole_offline_buckets"].append(((), float(rep.offline_buckets)))
    out["konsole_under_replicated_buckets"].append(((), float(rep.under_replicated_buckets)))
    out["konsole_out_of_sync_replicas"].append(((), float(rep.out_of_sync_replicas)))


def _server_order(server: str) -> tuple[int, str]:
    return (int(server), "") if server.isdigit() else (1 << 62, server)


def _tables(
    out: Samples,
    snapshot: ClusterSnapshot,
    previous: ClusterSnapshot | None,
    cap: int,
    placement: Placement,
) -> None:
    assert snapshot.view is not None
    latest = {
        str(t.path): _latest_sum(b.latest_offset for b in t.buckets) for t in snapshot.view.tables
    }
    figures = table_figures(snapshot, previous, placement)
    figures.sort(key=lambda f: (-f.buckets, f.database, f.table))
    for f in figures[: max(0, cap)]:
        _table(out, (f.database, f.table), [f], [latest.get(f.path)])
    rest = figures[max(0, cap) :]
    if rest:
        _table(out, (OTHER, OTHER), rest, [latest.get(f.path) for f in rest])


def _table(
    out: Samples, labels: tuple[str, str], figures: list[TableFigures], latest: list[int | None]
) -> None:
    out["konsole_table_buckets"].append((labels, float(sum(f.buckets for f in figures))))
    out["konsole_table_offline_buckets"].append((labels, float(sum(f.offline for f in figures))))
    out["konsole_table_under_replicated_buckets"].append(
        (labels, float(sum(f.under_replicated for f in figures)))
    )
    offsets = [v for v in latest if v is not None]
    if offsets:
        out["konsole_table_latest_offset"].append((labels, float(sum(offsets))))
    rates = [f.rows_per_s for f in figures if f.rows_per_s is not None]
    if rates:
        out["konsole_table_rows_per_second"].append((labels, float(sum(rates))))


def _latest_sum(offsets: Iterable[int | None]) -> int | None:
    known = [o for o in offsets if o is not None]
    return sum(known) if known else None


def _server_metrics(out: Samples, snapshot: ClusterSnapshot) -> None:
    for server, m in sorted(snapshot.tablet_metrics.items()):
        labels = (server,)
        if m.disk_usage_ratio is not None:
            out["konsole_disk_usage_ratio"].append((labels, m.disk_usage_ratio))
        if m.disk_write_locked is not None:
            out["konsole_disk_write_locked"].append((labels, 1.0 if m.disk_write_locked else 0.0))
        pressures = [t.kv_pressure for t in m.tables if t.kv_pressure is not None]
        if pressures:
            out["konsole_kv_backpressure"].append((labels, max(pressures)))
        if m.kv_rejections is not None:
            out["konsole_kv_rejections"].append((labels, m.kv_rejections))


def _throughput(out: Samples, snapshot: ClusterSnapshot) -> None:
    """The cluster's totals and each server's load; a figure nobody reports is absent."""
    totals = cluster_totals(snapshot.metrics)
    for family, value in (
        ("konsole_messages_in_per_second", totals.messages_in_rate),
        ("konsole_bytes_in_per_second", totals.bytes_in_rate),
        ("konsole_bytes_out_per_second", totals.bytes_out_rate),
    ):
        if value is not None:
            out[family].append(((), value))
    for server, m in sorted(snapshot.tablet_metrics.items()):
        if m.bytes_in_rate is not None:
            out["konsole_server_bytes_in_per_second"].append(((server,), m.bytes_in_rate))
        if m.bytes_out_rate is not None:
            out["konsole_server_bytes_out_per_second"].append(((server,), m.bytes_out_rate))
    for m in snapshot.metrics:
        name = m.server_id if m.role == "tablet" else m.host or m.url
        if m.role == "coordinator":
            name = _coordinator_address(snapshot, m.host) or name
        if name is None:
            continue
        if m.cpu_load is not None:
            out["konsole_server_cpu_load"].append(((name,), m.cpu_load))
        if m.heap_ratio is not None:
            out["konsole_server_heap_used_ratio"].append(((name,), m.heap_ratio))


def _coordinator_address(snapshot: ClusterSnapshot, host: str | None) -> str | None:
    """A coordinator's address (as ``konsole_coordinator_up`` names it) from its metrics'
    host label, when exactly one probed coordinator is on that host."""
    if host is None:
        return None
    found = [c.address for c in snapshot.coordinators if c.address.rpartition(":")[0] == host]
    return found[0] if len(found) == 1 else None


def _capacity(out: Samples, snapshot: ClusterSnapshot, servers: Iterable[ServerHeadroom]) -> None:
    """Headroom, limits, the forecast lock and the visible data dirs (konsole.model.headroom,
    derived once as the poll was judged); the forecast's ETA is ``lock_eta``'s, the one
    the health rules' ``lock_outlook`` judges, so the series and the alert agree."""
    if snapshot.capacity is None:
        return
    for s in servers:
        labels = (s.server_id,)
        if s.limits is not None:
            out["konsole_disk_write_limit_ratio"].append((labels, s.limits.limit_ratio))
        tight = s.tightest
        if tight is not None and tight.headroom_ratio is not None:
            out["konsole_disk_headroom_ratio"].append((labels, tight.headroom_ratio))
        eta = lock_eta(s, snapshot.taken_at)
        if eta is not None:
            out["konsole_write_lock_eta_seconds"].append((labels, eta))
        for d in s.dirs:
            if d.used_ratio is not None:
                out["konsole_data_dir_usage_ratio"].append(
                    ((s.server_id, d.dir or ""), d.used_ratio)
                )
            if d.free_bytes is not None:
                out["konsole_data_dir_free_bytes"].append(
                    ((s.server_id, d.dir or ""), float(d.free_bytes))
                )

"""Cluster health from one snapshot: GREEN, YELLOW, RED or UNKNOWN, with reasons.

Pure: :func:`evaluate` reads a :class:`~konsole.model.snapshot.ClusterSnapshot` and the
thresholds (a profile's ``[profiles.X.health]``) and returns a :class:`Health` whose
findings each name their subject. The status is the worst finding's, ranked
GREEN < UNKNOWN < YELLOW < RED; with no finding it is GREEN, but data that could not be
read is a finding of its own, so missing data is never GREEN.

Fluss 1.0's GetClusterHealth (RED: some bucket leader inactive; YELLOW: fewer in-sync
replicas than replicas) is used when the snapshot has it. The same meaning is derived on
0.9.1 from placement (:mod:`konsole.model.placement`: offline buckets, replicas on servers
that are not alive) and the tablet servers' ``underReplicated`` / ``underMinIsr`` metrics
(the client protocol carries no per-bucket ISR). See docs/events-and-health.md for every
rule.

A new table's buckets wait a moment for their leaders (about a second; the 1.0 server's
GetClusterHealth says RED meanwhile too): within ``new_table_grace`` seconds of the table's
creation they are a GREEN ``new_table`` note, not RED, and so is a GetClusterHealth RED that
those buckets explain.

A GREEN finding is information and never raises the status: ``metrics_not_configured``
says that the metric-based rules (:data:`METRIC_RULES`) were not judged because no metrics
endpoint was configured or found (the snapshot's ``metrics_origin``). An endpoint that was
configured or found and does not answer stays ``metrics_unknown`` (UNKNOWN).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Set
from dataclasses import dataclass
from typing import Any, Final

from fluss_proto.errors import ServerSilentError
from fluss_proto.model import ClusterHealth, ClusterView, HealthStatus
from konsole.model import subjects
from konsole.model.forecast import Forecast
from konsole.model.headroom import ServerHeadroom, headroom_level, lock_outlook
from konsole.model.known_servers import GoneServer, KnownBy
from konsole.model.metrics import MetricsOrigin, ServerMetrics
from konsole.model.placement import Placement
from konsole.model.poll_facts import PollFacts
from konsole.model.roles import unanswered
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole
from konsole.model.storage import StorageTrouble, TableSummary
from konsole.model.thresholds import HealthThresholds
from konsole.model.timefmt import age_text, time_of_day_text

__all__ = [
    "METRIC_RULES",
    "NOTE_RULES",
    "RULES",
    "Finding",
    "Health",
    "HealthRules",
    "HealthStatus",
    "HealthThresholds",
    "capacity_findings",
    "evaluate",
    "worst",
]


#: The thresholds are the rules' parameters.
HealthRules = HealthThresholds

_RANK: Final = {
    HealthStatus.GREEN: 0,
    HealthStatus.UNKNOWN: 1,
    HealthStatus.YELLOW: 2,
    HealthStatus.RED: 3,
}
#: Most per-table findings of one rule; the rest are summed up in one more finding.
MAX_TABLE_FINDINGS: Final = 10
#: Every rule, in the order :func:`evaluate` judges them (docs/events-and-health.md).
RULES: Final = (
    "no_data",
    "unreachable",
    "coordinator",
    "standby",
    "server_unreachable",
    "server_gone",
    "new_table",
    "leaders",
    "replicas_offline",
    "bootstrap",
    "cluster_health",
    "disk_write_locked",
    "disk_usage",
    "under_replicated",
    "under_min_isr",
    "kv_backpressure",
    "heap",
    "metrics_not_configured",
    "metrics_unknown",
    "kv_rejections",
    "read_errors",
    "tiering_stalled",
    "kv_snapshot_stale",
    "lake_lag",
    "disk_headroom",
    "write_lock_forecast",
)
#: The rules whose findings are GREEN information only (they never raise the status, so
#: they never alert).
NOTE_RULES: Final = frozenset({"metrics_not_configured", "new_table"})
#: The rules that read the servers' metrics: not judged when no endpoint is configured.
METRIC_RULES: Final = (
    "disk_write_locked",
    "disk_usage",
    "under_replicated",
    "under_min_isr",
    "kv_backpressure",
    "kv_rejections",
    "heap",
    "disk_headroom",
    "write_lock_forecast",
)


@dataclass(frozen=True, slots=True)
class Finding:
    status: HealthStatus
    #: Which rule found it (see the module docs).
    rule: str
    #: "cluster", "tablet-server 2", "coordinator 127.0.0.1:9123", "table db.t"...
    subject: str
    reason: str

    def __str__(self) -> str:
        return f"{self.subject}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Health:
    status: HealthStatus
    findings: tuple[Finding, ...]
    #: "server" when GetClusterHealth answered, "derived" otherwise, "none" without data.
    source: str
    taken_at: float | None = None

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(str(f) for f in self.findings)

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status.name,
            "source": self.source,
            "time": self.taken_at,
            "findings": [
                {
                    "status": f.status.name,
                    "rule": f.rule,
                    "subject": f.subject,
                    "reason": f.reason,
                }
                for f in self.findings
            ],
        }


def worst(statuses: Iterable[HealthStatus]) -> HealthStatus:
    return max(statuses, key=_RANK.__getitem__, default=HealthStatus.GREEN)


def evaluate(
    snapshot: ClusterSnapshot | None,
    rules: HealthRules | None = None,
    *,
    previous: ClusterSnapshot | None = None,
    facts: PollFacts | None,
) -> Health:
    """The health of ``snapshot`` under ``rules`` (default thresholds when None).

    ``previous``, an earlier look at the same cluster, lets the rules that need two
    observations (KV backpressure rejections rising) see a change; without it they are quiet.
    ``facts``: what the judge derived from ``snapshot`` (None only for a failed poll).
    """
    rules = rules or HealthRules()
    if snapshot is None:
        finding = Finding(HealthStatus.UNKNOWN, "no_data", "cluster", "no poll has finished yet")
        return Health(HealthStatus.UNKNOWN, (finding,), "none")
    findings: list[Finding] = []
    if not snapshot.ok or snapshot.view is None:
        failures = snapshot.consecutive_failures
        findings.append(
            Finding(
                HealthStatus.RED,
                "unreachable",
                "cluster",
                f"unreachable ({failures} failed poll{'s' if failures != 1 else ''}): "
                f"{snapshot.error}",
            )
        )
        return Health(HealthStatus.RED, tuple(findings), "derived", snapshot.taken_at)
    view = snapshot.view
    if facts is None:
        raise ValueError("a good poll is judged with its facts (konsole.model.poll_facts)")
    placement = facts.placement
    young = _young_tables(snapshot, rules.new_table_grace)
    findings += _coordinators(snapshot)
    findings += _servers(view)
    gone = snapshot.known.gone(view, snapshot.taken_at)
    findings += _gone(snapshot, gone, placement)
    findings += _leaders(view, placement, young)
    findings += _replicas_offline(placement)
    # After the servers' own findings: the check's headline names a server first.
    findings += _bootstrap(snapshot, placement, {g.node_id for g in gone})
    findings += _server_health(snapshot, placement, young)
    findings += _metrics(snapshot, rules)
    findings += _kv_rejections(snapshot, previous)
    findings += _read_errors(snapshot)
    findings += _storage(facts.storage)
    findings += capacity_findings(snapshot, facts.capacity, rules)
    status = worst(f.status for f in findings)
    source = "server" if snapshot.health is not None else "derived"
    return Health(status, tuple(findings), source, snapshot.taken_at)


# =========================================================================== rules


def _coordinators(snapshot: ClusterSnapshot) -> list[Finding]:
    out: list[Finding] = []
    active = snapshot.active_coordinator
    if active is None:
        out.append(Finding(HealthStatus.RED, "coordinator", "cluster", "no active coordinator"))
    for status in snapshot.coordinators:
        if status.role is CoordinatorRole.UNREACHABLE and active is not None:
            out.append(
                Finding(
                    HealthStatus.YELLOW,
                    "standby",
                    subjects.coordinator(status.address),
                    f"unreachable ({status.error or 'no answer'})",
                )
            )
    return out


def _servers(view: ClusterView) -> list[Finding]:
    """Tablet servers in metadata that did not answer this poll: a hung one (no answer
    within its deadline) is named by the deadline, the poll kept what the others said."""
    return [
        Finding(
            HealthStatus.YELLOW,
            "server_unreachable",
            subjects.tablet_server(s.node_id),
            f"no answer within {s.error.seconds:g} s"
            if isinstance(s.error, ServerSilentError)
            else f"listed in metadata but did not answer ({s.error})",
        )
        for s in view.tablet_servers
        if s.error is not None
    ]


def _gone(
    snapshot: ClusterSnapshot, gone: Iterable[GoneServer], placement: Placement
) -> list[Finding]:
    """Known tablet servers that metadata no longer lists (:mod:`konsole.model.known_servers`):
    YELLOW, RED when replicas are placed on it (its buckets lost a replica or a leader).
    The reason says how the server is known and since when; a bootstrap address of it that
    does not answer is named too (this finding is the address's warning)."""
    silent = {u.node_id: u for u in unanswered(snapshot) if u.node_id is not None}
    out = []
    for g in gone:
        held = len(placement.replicas_offline.get(g.node_id, ()))
        reason = "not in metadata"
        if g.alive_at is not None:
            how = "in the history: last alive" if g.by is KnownBy.HISTORY else "seen alive"
            ago = age_text(max(0.0, snapshot.taken_at - g.alive_at))
            reason += f"; {how} at {time_of_day_text(g.alive_at)} UTC ({ago} ago)"
            if g.address:
                reason += f" as {g.address}"
        if g.expected_by is not None:
            reason += f"; expected by profile {g.expected_by}"
        if held:
            reason += f"; {held} replica{'s' if held != 1 else ''} placed on it"
        u = silent.get(g.node_id)
        if u is not None:
            reason += f"; its address {u.address} (in the bootstrap list) does not answer"
        out.append(
            Finding(
                HealthStatus.RED if held else HealthStatus.YELLOW,
                "server_gone",
                subjects.tablet_server(g.node_id),
                reason,
            )
        )
    return out


def _bootstrap(snapshot: ClusterSnapshot, placement: Placement, gone: Set[int]) -> list[Finding]:
    """Bootstrap addresses that did not answer, while others did (else the poll failed).

    Each is a warning: a client bootstrapping from it loses a fallback. One the cluster
    last named tablet server N, which metadata no longer lists, is that server gone
    (``server_gone`` names the address when N is known; else ``server_unreachable``, unless
    ``replicas_offline`` names it already). One whose role nobody said is a ``bootstrap``
    warning naming the address: a bootstrap list mixes coordinators and tablet servers, in
    any order, so its place in the list says nothing of what it is."""
    out = []
    for u in unanswered(snapshot):
        if u.node_id is None:
            out.append(
                Finding(
                    HealthStatus.YELLOW,
                    "bootstrap",
                    u.subject,
                    f"in the bootstrap list but does not answer ({u.error}); the cluster has "
                    "not said what it is",
                )
            )
        elif (
            u.node_id not in placement.alive
            and u.node_id not in placement.replicas_offline
            and u.node_id not in gone
        ):
            out.append(
                Finding(
                    HealthStatus.YELLOW,
                    "server_unreachable",
                    u.subject,
                    f"not in metadata, and its address {u.address} (in the bootstrap list) "
                    f"does not answer ({u.error})",
                )
            )
    return out


def _table_names(view: ClusterView) -> dict[int, str]:
    return {t.table_id: str(t.path) for t in view.tables if t.table_id is not None}


def _young_tables(snapshot: ClusterSnapshot, grace: float) -> dict[int, float]:
    """Tables created less than ``grace`` seconds before the poll: table id -> age (s).

    Their buckets get leaders a moment after the creation is acknowledged (the 1.0
    server's GetClusterHealth reports RED meanwhile too), so leaderless buckets of such a
    table are a ``new_table`` note, not RED. The age reads the server's creation time
    against the poll's clock; a table "created in the future" by more than the grace
    (clocks apart) is not young."""
    view = snapshot.view
    if view is None or grace <= 0:
        return {}
    out = {}
    for t in view.tables:
        if t.table_id is None or t.info is None:
            continue
        age = snapshot.taken_at - t.info.created_ms / 1000
        if -grace < age < grace:
            out[t.table_id] = max(0.0, age)
    return out


def _leaders(view: ClusterView, placement: Placement, young: Mapping[int, float]) -> list[Finding]:
    names = _table_names(view)
    settling: Counter[int] = Counter(b.table_id for b in placement.offline if b.table_id in young)
    notes = [
        Finding(
            HealthStatus.GREEN,
            "new_table",
            f"table {names.get(table_id, f'table-{table_id}')}",
            f"{n} bucket{'s' if n != 1 else ''} awaiting a leader, created "
            f"{young[table_id]:.0f}s ago (within the new-table grace)",
        )
        for table_id, n in sorted(settling.items())
    ]
    leaderless: Counter[str] = Counter(
        names.get(bucket.table_id, f"table-{bucket.table_id}")
        for bucket in placement.offline
        if bucket.table_id not in young
    )
    out = notes + [
        Finding(
            HealthStatus.RED,
            "leaders",
            f"table {name}",
            f"{n} bucket{'s' if n != 1 else ''} without an active leader",
        )
        for name, n in sorted(leaderless.items())
    ]
    red = out[len(notes) :]
    if len(red) > MAX_TABLE_FINDINGS:
        rest = red[MAX_TABLE_FINDINGS:]
        total = sum(leaderless[f.subject.removeprefix("table ")] for f in rest)
        out = notes + red[:MAX_TABLE_FINDINGS]
        out.append(
            Finding(
                HealthStatus.RED,
                "leaders",
                "cluster",
                f"{total} more buckets in {len(rest)} more tables without an active leader",
            )
        )
    return out


def _replicas_offline(placement: Placement) -> list[Finding]:
    out = []
    for server, buckets in placement.replicas_offline.items():  # sorted by server id
        n = len(buckets)
        out.append(
            Finding(
                HealthStatus.YELLOW,
                "replicas_offline",
                subjects.tablet_server(server),
                f"{n} replica{'s' if n != 1 else ''} placed on this server, which is not alive",
            )
        )
    return out


def _server_health(
    snapshot: ClusterSnapshot, placement: Placement, young: Mapping[int, float]
) -> list[Finding]:
    health = snapshot.health
    if health is None:
        return []
    settling = snapshot.view is not None and _only_new_tables_settle(
        health, snapshot.view, placement, young
    )
    if health.status is HealthStatus.RED and settling:
        # The server counts a new table's leaders being elected as inactive: no RED for it.
        return []
    if health.status is HealthStatus.RED:
        reason = (
            f"{health.active_leader_replicas} of {health.num_leader_replicas} bucket leaders "
            "active (GetClusterHealth)"
        )
    elif health.status is HealthStatus.YELLOW:
        reason = (
            f"{health.in_sync_replicas} of {health.num_replicas} replicas in sync "
            "(GetClusterHealth)"
        )
    elif health.status is HealthStatus.UNKNOWN:
        reason = "the coordinator reports UNKNOWN (GetClusterHealth)"
    else:
        return []
    return [Finding(health.status, "cluster_health", "cluster", reason)]


def _only_new_tables_settle(
    health: ClusterHealth, view: ClusterView, placement: Placement, young: Mapping[int, float]
) -> bool:
    """Whether GetClusterHealth's inactive leaders can all be young tables' buckets: every
    leaderless bucket the view shows is in a young table, and no more leaders are inactive
    than the young tables have buckets (the server may count a bucket the view missed)."""
    if not young or any(b.table_id not in young for b in placement.offline):
        return False
    inactive = health.num_leader_replicas - health.active_leader_replicas
    return inactive <= _young_buckets(view, young)


def _young_buckets(view: ClusterView, young: Mapping[int, float]) -> int:
    """Buckets the young tables have or are about to have (metadata may list none yet)."""
    total = 0
    for t in view.tables:
        if t.table_id in young:
            planned = t.info.bucket_count * max(1, len(t.partitions)) if t.info else 0
            total += max(len(t.buckets), planned)
    return total


def _metrics(snapshot: ClusterSnapshot, rules: HealthRules) -> list[Finding]:
    out: list[Finding] = []
    for m in snapshot.metrics:
        out += _server_findings(m, rules)
    if snapshot.metrics_origin is MetricsOrigin.NONE:
        return [*out, not_configured()]
    return out + _metrics_unknown(snapshot, rules)


def not_configured() -> Finding:
    """The information that the metric-based rules were not judged (GREEN: no status)."""
    return Finding(
        HealthStatus.GREEN,
        "metrics_not_configured",
        "cluster",
        f"metrics not configured: {', '.join(METRIC_RULES)} not judged "
        "(give the servers' Prometheus port or URLs)",
    )


def _disk_findings(m: ServerMetrics, rules: HealthRules) -> list[Finding]:
    if m.disk_write_locked:
        ratio = f" (disk usage {m.disk_usage_ratio:.0%})" if m.disk_usage_ratio else ""
        return [
            Finding(
                HealthStatus.RED,
                "disk_write_locked",
                m.subject,
                f"writes rejected: data disk write lock engaged{ratio}",
            )
        ]
    if m.disk_usage_ratio is not None and m.disk_usage_ratio >= rules.disk_usage_warn:
        critical = m.disk_usage_ratio >= rules.disk_usage_critical
        limit = rules.disk_usage_critical if critical else rules.disk_usage_warn
        return [
            Finding(
                HealthStatus.RED if critical else HealthStatus.YELLOW,
                "disk_usage",
                m.subject,
                f"data disk {m.disk_usage_ratio:.0%} used (threshold {limit:.0%})",
            )
        ]
    return []


def _server_findings(m: ServerMetrics, rules: HealthRules) -> list[Finding]:
    """What one server's metrics say: disk, replication, KV backpressure, heap."""
    subject = m.subject
    out = _disk_findings(m, rules)
    if m.under_replicated:
        out.append(
            Finding(
                HealthStatus.YELLOW,
                "under_replicated",
                subject,
                f"{m.under_replicated} under-replicated bucket(s) it leads",
            )
        )
    if m.under_min_isr:
        out.append(
            Finding(
                HealthStatus.YELLOW,
                "under_min_isr",
                subject,
                f"{m.under_min_isr} bucket(s) under min ISR: acks=all writes fail",
            )
        )
    for table in m.tables:
        if table.kv_pressure is not None and table.kv_pressure >= rules.kv_pressure_warn:
            out.append(
                Finding(
                    HealthStatus.YELLOW,
                    "kv_backpressure",
                    f"table {table.name}",
                    f"KV backpressure {table.kv_pressure:.2f} on {subject}",
                )
            )
    heap = m.heap_ratio
    if heap is not None and heap >= rules.heap_usage_warn:
        out.append(Finding(HealthStatus.YELLOW, "heap", subject, f"JVM heap {heap:.0%} used"))
    return out


def _metrics_unknown(snapshot: ClusterSnapshot, rules: HealthRules) -> list[Finding]:
    """Endpoints that failed (first: the check's summary names them), and tablet servers
    whose metrics are missing."""
    out = [
        Finding(HealthStatus.UNKNOWN, "metrics_unknown", e.subject, f"{e.kind}: {e.message}")
        for e in snapshot.metrics_errors
        if not e.server_id
    ]
    by_id = snapshot.tablet_metrics
    if rules.require_metrics and snapshot.view is not None:
        errors = {e.server_id: e for e in snapshot.metrics_errors if e.server_id}
        for server in snapshot.view.tablet_servers:
            key = str(server.node_id)
            if key in by_id:
                continue
            error = errors.get(key)
            why = f"{error.kind}: {error.message}" if error else "no metrics endpoint answered"
            out.append(
                Finding(
                    HealthStatus.UNKNOWN,
                    "metrics_unknown",
                    subjects.tablet_server(server.node_id),
                    f"metrics unknown ({why})",
                )
            )
    return out


def _kv_rejections(snapshot: ClusterSnapshot, previous: ClusterSnapshot | None) -> list[Finding]:
    """Tables whose KV backpressure rejection count rose since ``previous`` (a running count
    since the server started, so one look alone cannot tell old rejections from new)."""
    if previous is None:
        return []
    before = {
        (m.server_id, t.name): t.kv_rejections
        for m in previous.metrics
        if m.role == "tablet"
        for t in m.tables
        if t.kv_rejections is not None
    }
    rising: dict[str, dict[str, float]] = {}
    for m in snapshot.metrics:
        if m.role != "tablet":
            continue
        for t in m.tables:
            old = before.get((m.server_id, t.name))
            if t.kv_rejections is not None and old is not None and t.kv_rejections > old:
                rising.setdefault(t.name, {})[m.subject] = t.kv_rejections - old
    span = snapshot.taken_at - previous.taken_at
    within = f" within {span:.1f}s" if span > 0 else ""
    return [
        Finding(
            HealthStatus.YELLOW,
            "kv_rejections",
            f"table {name}",
            f"{sum(servers.values()):g} write requests rejected by KV backpressure{within} on "
            + ", ".join(sorted(servers)),
        )
        for name, servers in sorted(rising.items())
    ]


def _read_errors(snapshot: ClusterSnapshot) -> list[Finding]:
    view = snapshot.view
    if view is None or not view.errors:
        return []
    # Server-scope failures are their own finding (server_unreachable), and so is what a
    # silent server left unread (its buckets' offsets are unknown, not an extra cause).
    rest = [
        e for e in view.errors if e.scope != "server" and not isinstance(e.error, ServerSilentError)
    ]
    if not rest:
        return []
    first = rest[0]
    return [
        Finding(
            HealthStatus.UNKNOWN,
            "read_errors",
            "cluster",
            f"{len(rest)} item(s) could not be read (first: {first.subject}: {first.error})",
        )
    ]


def _storage(found: StorageTrouble) -> list[Finding]:
    """Tiers behind, as of the last storage poll (konsole.model.storage.trouble, derived
    once as the poll is judged)."""
    judged: list[tuple[str, Mapping[str, TableSummary], Callable[[TableSummary], str]]] = [
        (
            "tiering_stalled",
            found.stalled,
            lambda s: (
                f"tiering stalled on {s.stalled_buckets} bucket(s): remote end unchanged "
                f"for {int(s.tiering_age_s or 0)}s while the log grew"
            ),
        ),
        (
            "kv_snapshot_stale",
            found.stale_kv,
            lambda s: (
                f"no new KV snapshot for {int(s.kv_age_s or 0)}s on "
                f"{s.stale_kv_buckets} bucket(s) taking writes"
            ),
        ),
        ("lake_lag", found.lake_behind, lambda s: f"{s.lake_lag} offsets not yet in the lake"),
    ]
    out = []
    for rule, tables, reason in judged:
        out += [
            Finding(HealthStatus.YELLOW, rule, f"table {name}", reason(s))
            for name, s in sorted(tables.items())[:MAX_TABLE_FINDINGS]
        ]
    return out


def capacity_findings(
    snapshot: ClusterSnapshot, capacity: Iterable[ServerHeadroom], rules: HealthRules
) -> list[Finding]:
    """``disk_headroom``: a tablet server (or one of its data dirs) close to its own write
    limit; ``write_lock_forecast``: a confident forecast reaches that limit soon
    (konsole.model.headroom). Neither judges a server whose lock is on (``disk_write_locked``
    says it) or whose usage or limits are unknown (a 0.9.1 server has neither)."""
    out: list[Finding] = []
    for server in capacity:
        level, tight = headroom_level(server, rules)
        if level and tight is not None and tight.headroom_ratio is not None:
            where = "" if tight.dir is None else f" on data dir {tight.dir}"
            out.append(
                Finding(
                    HealthStatus.RED if level == 2 else HealthStatus.YELLOW,
                    "disk_headroom",
                    server.subject,
                    f"{tight.headroom_ratio:.1%} left below its write limit "
                    f"{tight.limit_ratio:.0%}{where} ({tight.used_ratio:.1%} used)",
                )
            )
        outlook = lock_outlook(server, rules, snapshot.taken_at)
        if outlook.level and outlook.figure is not None and outlook.eta_s is not None:
            out.append(
                Finding(
                    HealthStatus.RED if outlook.level == 2 else HealthStatus.YELLOW,
                    "write_lock_forecast",
                    server.subject,
                    forecast_text(outlook.figure.dir, outlook.eta_s, outlook.figure.forecast),
                )
            )
    return out


def forecast_text(directory: str | None, eta_s: float, forecast: Forecast | None) -> str:
    """``write lock in 24m10s (90% interval 20m05s-30m00s; theil-sen fit of 60 samples over
    15m00s)``: the forecast as the rules and events say it."""

    def span(seconds: float | None) -> str:
        return age_text(None if seconds is None else round(seconds))

    where = "" if directory is None else f" (data dir {directory})"
    text = f"writes locked in about {span(eta_s)}{where}"
    if forecast is not None:
        latest = "never" if forecast.eta_latest_s is None else span(forecast.eta_latest_s)
        soonest = span(forecast.eta_soonest_s)
        text += (
            f", at {forecast.level:.0%} used ({forecast.confidence:.0%} interval "
            f"{soonest}-{latest}; {forecast.method} fit of {forecast.points} samples over "
            f"{span(forecast.span_s)})"
        )
    return text

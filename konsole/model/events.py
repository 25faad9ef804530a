"""What changed between two snapshots, as a closed set of grouped events.

Pure: :func:`diff` compares two snapshots; :func:`advance` does the same and also carries
an immutable :class:`EventState` from one poll to the next, which the events that need
more than two snapshots use (ingest_stalled after N quiet polls, coordinator_failover's
gap, write rejections that stop, the last good snapshot to compare with after failed
polls). ``diff(previous, current)`` is ``advance`` from a state built out of ``previous``
alone, so it cannot see a stall yet.

Events are grouped by cause and subject, with a count and a few samples: a tablet server
leaving with 500 leaders gives server_left, one leaders_moved, one replicas_offline, one
under_replicated (and bucket_offline for leaders that found no new home), not one event
per bucket. The set of
kinds is closed (:class:`EventKind`); docs/events-and-health.md describes each one.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final

from fluss_proto.model import BucketView, ClusterView, HealthStatus, TableView
from konsole.model.health import Health, HealthRules, evaluate
from konsole.model.snapshot import ClusterSnapshot, bucket_name, table_names

__all__ = [
    "Event",
    "EventConfig",
    "EventKind",
    "EventState",
    "Severity",
    "Subject",
    "advance",
    "diff",
]


class EventKind(StrEnum):
    COORDINATOR_FAILOVER = "coordinator_failover"
    COORDINATOR_UNREACHABLE = "coordinator_unreachable"
    COORDINATOR_RECOVERED = "coordinator_recovered"
    STANDBY_LOST = "standby_lost"
    STANDBY_JOINED = "standby_joined"
    SERVER_LEFT = "server_left"
    SERVER_JOINED = "server_joined"
    LEADERS_MOVED = "leaders_moved"
    REPLICAS_OFFLINE = "replicas_offline"
    UNDER_REPLICATED = "under_replicated"
    REPLICAS_IN_SYNC = "replicas_in_sync"
    BUCKET_OFFLINE = "bucket_offline"
    BUCKET_ONLINE = "bucket_online"
    TABLE_CREATED = "table_created"
    TABLE_DROPPED = "table_dropped"
    PARTITION_CREATED = "partition_created"
    PARTITION_DROPPED = "partition_dropped"
    SCHEMA_CHANGED = "schema_changed"
    INGEST_STALLED = "ingest_stalled"
    INGEST_RESUMED = "ingest_resumed"
    WRITE_REJECTED = "write_rejected"
    WRITES_ACCEPTED = "writes_accepted"
    DISK_PRESSURE = "disk_pressure"
    HEALTH_CHANGED = "health_changed"
    POLL_FAILED = "poll_failed"
    POLL_RECOVERED = "poll_recovered"


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


@dataclass(frozen=True, slots=True)
class Subject:
    #: "cluster", "server", "table", "partition" or "bucket".
    kind: str
    #: "cluster", "tablet-server 2", "coordinator 127.0.0.1:9123", "db.t", "db.t[p]"...
    name: str

    def __str__(self) -> str:
        return self.name


CLUSTER: Final = Subject("cluster", "cluster")
#: Servers that left with their disk write lock engaged, remembered until they return.
MAX_GONE_LOCKED: Final = 16


@dataclass(frozen=True, slots=True)
class Event:
    time: float
    kind: EventKind
    severity: Severity
    subject: Subject
    message: str
    #: JSON-able facts (addresses, ids, counts per server or table, durations in seconds).
    details: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    #: How many items the event stands for, and a few of them by name.
    count: int = 1
    samples: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "kind": self.kind.value,
            "severity": self.severity.value,
            "subject": {"kind": self.subject.kind, "name": self.subject.name},
            "message": self.message,
            "details": dict(self.details),
            "count": self.count,
            "samples": list(self.samples),
        }


@dataclass(frozen=True, slots=True)
class EventConfig:
    rules: HealthRules = field(default_factory=HealthRules)
    #: Names kept as samples in a grouped event.
    max_samples: int = 5
    #: More created/dropped tables than this in one database become one event.
    group_tables_over: int = 3


@dataclass(frozen=True, slots=True)
class _Ingest:
    """One table's log end offsets (summed over its buckets) across polls."""

    total: int
    advanced: bool = False
    quiet_polls: int = 0
    stalled: bool = False


@dataclass(frozen=True, slots=True)
class EventState:
    """What :func:`advance` carries between polls. Immutable; bounded by the cluster."""

    previous: ClusterSnapshot | None = None
    #: The last snapshot whose poll succeeded (data diffs compare against it).
    baseline: ClusterSnapshot | None = None
    failing_since: float | None = None
    last_active: str | None = None
    no_coordinator_since: float | None = None
    health: Health | None = None
    #: Summed replicas out of sync (cluster health and metrics), last known.
    under_replicated: int | None = None
    #: server subject -> (write lock engaged, disk level 0 ok / 1 warn / 2 critical)
    disks: Mapping[str, tuple[bool | None, int]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    #: (server subject, table) -> KV backpressure rejections count, last known.
    kv_rejections: Mapping[tuple[str, str], float] = field(
        default_factory=lambda: MappingProxyType({})
    )
    kv_rejecting: frozenset[str] = frozenset()
    ingest: Mapping[str, _Ingest] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def starting_from(
        cls, previous: ClusterSnapshot | None, config: EventConfig | None = None
    ) -> EventState:
        """The state a stream that had only seen ``previous`` would have."""
        if previous is None:
            return cls()
        config = config or EventConfig()
        seed = advance(cls(), previous, config=config)[1]
        return seed


def diff(
    previous: ClusterSnapshot | None,
    current: ClusterSnapshot,
    *,
    config: EventConfig | None = None,
    state: EventState | None = None,
) -> list[Event]:
    """The events between ``previous`` and ``current`` (``state`` for a running stream)."""
    config = config or EventConfig()
    if state is None:
        state = EventState.starting_from(previous, config)
    return advance(state, current, config=config)[0]


def advance(
    state: EventState, current: ClusterSnapshot, *, config: EventConfig | None = None
) -> tuple[list[Event], EventState]:
    """The events ``current`` brings after ``state``, and the state for the next poll."""
    return _Step(state, current, config or EventConfig()).run()


# =========================================================================== one step


def _server(node_id: int | str) -> Subject:
    return Subject("server", f"tablet-server {node_id}")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class _Step:
    def __init__(self, state: EventState, current: ClusterSnapshot, config: EventConfig) -> None:
        self.state = state
        self.cur = current
        self.config = config
        self.t = current.taken_at
        self.events: list[Event] = []
        self.updates: dict[str, Any] = {}
        #: Replicas placed on servers that are not alive, by server (current view).
        self.dead_now: dict[int, list[str]] = {}

    def emit(
        self,
        kind: EventKind,
        severity: Severity,
        subject: Subject,
        message: str,
        details: Mapping[str, Any] | None = None,
        *,
        count: int = 1,
        samples: Iterable[str] = (),
    ) -> None:
        kept = tuple(sorted(samples)[: self.config.max_samples])
        self.events.append(
            Event(
                self.t,
                kind,
                severity,
                subject,
                message,
                MappingProxyType(dict(details or {})),
                count,
                kept,
            )
        )

    def run(self) -> tuple[list[Event], EventState]:
        prev, cur = self.state.previous, self.cur
        first = prev is None
        if not cur.ok:
            if first or prev.ok:  # type: ignore[union-attr]
                self.emit(
                    EventKind.POLL_FAILED,
                    Severity.CRITICAL,
                    CLUSTER,
                    f"poll failed: {cur.error}",
                    {"error": cur.error},
                )
            self.updates["failing_since"] = self.state.failing_since or self.t
        else:
            if prev is not None and not prev.ok:
                since = self.state.failing_since
                down = round(self.t - since, 3) if since is not None else None
                self.emit(
                    EventKind.POLL_RECOVERED,
                    Severity.INFO,
                    CLUSTER,
                    "poll succeeded again"
                    + (f" after {down:g}s of failed polls" if down is not None else ""),
                    {"failed_for_s": down},
                )
            self.updates["failing_since"] = None
        if cur.ok or cur.coordinators:
            self._coordinators(first)
        base = self.state.baseline
        if cur.ok and cur.view is not None:
            self.dead_now = _replicas_on_dead(cur.view)
            if base is not None and base.view is not None:
                self._servers(base.view, cur.view)
                self._buckets(base.view, cur.view)
                self._tables(base.view, cur.view)
            self._ingest(cur.view, first)
            self._writes(first)
            self._under_replicated()
            self.updates["baseline"] = cur
        self._health(first)
        self.updates["previous"] = cur
        return self.events, replace(self.state, **self.updates)

    # ------------------------------------------------------------------ coordinators

    def _coordinators(self, first: bool) -> None:
        cur, state = self.cur, self.state
        active = cur.active_coordinator
        last = state.last_active
        if active is None:
            if last is not None and state.no_coordinator_since is None:
                self.emit(
                    EventKind.COORDINATOR_UNREACHABLE,
                    Severity.CRITICAL,
                    Subject("server", f"coordinator {last}"),
                    f"no active coordinator answers (last active: {last})",
                    {"last_active": last},
                )
                self.updates["no_coordinator_since"] = self.t
        elif last is not None and active != last:
            since = state.no_coordinator_since
            gap = round(self.t - since, 3) if since is not None else 0.0
            self.emit(
                EventKind.COORDINATOR_FAILOVER,
                Severity.WARNING,
                Subject("server", f"coordinator {active}"),
                f"coordinator failover: {last} -> {active}"
                + (f" ({gap:g}s without an active coordinator)" if gap else ""),
                {"old": last, "new": active, "no_coordinator_s": gap},
            )
            self.updates["no_coordinator_since"] = None
        elif last is not None and state.no_coordinator_since is not None:
            down = round(self.t - state.no_coordinator_since, 3)
            self.emit(
                EventKind.COORDINATOR_RECOVERED,
                Severity.INFO,
                Subject("server", f"coordinator {active}"),
                f"coordinator {active} answers again after {down:g}s",
                {"address": active, "no_coordinator_s": down},
            )
            self.updates["no_coordinator_since"] = None
        if active is not None:
            self.updates["last_active"] = active
        prev = state.previous
        if first or prev is None or not cur.coordinators:
            return
        before = set(prev.standby_coordinators)
        now = set(cur.standby_coordinators)
        for address in sorted(before - now - {active}):
            self.emit(
                EventKind.STANDBY_LOST,
                Severity.WARNING,
                Subject("server", f"coordinator {address}"),
                f"standby coordinator {address} no longer answers",
                {"address": address},
            )
        for address in sorted(now - before):
            self.emit(
                EventKind.STANDBY_JOINED,
                Severity.INFO,
                Subject("server", f"coordinator {address}"),
                f"standby coordinator {address} answers",
                {"address": address},
            )

    # ------------------------------------------------------------------ servers, buckets

    def _servers(self, base: ClusterView, cur: ClusterView) -> None:
        before = {s.node_id: s for s in base.tablet_servers}
        now = {s.node_id: s for s in cur.tablet_servers}
        left = sorted(before.keys() - now.keys())
        led = Counter(b.leader_id for b in base.buckets if b.leader_id in left) if left else {}
        for node_id in left:
            n = led.get(node_id, 0)
            self.emit(
                EventKind.SERVER_LEFT,
                Severity.WARNING,
                _server(node_id),
                f"tablet-server {node_id} ({before[node_id].address}) left; "
                f"it led {_plural(n, 'bucket')}",
                {"server": node_id, "address": before[node_id].address, "leaders_before": n},
            )
        for node_id in sorted(now.keys() - before.keys()):
            self.emit(
                EventKind.SERVER_JOINED,
                Severity.INFO,
                _server(node_id),
                f"tablet-server {node_id} ({now[node_id].address}) joined",
                {"server": node_id, "address": now[node_id].address},
            )

    def _buckets(self, base: ClusterView, cur: ClusterView) -> None:
        names_now = table_names(cur)
        moved: dict[int, list[tuple[str, int]]] = defaultdict(list)
        offline: dict[int | None, list[str]] = defaultdict(list)
        online: dict[int, list[str]] = defaultdict(list)
        for bucket, old in _leader_changes(base, cur):
            was, now = old.leader_id, bucket.leader_id
            name = bucket_name(cur, bucket, names_now)
            if now is None:
                offline[was].append(name)
            elif was is None:
                online[now].append(name)
            else:
                moved[was].append((name, now))
        for server, items in sorted(moved.items()):
            to = Counter(new for _, new in items)
            targets = ", ".join(f"tablet-server {s}: {n}" for s, n in sorted(to.items()))
            self.emit(
                EventKind.LEADERS_MOVED,
                Severity.INFO,
                _server(server),
                f"{_plural(len(items), 'bucket leader')} moved off tablet-server {server} "
                f"({targets})",
                {"from": server, "to": {str(s): n for s, n in sorted(to.items())}},
                count=len(items),
                samples=(name for name, _ in items),
            )
        for was, names in sorted(offline.items(), key=lambda kv: (kv[0] is None, kv[0])):
            subject = _server(was) if was is not None else CLUSTER
            self.emit(
                EventKind.BUCKET_OFFLINE,
                Severity.CRITICAL,
                subject,
                f"{_plural(len(names), 'bucket')} lost their leader"
                + (f" (was tablet-server {was})" if was is not None else ""),
                {"previous_leader": was, "tables": _per_table(names)},
                count=len(names),
                samples=names,
            )
        for server, names in sorted(online.items()):
            self.emit(
                EventKind.BUCKET_ONLINE,
                Severity.INFO,
                _server(server),
                f"{_plural(len(names), 'bucket')} have a leader again (tablet-server {server})",
                {"leader": server, "tables": _per_table(names)},
                count=len(names),
                samples=names,
            )
        # replicas placed on servers that are not alive: one event per newly gone server
        gone_before = _replicas_on_dead(base)
        for server, names in sorted(self.dead_now.items()):
            if gone_before.get(server):
                continue
            self.emit(
                EventKind.REPLICAS_OFFLINE,
                Severity.WARNING,
                _server(server),
                f"{_plural(len(names), 'replica')} placed on tablet-server {server}, "
                "which is not alive",
                {"server": server, "tables": _per_table(names)},
                count=len(names),
                samples=names,
            )

    # ------------------------------------------------------------------ catalog

    def _tables(self, base: ClusterView, cur: ClusterView) -> None:
        before = {str(t.path): t for t in base.tables}
        now = {str(t.path): t for t in cur.tables}
        unread = {e.subject for e in cur.errors if e.scope == "database"}
        created = [n for n, t in now.items() if n not in before or _recreated(before[n], t)]
        dropped = [
            n
            for n, t in before.items()
            if (n not in now and t.path.database not in unread)
            or (n in now and _recreated(t, now[n]))
        ]
        self._catalog(EventKind.TABLE_DROPPED, Severity.WARNING, "dropped", dropped)
        self._catalog(EventKind.TABLE_CREATED, Severity.INFO, "created", created)
        for name, table in sorted(now.items()):
            old = before.get(name)
            if old is None or _recreated(old, table):
                continue
            self._partitions(name, old, table)
            if (
                old.info is not None
                and table.info is not None
                and old.info.schema_id != table.info.schema_id
            ):
                self.emit(
                    EventKind.SCHEMA_CHANGED,
                    Severity.INFO,
                    Subject("table", name),
                    f"table {name}: schema {old.info.schema_id} -> {table.info.schema_id}",
                    {
                        "old_schema_id": old.info.schema_id,
                        "new_schema_id": table.info.schema_id,
                    },
                )

    def _catalog(self, kind: EventKind, severity: Severity, verb: str, names: list[str]) -> None:
        by_db: dict[str, list[str]] = defaultdict(list)
        for name in names:
            by_db[name.partition(".")[0]].append(name)
        for db, items in sorted(by_db.items()):
            if len(items) > self.config.group_tables_over:
                self.emit(
                    kind,
                    severity,
                    Subject("table", f"{db}.*"),
                    f"{_plural(len(items), 'table')} {verb} in database {db}",
                    {"database": db},
                    count=len(items),
                    samples=items,
                )
                continue
            for name in sorted(items):
                self.emit(kind, severity, Subject("table", name), f"table {name} {verb}", {})

    def _partitions(self, name: str, old: TableView, new: TableView) -> None:
        before = {p.partition_id: p.name for p in old.partitions}
        now = {p.partition_id: p.name for p in new.partitions}
        for kind, severity, verb, ids, names in (
            (
                EventKind.PARTITION_DROPPED,
                Severity.INFO,
                "dropped",
                before.keys() - now.keys(),
                before,
            ),
            (
                EventKind.PARTITION_CREATED,
                Severity.INFO,
                "created",
                now.keys() - before.keys(),
                now,
            ),
        ):
            if not ids:
                continue
            items = sorted(names[i] for i in ids)
            subject = (
                Subject("partition", f"{name}[{items[0]}]")
                if len(items) == 1
                else Subject("table", name)
            )
            self.emit(
                kind,
                severity,
                subject,
                f"table {name}: {_plural(len(items), 'partition')} {verb}",
                {"table": name},
                count=len(items),
                samples=items,
            )

    # ------------------------------------------------------------------ ingest

    def _ingest(self, view: ClusterView, first: bool) -> None:
        if not view.latest_read:
            return
        old_tracks = self.state.ingest
        tracks: dict[str, _Ingest] = {}
        need = self.config.rules.ingest_stall_polls
        for table in view.tables:
            if table.table_id is None or not table.buckets:
                continue
            key = f"{table.path}#{table.table_id}"
            total = _log_end(table)
            old = old_tracks.get(key)
            if total is None:
                if old is not None:
                    tracks[key] = old  # unknown this poll: keep what we knew
                continue
            if old is None or total < old.total:
                tracks[key] = _Ingest(total)
            elif total > old.total:
                if old.stalled:
                    self.emit(
                        EventKind.INGEST_RESUMED,
                        Severity.INFO,
                        Subject("table", str(table.path)),
                        f"table {table.path}: log end offsets advance again",
                        {"log_end_offset": total, "new_records": total - old.total},
                    )
                tracks[key] = _Ingest(total, advanced=True)
            else:
                quiet = old.quiet_polls + 1
                stalled = old.stalled
                if old.advanced and not stalled and quiet >= need:
                    stalled = True
                    self.emit(
                        EventKind.INGEST_STALLED,
                        Severity.WARNING,
                        Subject("table", str(table.path)),
                        f"table {table.path}: no new records for {_plural(quiet, 'poll')} "
                        "after advancing",
                        {"log_end_offset": total, "quiet_polls": quiet},
                    )
                tracks[key] = _Ingest(total, old.advanced, quiet, stalled)
        self.updates["ingest"] = MappingProxyType(tracks)

    # ------------------------------------------------------------------ metrics-driven

    def _writes(self, first: bool) -> None:
        rules = self.config.rules
        disks = dict(self.state.disks)
        rejections = dict(self.state.kv_rejections)
        rising: dict[str, dict[str, float]] = defaultdict(dict)
        for m in self.cur.metrics:
            if m.role != "tablet":
                continue
            subject = Subject("server", m.subject)
            was_locked, was_level = disks.get(m.subject, (None, 0))
            ratio = m.disk_usage_ratio
            level = (
                0
                if ratio is None
                else 2
                if ratio >= rules.disk_usage_critical
                else 1
                if ratio >= rules.disk_usage_warn
                else 0
            )
            if not first and m.disk_write_locked and was_locked is not True:
                self.emit(
                    EventKind.WRITE_REJECTED,
                    Severity.CRITICAL,
                    subject,
                    f"{m.subject} rejects writes: data disk write lock engaged"
                    + (f" (disk usage {ratio:.0%})" if ratio is not None else ""),
                    {
                        "cause": "disk_write_locked",
                        "server": m.server_id,
                        "disk_usage_ratio": ratio,
                    },
                )
            elif m.disk_write_locked is False and was_locked is True:
                self.emit(
                    EventKind.WRITES_ACCEPTED,
                    Severity.INFO,
                    subject,
                    f"{m.subject} accepts writes again: data disk write lock released",
                    {
                        "cause": "disk_write_locked",
                        "server": m.server_id,
                        "disk_usage_ratio": ratio,
                    },
                )
            if not first and level > was_level and ratio is not None:
                limit = rules.disk_usage_critical if level == 2 else rules.disk_usage_warn
                self.emit(
                    EventKind.DISK_PRESSURE,
                    Severity.CRITICAL if level == 2 else Severity.WARNING,
                    subject,
                    f"{m.subject}: data disk {ratio:.0%} used (threshold {limit:.0%})",
                    {"server": m.server_id, "disk_usage_ratio": ratio, "threshold": limit},
                )
            locked = m.disk_write_locked if m.disk_write_locked is not None else was_locked
            disks[m.subject] = (locked, level if ratio is not None else was_level)
            for table in m.tables:
                if table.kv_rejections is None:
                    continue
                key = (m.subject, table.name)
                old = rejections.get(key)
                if old is not None and table.kv_rejections > old:
                    rising[table.name][m.subject] = table.kv_rejections - old
                rejections[key] = table.kv_rejections
        for name, servers in sorted(rising.items()):
            total = sum(servers.values())
            self.emit(
                EventKind.WRITE_REJECTED,
                Severity.WARNING,
                Subject("table", name),
                f"table {name}: {total:g} writes rejected by KV backpressure on "
                + ", ".join(sorted(servers)),
                {"cause": "kv_backpressure", "servers": dict(sorted(servers.items()))},
                count=round(total),
            )
        for name in sorted(self.state.kv_rejecting - rising.keys()):
            self.emit(
                EventKind.WRITES_ACCEPTED,
                Severity.INFO,
                Subject("table", name),
                f"table {name}: no more KV backpressure rejections",
                {"cause": "kv_backpressure"},
            )
        # Bounded state: keep servers in metadata or scraped this poll (a restarted server
        # answers metrics before it is back in metadata: forgetting it then would report
        # its write lock again every poll), and servers that went away while locked (their
        # writes_accepted is owed when they come back), at most MAX_GONE_LOCKED of those.
        alive = self.cur.tablet_server_ids or frozenset()
        names = {f"tablet-server {i}" for i in alive}
        names |= {m.subject for m in self.cur.metrics if m.role == "tablet"}
        gone_locked = [k for k, (locked, _) in disks.items() if k not in names and locked]
        keep = names | set(gone_locked[-MAX_GONE_LOCKED:])
        self.updates["disks"] = MappingProxyType({k: v for k, v in disks.items() if k in keep})
        self.updates["kv_rejections"] = MappingProxyType(
            {k: v for k, v in rejections.items() if k[0] in names}
        )
        self.updates["kv_rejecting"] = frozenset(rising)

    def _under_replicated(self) -> None:
        cur = self.cur
        # Replicas on servers that are gone are out of sync whatever else says so.
        offline = sum(len(names) for names in self.dead_now.values())
        known: list[int] = [offline]
        per_server: dict[str, int] = {}
        if cur.health is not None:
            known.append(max(0, cur.health.num_replicas - cur.health.in_sync_replicas))
        reported = [m for m in cur.metrics if m.role == "tablet" and m.under_replicated is not None]
        if reported:
            per_server = {m.subject: m.under_replicated or 0 for m in reported}
            known.append(sum(per_server.values()))
        now = max(known)
        was = self.state.under_replicated
        self.updates["under_replicated"] = now
        if was is None:
            return
        details: dict[str, Any] = {
            "servers": {k: v for k, v in sorted(per_server.items()) if v},
            "replicas_offline": offline,
        }
        if cur.health is not None:
            details["replicas"] = cur.health.num_replicas
            details["in_sync_replicas"] = cur.health.in_sync_replicas
        if was == 0 and now > 0:
            self.emit(
                EventKind.UNDER_REPLICATED,
                Severity.WARNING,
                CLUSTER,
                f"{_plural(now, 'replica')} out of sync",
                details,
                count=now,
                samples=(k for k, v in per_server.items() if v),
            )
        elif was > 0 and now == 0:
            self.emit(
                EventKind.REPLICAS_IN_SYNC,
                Severity.INFO,
                CLUSTER,
                "every replica is in sync again",
                details,
            )

    # ------------------------------------------------------------------ health

    def _health(self, first: bool) -> None:
        health = evaluate(self.cur, self.config.rules)
        old = self.state.health
        self.updates["health"] = health
        if first or old is None or old.status == health.status:
            return
        severity = {
            HealthStatus.GREEN: Severity.INFO,
            HealthStatus.YELLOW: Severity.WARNING,
            HealthStatus.RED: Severity.CRITICAL,
        }.get(health.status, Severity.WARNING)
        self.emit(
            EventKind.HEALTH_CHANGED,
            severity,
            CLUSTER,
            f"health {old.status.name} -> {health.status.name}"
            + (f": {cause}" if (cause := _cause(health)) else ""),
            {"old": old.status.name, "new": health.status.name, "reasons": list(health.reasons)},
        )


# =========================================================================== helpers


def _cause(health: Health) -> str | None:
    """The first finding that has the new status: the reason the status is what it is."""
    for finding in health.findings:
        if finding.status == health.status:
            return str(finding)
    return health.reasons[0] if health.reasons else None


def _key(bucket: BucketView) -> tuple[int, int | None, int]:
    return bucket.table_id, bucket.partition_id, bucket.bucket_id


def _leaders(table: TableView) -> list[tuple[int | None, int, int | None]]:
    return [(b.partition_id, b.bucket_id, b.leader_id) for b in table.buckets]


def _leader_changes(base: ClusterView, cur: ClusterView) -> list[tuple[BucketView, BucketView]]:
    """(current, previous) for each bucket present in both whose leader changed.

    Tables whose buckets kept their leaders are skipped in one comparison each: on a
    steady cluster this is the whole work of a poll.
    """
    before = {t.table_id: t for t in base.tables if t.table_id is not None}
    changes: list[tuple[BucketView, BucketView]] = []
    for table in cur.tables:
        old_table = before.get(table.table_id) if table.table_id is not None else None
        if old_table is None or _leaders(old_table) == _leaders(table):
            continue
        old = {_key(b): b for b in old_table.buckets}
        for bucket in table.buckets:
            previous = old.get(_key(bucket))
            if previous is not None and previous.leader_id != bucket.leader_id:
                changes.append((bucket, previous))
    return changes


def _recreated(old: TableView, new: TableView) -> bool:
    return old.table_id is not None and new.table_id is not None and old.table_id != new.table_id


def _log_end(table: TableView) -> int | None:
    total = 0
    for bucket in table.buckets:
        if bucket.latest_offset is None:
            return None
        total += bucket.latest_offset
    return total


def _replicas_on_dead(view: ClusterView) -> dict[int, list[str]]:
    alive = {s.node_id for s in view.tablet_servers}
    placed = {r for t in view.tables for b in t.buckets for r in b.replica_ids}
    if placed <= alive:
        return {}
    names = table_names(view)
    out: dict[int, list[str]] = defaultdict(list)
    for bucket in view.buckets:
        for replica in bucket.replica_ids:
            if replica not in alive:
                out[replica].append(bucket_name(view, bucket, names))
    return out


def _per_table(names: Iterable[str]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for name in names:
        counts[name.partition("[")[0].partition("#")[0]] += 1
    return dict(sorted(counts.items()))

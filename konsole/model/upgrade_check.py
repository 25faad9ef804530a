"""The 1.0 readiness report: which line each server speaks, the skew, the 1.0 upgrade notes
checked against this cluster, and the order of the rolling upgrade with each step's cost.

Pure: a snapshot, the ACLs and the servers' configs in, an :class:`UpgradeReport` out.

How a server's line is told: from what it advertises in ApiVersions
(:mod:`konsole.model.server_lines`: a key only the 1.0 line serves), never from a
version string (Fluss does not send one).

The upgrade notes of the 1.0 line (website/docs/maintenance/operations/upgrade-notes-1.0.md
at the 1.0-line commit 545c553) and its ConfigOptions, compared with v0.9.1-incubating's:

- ``acl-all``: creating or dropping ACLs needs ``ALL`` on the resource (0.9: ``ALTER``):
  a principal allowed ALTER but not ALL on a resource loses that on 1.0;
- ``datalake-enabled``: the new cluster key ``datalake.enabled``; ``datalake.format`` set
  with it unset keeps the legacy behaviour (the format alone enables lake tables);
- ``config-keys``: no key of 0.9.1 is removed at the 1.0-line commit (all 188 keys are
  still declared); the keys below are old names of renamed keys that 1.0 still reads
  (:data:`RENAMED`). The report names each one a server's configuration holds.

Exit codes (``check``'s): 0 nothing to act on; 1 WARNING an item to act on (or the cost of
a step: a table whose only replica goes down); 2 CRITICAL the cluster could not be read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from fluss_proto.model import (
    AclListing,
    ConfigEntry,
    OperationType,
    PermissionType,
)
from konsole.errors import ExitCode
from konsole.model import subjects
from konsole.model.placement import Placement
from konsole.model.poll import JudgedPoll
from konsole.model.server_lines import line_of
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole, table_names

__all__ = [
    "RENAMED",
    "NoteItem",
    "ServerLine",
    "UpgradeReport",
    "UpgradeStep",
    "report",
]

#: Old key -> its new name: renamed keys the 1.0 line still reads under the old name
#: (``withDeprecatedKeys`` / ``withFallbackKeys`` in ConfigOptions at the 1.0-line commit).
RENAMED: Final[Mapping[str, str]] = {
    "coordinator.io-pool.size": "server.io-pool.size",
    "recovery.zookeeper.client.session-timeout": "zookeeper.client.session-timeout",
    "recovery.zookeeper.client.connection-timeout": "zookeeper.client.connection-timeout",
    "recovery.zookeeper.client.retry-wait": "zookeeper.client.retry-wait",
    "recovery.zookeeper.client.max-retry-attempts": "zookeeper.client.max-retry-attempts",
    "log.replica.fetch-backoff-interval": "log.replica.fetch.backoff-interval",
    "log.fetch.max-bytes": "log.replica.fetch.max-bytes",
    "log.fetch.max-bytes-for-bucket": "log.replica.fetch.max-bytes-for-bucket",
    "coordinator.host": "bind.listeners",
    "coordinator.port": "bind.listeners",
    "tablet-server.host": "bind.listeners",
    "tablet-server.port": "bind.listeners",
}
#: Keys of 0.9.1 that the 1.0 line no longer declares (none at the 1.0-line commit).
REMOVED: Final[frozenset[str]] = frozenset()
ITEMS: Final = ("acl-all", "datalake-enabled", "config-keys", "single-replica")


@dataclass(frozen=True, slots=True)
class ServerLine:
    subject: str
    role: str
    node_id: int | None
    #: "0.9", "1.0", or None when the server could not be asked.
    line: str | None
    #: The highest API key it advertises (None: not asked).
    max_api_key: int | None

    @property
    def told_by(self) -> str:
        if self.max_api_key is None:
            return "not asked (no ApiVersions answer)"
        return f"advertises API keys up to {self.max_api_key}"


@dataclass(frozen=True, slots=True)
class NoteItem:
    item: str
    status: ExitCode
    subject: str
    text: str

    def line(self) -> str:
        return f"[{self.status.name}] {self.item}: {self.subject}: {self.text}"


@dataclass(frozen=True, slots=True)
class UpgradeStep:
    order: int
    subject: str
    #: Buckets it leads (leadership moves away while it is down).
    leaders: int
    #: Buckets with a replica on it and others elsewhere: under-replicated while it is down.
    under_replicated: int
    #: Tables whose only replica of some bucket is on it: offline while it is down.
    offline_tables: tuple[str, ...] = ()
    done: bool = False

    def line(self) -> str:
        if self.done:
            return f"{self.order}. {self.subject}: already on the target line"
        cost = f"{self.leaders} leader(s) move, {self.under_replicated} bucket(s) under-replicated"
        if self.offline_tables:
            cost += f", offline: {', '.join(self.offline_tables)}"
        return f"{self.order}. {self.subject}: {cost}"


@dataclass(frozen=True, slots=True)
class UpgradeReport:
    target: str
    servers: tuple[ServerLine, ...]
    items: tuple[NoteItem, ...]
    steps: tuple[UpgradeStep, ...]
    #: Why the cluster could not be read (None when it could).
    error: str | None = None
    taken_at: float | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def lines(self) -> tuple[str, ...]:
        """The server lines spoken now, sorted (more than one: version skew)."""
        return tuple(sorted({s.line for s in self.servers if s.line is not None}))

    @property
    def skew(self) -> bool:
        return len(self.lines) > 1

    @property
    def status(self) -> ExitCode:
        if self.error is not None:
            return ExitCode.CRITICAL
        worst = ExitCode.OK
        for i in self.items:
            if i.status is ExitCode.CRITICAL or (
                i.status is ExitCode.WARNING and worst is ExitCode.OK
            ):
                worst = i.status
        return worst

    def summary(self) -> str:
        if self.error is not None:
            return f"UPGRADE CRITICAL: the cluster could not be read: {self.error}"
        spoken = "/".join(self.lines) or "unknown"
        todo = sum(1 for s in self.steps if not s.done)
        acts = sum(1 for i in self.items if i.status is not ExitCode.OK)
        skew = " (skew)" if self.skew else ""
        return (
            f"UPGRADE {self.status.name}: to {self.target}: servers speak {spoken}{skew}, "
            f"{todo} step(s) left, {acts} item(s) to act on"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "status": self.status.name,
            "target": self.target,
            "time": self.taken_at,
            "error": self.error,
            "lines": list(self.lines),
            "skew": self.skew,
            "servers": [
                {
                    "subject": s.subject,
                    "role": s.role,
                    "node_id": s.node_id,
                    "line": s.line,
                    "max_api_key": s.max_api_key,
                    "told_by": s.told_by,
                }
                for s in self.servers
            ],
            "items": [
                {"item": i.item, "status": i.status.name, "subject": i.subject, "text": i.text}
                for i in self.items
            ],
            "steps": [
                {
                    "order": s.order,
                    "subject": s.subject,
                    "done": s.done,
                    "leaders": s.leaders,
                    "under_replicated": s.under_replicated,
                    "offline_tables": list(s.offline_tables),
                }
                for s in self.steps
            ],
            "notes": list(self.notes),
        }


def report(
    judged: JudgedPoll,
    *,
    target: str = "1.0",
    acls: AclListing | None = None,
    configs: Mapping[str, Sequence[ConfigEntry]] | None = None,
) -> UpgradeReport:
    """The readiness report of the last good poll of ``judged`` (the console's panels
    show it while a poll fails; a look that failed has none). ``acls``: None when they
    could not be listed; ``configs``: server subject -> its configuration
    (DescribeClusterConfigs), None when not read."""
    snapshot, placement = judged.last_ok, judged.placement
    if snapshot is None or snapshot.view is None or placement is None:
        error = judged.snapshot.error or "no answer"
        return UpgradeReport(target, (), (), (), error=error)
    view = snapshot.view
    servers: list[ServerLine] = []
    if view.coordinator is not None:
        line, top = line_of(view.coordinator)
        address = snapshot.active_coordinator or view.coordinator.address
        servers.append(ServerLine(subjects.coordinator(address), "coordinator", None, line, top))
    for s in view.tablet_servers:
        line, top = line_of(s)
        servers.append(
            ServerLine(subjects.tablet_server(s.node_id), "tablet", s.node_id, line, top)
        )
    items = [*_acl_items(acls), *_datalake_items(configs), *_key_items(configs)]
    steps, offline_items = _steps(snapshot, servers, target, placement)
    items += offline_items
    notes = []
    standbys = [c for c in snapshot.coordinators if c.role is CoordinatorRole.STANDBY]
    if standbys:
        notes.append(
            "standby coordinators are not in metadata: their line is not told here; "
            "upgrade them before the active one"
        )
    return UpgradeReport(
        target,
        tuple(servers),
        tuple(items),
        tuple(steps),
        taken_at=snapshot.taken_at,
        notes=tuple(notes),
    )


def _acl_items(acls: AclListing | None) -> list[NoteItem]:
    if acls is None:
        return [NoteItem("acl-all", ExitCode.WARNING, "cluster", "the ACLs could not be listed")]
    if not acls.enabled:
        return [NoteItem("acl-all", ExitCode.OK, "cluster", "no authorizer: no ACL to check")]
    allowed: dict[tuple[str, str, str], set[object]] = {}
    for b in acls.bindings:
        if b.permission != PermissionType.ALLOW:
            continue
        rtype = getattr(b.resource_type, "name", str(b.resource_type)).lower()
        who = f"{b.principal_type}:{b.principal_name}"
        allowed.setdefault((who, rtype, b.resource_name), set()).add(b.operation)
    out = [
        NoteItem(
            "acl-all",
            ExitCode.WARNING,
            who,
            f"allowed ALTER but not ALL on {rtype} {name!r}: on 1.0 it can no longer create "
            "or drop ACLs there; grant ALL if it manages ACLs",
        )
        for (who, rtype, name), ops in sorted(allowed.items())
        if OperationType.ALTER in ops and OperationType.ALL not in ops
    ]
    return out or [
        NoteItem("acl-all", ExitCode.OK, "cluster", "no principal holds ALTER without ALL")
    ]


def _datalake_items(configs: Mapping[str, Sequence[ConfigEntry]] | None) -> list[NoteItem]:
    if configs is None:
        return [NoteItem("datalake-enabled", ExitCode.WARNING, "cluster", "configs not read")]
    out = []
    for subject, entries in sorted(configs.items()):
        values = {e.key: e.value for e in entries}
        fmt, enabled = values.get("datalake.format"), values.get("datalake.enabled")
        if fmt and enabled is None:
            out.append(
                NoteItem(
                    "datalake-enabled",
                    ExitCode.WARNING,
                    subject,
                    f"datalake.format={fmt} without datalake.enabled: 1.0 keeps the legacy "
                    "behaviour (the format alone enables lake tables); set datalake.enabled: "
                    "true (or false to only pre-bind the format)",
                )
            )
    return out or [
        NoteItem(
            "datalake-enabled",
            ExitCode.OK,
            "cluster",
            "no datalake.format without datalake.enabled",
        )
    ]


def _key_items(configs: Mapping[str, Sequence[ConfigEntry]] | None) -> list[NoteItem]:
    if configs is None:
        return [NoteItem("config-keys", ExitCode.WARNING, "cluster", "configs not read")]
    out = []
    for subject, entries in sorted(configs.items()):
        for e in entries:
            if e.key in REMOVED:
                out.append(
                    NoteItem("config-keys", ExitCode.WARNING, subject, f"{e.key}: removed in 1.0")
                )
            elif e.key in RENAMED:
                out.append(
                    NoteItem(
                        "config-keys",
                        ExitCode.WARNING,
                        subject,
                        f"{e.key} is renamed {RENAMED[e.key]} (1.0 still reads the old name)",
                    )
                )
    return out or [
        NoteItem("config-keys", ExitCode.OK, "cluster", "no removed or renamed key in the configs")
    ]


def _steps(
    snapshot: ClusterSnapshot, servers: Sequence[ServerLine], target: str, placement: Placement
) -> tuple[list[UpgradeStep], list[NoteItem]]:
    """Tablet servers by id, then standby coordinators, then the active one."""
    view = snapshot.view
    assert view is not None
    names = table_names(view)
    steps: list[UpgradeStep] = []
    items: list[NoteItem] = []
    for s in servers:
        if s.role != "tablet" or s.node_id is None:
            continue
        node = s.node_id
        held = [b for b in view.buckets if node in b.replica_ids]
        alone = sorted(
            {names.get(b.table_id, str(b.table_id)) for b in held if len(b.replica_ids) == 1}
        )
        steps.append(
            UpgradeStep(
                len(steps) + 1,
                s.subject,
                leaders=placement.leaders.get(node, 0),
                under_replicated=sum(1 for b in held if len(b.replica_ids) > 1),
                offline_tables=tuple(alone),
                done=s.line == target,
            )
        )
        if alone and s.line != target:
            items.append(
                NoteItem(
                    "single-replica",
                    ExitCode.WARNING,
                    s.subject,
                    f"only replica of buckets of {', '.join(alone)}: offline while it restarts",
                )
            )
    for c in snapshot.coordinators:
        if c.role is CoordinatorRole.STANDBY:
            steps.append(UpgradeStep(len(steps) + 1, subjects.coordinator(c.address), 0, 0))
    coordinator = next((s for s in servers if s.role == "coordinator"), None)
    if coordinator is not None:
        steps.append(
            UpgradeStep(
                len(steps) + 1,
                f"{coordinator.subject} (active, last)",
                0,
                0,
                done=coordinator.line == target,
            )
        )
    if not items:
        items.append(
            NoteItem("single-replica", ExitCode.OK, "cluster", "no table with a single replica")
        )
    return steps, items

"""Operator actions, planned: what will be sent, what it changes, and whether it may go.

Pure (no I/O): each ``plan_*`` function reads what the caller already knows (a cluster
view, its health, the rebalance in progress, the cluster's configs) and returns a
:class:`Plan`, or raises :class:`~konsole.errors.ActionInputError` for input that names
nothing real (unknown server, table, partition, a malformed spec or principal). A plan
carries its :class:`Refusal` s, the safety rails: a drain or rebalance while health is
RED or another rebalance runs (``--force`` overrides), a drain that would leave fewer
alive tablet servers than the highest replication factor (never overridden).

:func:`audit_event` turns a plan and its outcome into the ``operator`` event the history
keeps (who, what, when, result, the server's error); ``konsole.collect.actions.runner`` sends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from fluss_proto.model import (
    ClusterView,
    ConfigEntry,
    HealthStatus,
    RebalanceProgress,
    RebalanceStatus,
)
from konsole.errors import ActionInputError
from konsole.model import subjects
from konsole.model.events.base import Event, EventKind, Severity, Subject
from konsole.model.known_servers import KnownServers
from konsole.model.placement import Placement

__all__ = [
    "ACL_OPERATIONS",
    "ACL_PRINCIPAL_TYPES",
    "Change",
    "Outcome",
    "Plan",
    "Refusal",
    "audit_event",
    "parse_assignments",
    "parse_principal",
    "parse_resource",
    "plan_acl",
    "plan_cancel",
    "plan_config",
    "plan_drain",
    "plan_partition",
    "plan_rebalance",
    "plan_retire",
    "plan_table_set",
    "plan_tag",
    "progress_counts",
    "replicas_on",
]

#: Principal types a Fluss ACL names (its authorizer's own: ``User``).
ACL_PRINCIPAL_TYPES: frozenset[str] = frozenset({"User"})
#: Fluss's ACL operation codes by name.
ACL_OPERATIONS: Mapping[str, int] = MappingProxyType(
    {
        "ALL": 2,
        "READ": 3,
        "WRITE": 4,
        "CREATE": 5,
        "DROP": 6,
        "ALTER": 7,
        "DESCRIBE": 8,
    }
)
#: Fluss's ACL resource type codes by name.
ACL_RESOURCES: Mapping[str, int] = MappingProxyType({"cluster": 2, "database": 3, "table": 4})


class Outcome(StrEnum):
    """Where an action ended; each is one ``operator`` event in the history."""

    PLANNED = "planned"
    REFUSED = "refused"
    SENT = "sent"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    #: The wait was stopped (Ctrl-C, its bound); the server-side operation keeps running.
    LEFT_RUNNING = "left_running"


@dataclass(frozen=True, slots=True)
class Change:
    """One value the action changes: before -> after (None: absent / unknown)."""

    what: str
    before: str | None
    after: str | None

    def __str__(self) -> str:
        return f"{self.what}: {_shown(self.before)} -> {_shown(self.after)}"


@dataclass(frozen=True, slots=True)
class Refusal:
    """A safety rail that stops the action; ``overridable`` ones give way to ``--force``."""

    reason: str
    overridable: bool = True


@dataclass(frozen=True, slots=True)
class Plan:
    """What an action will send and change, before anything is sent."""

    #: "server drain", "config set", ... (the command's words).
    action: str
    #: What the subject is ("server", "config", "table", "partition", "acl", "cluster").
    subject_kind: str
    #: The name an operator types to confirm ("3", "db.t", a config key).
    subject: str
    #: The API keys, in the order they will be sent.
    sends: tuple[str, ...]
    #: What is sent, as JSON-able values (never a secret).
    params: Mapping[str, Any] = field(default_factory=dict)
    changes: tuple[Change, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    notes: tuple[str, ...] = ()

    def blocking(self, force: bool) -> tuple[Refusal, ...]:
        """The refusals that stop it (``force`` lifts the overridable ones)."""
        return tuple(r for r in self.refusals if not (force and r.overridable))

    def lines(self) -> list[str]:
        """The plan as text, one fact a line."""
        sends = ", ".join(self.sends) or "nothing"
        out = [f"plan: {self.action} {self.subject}", f"  sends: {sends}"]
        out += [f"  {k}: {_param(v)}" for k, v in self.params.items()]
        out += [f"  change {c}" for c in self.changes]
        out += [f"  note: {n}" for n in self.notes]
        out += [
            f"  REFUSED: {r.reason}" + (" (--force overrides)" if r.overridable else "")
            for r in self.refusals
        ]
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "subject": self.subject,
            "sends": list(self.sends),
            "params": dict(self.params),
            "changes": [
                {"what": c.what, "before": c.before, "after": c.after} for c in self.changes
            ],
            "refusals": [r.reason for r in self.refusals],
        }


def _shown(value: str | None) -> str:
    return "(none)" if value is None else repr(value)


def _param(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


# =========================================================================== servers


def replicas_on(placement: Placement, server_id: int) -> tuple[int, int]:
    """(replicas, leaders) the server holds, by a poll's placement."""
    return placement.replicas.get(server_id, 0), placement.leaders.get(server_id, 0)


def _known_server(view: ClusterView, server_id: int) -> None:
    known = sorted(s.node_id for s in view.tablet_servers)
    if server_id not in known:
        raise ActionInputError(
            f"unknown tablet server {server_id} (alive: {', '.join(map(str, known)) or 'none'})"
        )


def _busy_rails(health: HealthStatus, running: str | None) -> list[Refusal]:
    rails = []
    if health is HealthStatus.RED:
        rails.append(Refusal("cluster health is RED"))
    if running is not None:
        rails.append(Refusal(f"rebalance {running} is running (follow or cancel it first)"))
    return rails


def plan_tag(view: ClusterView, server_id: int, tag: str, *, remove: bool) -> Plan:
    """``server tag|untag ID TAG``: AddServerTag / RemoveServerTag."""
    _known_server(view, server_id)
    key = "REMOVE_SERVER_TAG" if remove else "ADD_SERVER_TAG"
    before, after = (tag, None) if remove else (None, tag)
    return Plan(
        "server untag" if remove else "server tag",
        "server",
        str(server_id),
        (key,),
        {"server_ids": [server_id], "server_tag": tag},
        (Change(f"tag of server {server_id}", before, after),),
    )


def plan_retire(
    view: ClusterView, placement: Placement, server_id: int, known: KnownServers
) -> Plan:
    """``server retire ID``: konsole forgets a tablet server that is gone for good (nothing
    is sent to the cluster; the audit in the history is the retirement, so every face
    stops judging it ``server_gone``). Refused while metadata lists it alive (stop it
    first) and, unless forced, while replicas are placed on it (drain it first)."""
    if server_id not in known.node_ids and server_id not in {
        s.node_id for s in view.tablet_servers
    }:
        ids = ", ".join(map(str, sorted(known.node_ids))) or "none"
        raise ActionInputError(f"tablet server {server_id} is not known (known: {ids})")
    rails = []
    if server_id in {s.node_id for s in view.tablet_servers}:
        rails.append(
            Refusal(
                f"tablet server {server_id} is alive in metadata: stop it first, then retire it",
                overridable=False,
            )
        )
    replicas, _ = replicas_on(placement, server_id)
    if replicas:
        rails.append(
            Refusal(
                f"{replicas} replica(s) still placed on server {server_id}: drain it first "
                f"(konsole admin server drain {server_id})"
            )
        )
    notes = ["nothing is sent to the cluster: the history records the retirement"]
    if server_id in known.expected:
        notes.append(
            f"profile {known.profile} still expects it: remove it from expected_tablet_servers"
        )
    return Plan(
        "server retire",
        "server",
        str(server_id),
        (),
        {"server_ids": [server_id]},
        (Change(f"tablet server {server_id}", "known", "retired"),),
        tuple(rails),
        tuple(notes),
    )


def plan_drain(
    view: ClusterView,
    placement: Placement,
    server_id: int,
    *,
    health: HealthStatus,
    running: str | None,
    goals: Sequence[str],
) -> Plan:
    """``server drain ID``: tag it PERMANENT_OFFLINE, then rebalance every replica off it
    (``placement``: that of ``view``, derived as its poll was judged)."""
    _known_server(view, server_id)
    replicas, leaders = replicas_on(placement, server_id)
    rails = _busy_rails(health, running)
    alive_after = len(placement.alive - {server_id})
    highest = max((len(b.replica_ids) for b in view.buckets), default=0)
    if alive_after < highest:
        rails.append(
            Refusal(
                f"draining server {server_id} leaves {alive_after} alive tablet server(s), "
                f"fewer than the highest replication factor ({highest})",
                overridable=False,
            )
        )
    return Plan(
        "server drain",
        "server",
        str(server_id),
        ("ADD_SERVER_TAG", "REBALANCE", "LIST_REBALANCE_PROGRESS"),
        {"server_ids": [server_id], "server_tag": "PERMANENT_OFFLINE", "goals": list(goals)},
        (
            Change(f"tag of server {server_id}", None, "PERMANENT_OFFLINE"),
            Change(f"replicas on server {server_id}", str(replicas), "0"),
            Change(f"leaders on server {server_id}", str(leaders), "0"),
        ),
        tuple(rails),
        (
            f"{alive_after} tablet server(s) take its replicas; "
            f"highest replication factor {highest}",
        ),
    )


def plan_rebalance(
    placement: Placement,
    *,
    health: HealthStatus,
    running: str | None,
    goals: Sequence[str],
) -> Plan:
    """``rebalance start``: the server computes the moves (it has no dry run); the plan
    says what the placement is now (``placement``: the poll's, derived as it was judged),
    ``rebalance status`` shows what moves."""
    counts = {s: replicas_on(placement, s)[0] for s in sorted(placement.alive)}
    return Plan(
        "rebalance start",
        "cluster",
        "cluster",
        ("REBALANCE", "LIST_REBALANCE_PROGRESS"),
        {"goals": list(goals)},
        refusals=tuple(_busy_rails(health, running)),
        notes=(
            "replicas per server now: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())),
            "the server plans the moves itself (no dry run): `rebalance status` shows them",
        ),
    )


def plan_cancel(running: str | None, named: str | None = None) -> Plan:
    """Cancelling a rebalance: the one ``named`` (``--id``) or the one ``running`` now. The
    subject typed is the id named, else ``rebalance``."""
    target = named or running
    return Plan(
        "rebalance cancel",
        "cluster",
        named or "rebalance",
        ("CANCEL_REBALANCE",),
        {"rebalance_id": target},
        notes=(
            (f"cancels rebalance {target}; moves already done stay",)
            if running
            else ("no rebalance is running: the server will say so",)
        ),
    )


def progress_counts(progress: RebalanceProgress) -> tuple[int, int, str]:
    """(buckets done, buckets in the plan, the rebalance's status name) of a progress report;
    a bucket is done when it COMPLETED (or ended FAILED / CANCELED)."""
    buckets = [b for t in progress.tables for b in t.buckets]
    ended = (RebalanceStatus.COMPLETED, RebalanceStatus.FAILED, RebalanceStatus.CANCELED)
    done = sum(1 for b in buckets if b.status in ended)
    status = progress.status
    if status is None:
        name = "NONE"
    else:
        name = status.name if isinstance(status, RebalanceStatus) else f"status {status}"
    return done, len(buckets), name


# =========================================================================== configs


def plan_config(
    configs: Iterable[ConfigEntry], key: str, value: str | None, *, delete: bool = False
) -> Plan:
    """``config set KEY VALUE`` / ``config delete KEY``, with the current value and source.

    Which keys may change is the server's rule (it differs by generation): a key it does
    not take dynamically comes back as its error, nothing changed."""
    checked_config_key(key)
    current = {c.key: c for c in configs}.get(key)
    before = None if current is None else current.value
    source = None if current is None else current.source
    if delete and (current is None or current.source != "DYNAMIC_SERVER_CONFIG"):
        raise ActionInputError(f"config {key} has no dynamic value to delete")
    notes = [f"source now: {source or '(not set)'}"]
    if before is not None:
        notes.append(f"undo: konsole admin config set {key} {before}")
    elif not delete:
        notes.append(f"undo: konsole admin config delete {key}")
    return Plan(
        "config delete" if delete else "config set",
        "config",
        key,
        ("ALTER_CLUSTER_CONFIGS",),
        {"key": key, "op": "DELETE" if delete else "SET"} | ({} if delete else {"value": value}),
        (Change(key, before, None if delete else value),),
        notes=tuple(notes),
    )


# =========================================================================== tables


def parse_assignments(text: str, what: str) -> dict[str, str]:
    """``k=v[,k2=v2]`` into a dict; ActionInputError for anything else."""
    out: dict[str, str] = {}
    for part in text.split(","):
        k, sep, v = part.partition("=")
        if not sep or not k.strip() or not v.strip():
            raise ActionInputError(f"{what} must be KEY=VALUE[,KEY=VALUE]: {text!r}")
        out[k.strip()] = v.strip()
    return out


def _table(view: ClusterView, name: str) -> Any:
    try:
        return view.table(name)
    except (KeyError, ValueError):
        raise ActionInputError(f"unknown table {name}") from None


def plan_partition(view: ClusterView, table: str, spec_text: str, *, drop: bool) -> Plan:
    """``partition create|drop DB.TABLE k=v``: the spec must name the table's partition keys."""
    tv = _table(view, table)
    if tv.info is None or not tv.info.partition_keys:
        raise ActionInputError(f"table {table} is not partitioned")
    spec = parse_assignments(spec_text, "a partition spec")
    keys = tuple(tv.info.partition_keys)
    if set(spec) != set(keys):
        raise ActionInputError(
            f"partition spec of {table} must name {', '.join(keys)}, got {', '.join(spec)}"
        )
    name = "$".join(spec[k] for k in keys)
    exists = any(p.name == name for p in tv.partitions)
    if drop and not exists:
        raise ActionInputError(f"table {table} has no partition {name}")
    if not drop and exists:
        raise ActionInputError(f"table {table} already has partition {name}")
    return Plan(
        "partition drop" if drop else "partition create",
        "partition",
        f"{table}[{name}]",
        ("DROP_PARTITION" if drop else "CREATE_PARTITION",),
        {"table": table, "spec": spec},
        (Change(f"partition {name}", "exists" if drop else None, None if drop else "exists"),),
        notes=(
            "undo: create it again (its data is gone)"
            if drop
            else f"undo: konsole admin partition drop {table} {spec_text}",
        ),
    )


def plan_table_set(view: ClusterView, table: str, assignment: str) -> Plan:
    """``table set DB.TABLE KEY=VALUE``: AlterTable's SET of one property."""
    tv = _table(view, table)
    # One KEY=VALUE; the value may hold commas and "=" (column lists, durations).
    key, sep, value = (part.strip() for part in assignment.partition("="))
    if not sep or not key or not value:
        raise ActionInputError(f"a table property is KEY=VALUE, got {assignment!r}")
    props: Mapping[str, str] = {}
    if tv.info is not None:
        props = {**tv.info.properties, **tv.info.custom_properties}
    before = props.get(key)
    undo = f"konsole admin table set {table} {key}={before}" if before is not None else None
    return Plan(
        "table set",
        "table",
        table,
        ("ALTER_TABLE",),
        {"table": table, "key": key, "value": value, "op": "SET"},
        (Change(key, before, value),),
        notes=(f"undo: {undo}",) if undo else (),
    )


# =========================================================================== ACLs


def parse_principal(text: str) -> tuple[str, str]:
    """``User:alice`` into (type, name); ActionInputError for an unknown type."""
    kind, sep, name = text.partition(":")
    if not sep or not name:
        raise ActionInputError(f"a principal is TYPE:NAME (e.g. User:alice), got {text!r}")
    if kind not in ACL_PRINCIPAL_TYPES:
        raise ActionInputError(
            f"unknown principal type {kind!r} (known: {', '.join(sorted(ACL_PRINCIPAL_TYPES))})"
        )
    return kind, name


def parse_resource(text: str) -> tuple[int, str]:
    """``cluster``, ``database:NAME`` or ``table:DB.TABLE`` into (type code, name)."""
    kind, _, name = text.partition(":")
    code = ACL_RESOURCES.get(kind.lower())
    if code is None or (code != ACL_RESOURCES["cluster"] and not name):
        raise ActionInputError(
            f"a resource is cluster, database:NAME or table:DB.TABLE, got {text!r}"
        )
    if code == ACL_RESOURCES["cluster"]:
        return code, "fluss-cluster"
    from konsole.model.names import invalid_name  # Fluss's rule, kept in one place

    parts = name.split(".") if code == ACL_RESOURCES["table"] else [name]
    if code == ACL_RESOURCES["table"] and len(parts) != 2:
        raise ActionInputError(f"a table resource is table:DB.TABLE, got {text!r}")
    for part in parts:  # Fluss's name rule: refused here, before connecting
        if (why := invalid_name(part)) is not None:
            raise ActionInputError(f"resource {text!r}: name {part!r} is invalid: {why}")
    return code, name


def checked_config_key(key: str) -> str:
    """A config key as Fluss names them: not empty, no blanks (ActionInputError)."""
    if not key or any(c.isspace() for c in key):
        raise ActionInputError(f"not a config key: {key!r}")
    return key


def plan_acl(resource: str, principal: str, operation: str, host: str, *, drop: bool) -> Plan:
    """Creating (or dropping) one ALLOW binding; ActionInputError for a principal type, a
    resource or an operation Fluss does not know."""
    parse_principal(principal)
    parse_resource(resource)
    if operation.upper() not in ACL_OPERATIONS:
        raise ActionInputError(f"unknown ACL operation {operation!r}")
    return Plan(
        "acl drop" if drop else "acl create",
        "acl",
        f"{principal}@{resource}",
        ("DROP_ACLS" if drop else "CREATE_ACLS",),
        {"resource": resource, "principal": principal, "operation": operation.upper()}
        | {"host": host, "permission": "ALLOW"},
    )


# =========================================================================== audit


_SEVERITY: Mapping[Outcome, Severity] = MappingProxyType(
    {
        Outcome.PLANNED: Severity.INFO,
        Outcome.SENT: Severity.INFO,
        Outcome.SUCCEEDED: Severity.INFO,
        Outcome.LEFT_RUNNING: Severity.WARNING,
        Outcome.REFUSED: Severity.WARNING,
        Outcome.FAILED: Severity.CRITICAL,
    }
)


def audit_event(
    plan: Plan,
    outcome: Outcome,
    *,
    who: str,
    at: float,
    error: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Event:
    """The ``operator`` event of ``plan`` reaching ``outcome``."""
    details: dict[str, Any] = {
        "action": plan.action,
        "outcome": outcome.value,
        "who": who,
        "sends": list(plan.sends),
        "params": dict(plan.params),
        "changes": [{"what": c.what, "before": c.before, "after": c.after} for c in plan.changes],
    }
    if error is not None:
        details["error"] = error
    if outcome is Outcome.REFUSED:
        details["refusals"] = [r.reason for r in plan.refusals]
    details.update(extra or {})
    message = f"{plan.action} {plan.subject}: {outcome.value} by {who}"
    if error:
        message += f": {error}"
    return Event(
        time=at,
        kind=EventKind.OPERATOR,
        severity=_SEVERITY[outcome],
        subject=Subject(plan.subject_kind, _subject_name(plan)),
        message=message,
        details=details,
    )


def _subject_name(plan: Plan) -> str:
    """The event's subject as the timeline names it (a server, a table jump on enter)."""
    if plan.subject_kind == "server":
        return subjects.tablet_server(plan.subject)
    if plan.subject_kind in ("config", "acl"):
        return f"{plan.subject_kind} {plan.subject}"
    return plan.subject

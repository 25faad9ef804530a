"""The one way an operator action is carried out: request -> plan -> send -> follow -> audit.

``konsole admin`` and the console only build an :class:`ActionRequest` and show what comes
back (a plan, an outcome line, progress); :class:`ActionService` plans it and carries it
out through :class:`~konsole.collect.actions.runner.ActionRunner` (the rails, the confirmation,
the bounded follow and the audit in the history). :data:`KINDS` is the one dispatch table:
each kind's planner and sender.

Clients: a write needs a client with the operator actions' write grant, opened for that one
action and closed after (and only for a profile with ``writes = true``, refused before
connecting otherwise). Reads (the configs, the rebalance's progress, the look a plan is
computed from) go over one read-only client the service holds for whoever reads
(:meth:`ActionService.reads`): opened at the first read, shared by every holder (the
console's Config and Rebalance screens), closed when the last holder lets go.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from konsole.collect.actions.runner import (
    ActionRunner,
    Audit,
    Operator,
    Options,
    require_writes,
)
from konsole.collect.profiles import Profile
from konsole.errors import ActionFailedError, ActionInputError
from konsole.model.actions import Plan

if TYPE_CHECKING:
    from fluss_proto.client import FlussClient
    from fluss_proto.model import AclListing, ConfigEntry, RebalanceProgress
    from konsole.collect.cluster.upgrade_reads import NotesInputs
    from konsole.model.snapshot import ClusterSnapshot

__all__ = [
    "DRAIN_GOALS",
    "KINDS",
    "ActionRequest",
    "ActionService",
    "ConfirmedOperator",
    "OpenClient",
    "Progress",
    "ReadLease",
    "connect_for",
]

#: The goals a drain rebalances with unless told otherwise (the CLI's default too).
DRAIN_GOALS = "REPLICA_DISTRIBUTION,LEADER_DISTRIBUTION"

#: (buckets done, buckets in the plan, the rebalance's status) as it moves.
Progress = Callable[[int, int, str], None]


class OpenClient(Protocol):
    """Opens a client for the service: with the operator actions' write grant, or read-only."""

    def __call__(self, *, writes: bool) -> Awaitable[FlussClient]: ...


def connect_for(profile: Profile) -> OpenClient:
    """The profile's clients: its bootstrap, credentials and timeouts; a write client holds
    exactly the operator actions' write grant."""

    async def open_client(*, writes: bool) -> FlussClient:
        from fluss_proto.api_keys import OPERATOR_ACTIONS
        from konsole.collect.cluster.target import connect_client

        return await connect_client(
            profile,
            allow_writes=OPERATOR_ACTIONS if writes else False,
            connect_timeout=profile.connect_timeout,
        )

    return open_client


@dataclass(frozen=True, slots=True)
class ActionRequest:
    """One action as a face asks for it (typed input, not yet checked).

    ``target``: the server id, the table (``db.table``), the config key, the ACL's resource
    or the rebalance id named, empty for the cluster. ``value``: the goals (comma-joined),
    the server tag, the config value, the partition spec (``k=v[,k=v]``), the table
    property (``KEY=VALUE``) or the ACL's principal. ``operation`` and ``host``: an ACL's.
    """

    kind: str
    target: str = ""
    value: str = ""
    operation: str = ""
    host: str = "*"

    def with_value(self, typed: str) -> ActionRequest:
        """The request with the value the operator typed; a config set without a key
        takes ``KEY=VALUE`` (ActionInputError otherwise)."""
        if self.kind == "config-set" and not self.target:
            key, sep, value = (part.strip() for part in typed.partition("="))
            if not sep or not key or not value:
                raise ActionInputError(f"a config is KEY=VALUE, got {typed!r}")
            return replace(self, target=key, value=value)
        return replace(self, value=typed)


@dataclass
class ConfirmedOperator:
    """The runner's face when the face confirmed already (the console's modal): nothing to
    show or ask; progress goes to ``progress_to``."""

    progress_to: Progress

    def show(self, lines: Sequence[str]) -> None:
        pass

    def confirm(self, plan: Plan) -> bool:
        return True

    def progress(self, progress: RebalanceProgress) -> None:
        from konsole.model.actions import progress_counts

        self.progress_to(*progress_counts(progress))


# =========================================================================== held reads


class _HeldClient:
    """One read-only client for every lease: opened at the first read, closed when the
    last lease closes (the client reconnects a dropped connection itself)."""

    def __init__(self, profile: Profile, open_client: OpenClient) -> None:
        self.profile = profile
        self._open = open_client
        self._client: FlussClient | None = None
        self._leases = 0
        #: Clients opened and closed so far (what the tests count).
        self.opened = 0
        self.closed = 0
        # Two reads at once (a key pressed during a timer's read) share one connect.
        self._lock = asyncio.Lock()

    def lease(self) -> ReadLease:
        self._leases += 1
        return ReadLease(self)

    async def client(self) -> FlussClient:
        async with self._lock:
            if self._client is None:
                self._client = await self._open(writes=False)
                self.opened += 1
            return self._client

    async def release(self) -> None:
        async with self._lock:
            self._leases -= 1
            if self._leases > 0:
                return
            client, self._client = self._client, None
        if client is not None:
            self.closed += 1
            await client.close()


class ReadLease:
    """A holder's share of the service's read client, until :meth:`aclose` (a read after
    it raises: it opens nothing)."""

    def __init__(self, held: _HeldClient) -> None:
        self._held = held
        self._closed = False

    async def _client(self) -> FlussClient:
        if self._closed:
            raise ActionFailedError("the reads were closed")
        return await self._held.client()

    async def progress(self) -> RebalanceProgress:
        """The current or last rebalance (ListRebalanceProgress)."""
        from fluss_proto.admin import FlussAdmin

        return await FlussAdmin(await self._client()).rebalance_progress()

    async def configs(self) -> Sequence[ConfigEntry]:
        """The cluster's configs (DescribeClusterConfigs)."""
        from fluss_proto.admin import FlussAdmin

        return list(await FlussAdmin(await self._client()).cluster_configs())

    async def acls(self) -> AclListing:
        """The ACLs the cluster holds (ListAcls; an unsecured cluster says so)."""
        from fluss_proto.admin import FlussAdmin

        return await FlussAdmin(await self._client()).list_acls()

    async def notes_inputs(self, snapshot: ClusterSnapshot) -> NotesInputs:
        """The ACLs and every server's configs, for the 1.0 upgrade notes (reads)."""
        from fluss_proto.admin import FlussAdmin
        from konsole.collect.cluster.upgrade_reads import read_notes_inputs

        return await read_notes_inputs(FlussAdmin(await self._client()), snapshot)

    async def runner(self, audit: Audit, operator: Operator, options: Options) -> ActionRunner:
        """A runner over the held client (reads only: it holds no write grant)."""
        return _Borrowed(self._held.profile, await self._client(), audit, operator, options)

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._held.release()


class _Borrowed(ActionRunner):
    """A runner over a client it does not own: closing it leaves the client open."""

    async def aclose(self) -> None:
        return None


# =========================================================================== the service


class ActionService:
    """The operator actions on the cluster of ``profile``, audited into ``history``."""

    def __init__(
        self,
        profile: Profile | None,
        history: Path | None,
        *,
        open_client: OpenClient | None = None,
    ) -> None:
        self.profile = profile
        self.history = history
        self.audit = Audit(history)
        self._open = open_client or (connect_for(profile) if profile is not None else None)
        self._held = (
            _HeldClient(profile, self._open)
            if profile is not None and self._open is not None
            else None
        )

    def unavailable(self) -> str | None:
        """Why the writing actions are off (None: they may be offered)."""
        if self.profile is None:
            return "actions need a cluster profile"
        if not self.profile.writes:
            return f"read-only: profile {self.profile.name!r} has no `writes = true`"
        return None

    def read_clients(self) -> tuple[int, int]:
        """Read clients (opened, closed) so far."""
        return (0, 0) if self._held is None else (self._held.opened, self._held.closed)

    def reads(self) -> ReadLease:
        """A share of the one read client, for a holder that reads again and again."""
        if self._held is None:
            raise ActionFailedError("actions need a cluster profile")
        return self._held.lease()

    # ------------------------------------------------------------------ reads

    async def configs(self) -> Sequence[ConfigEntry]:
        lease = self.reads()
        try:
            return await lease.configs()
        finally:
            await lease.aclose()

    async def acls(self) -> AclListing:
        lease = self.reads()
        try:
            return await lease.acls()
        finally:
            await lease.aclose()

    async def plan(self, request: ActionRequest) -> Plan:
        """The plan of ``request`` from a look at the cluster (nothing is sent, nothing
        audited). Raises ActionInputError for a kind or input the cluster does not have."""
        kind = _kind(request)
        lease = self.reads()
        try:
            runner = await lease.runner(Audit(None), ConfirmedOperator(_ignore), Options())
            return await kind.plan(runner, request)
        finally:
            await lease.aclose()

    async def follow(
        self,
        rebalance_id: str | None,
        operator: Operator,
        options: Options,
        *,
        stop: asyncio.Event | None = None,
    ) -> RebalanceProgress:
        """A rebalance's progress until it ends; raises (as ``check_ended``) when the wait
        ended first."""
        lease = self.reads()
        try:
            runner = await lease.runner(Audit(None), operator, options)
            if stop is not None:
                runner.stop = stop
            progress = await runner.follow(rebalance_id)
            runner.check_ended(None, rebalance_id, progress)
            return progress
        finally:
            await lease.aclose()

    # ------------------------------------------------------------------ writes

    async def run(
        self,
        request: ActionRequest,
        operator: Operator,
        options: Options,
        *,
        stop: asyncio.Event | None = None,
    ) -> str | None:
        """Plan, check, confirm, send, follow and audit ``request`` over a client of its
        own with the write grant; the outcome as one line (None: a dry run)."""
        kind = _kind(request)
        if self.profile is None or self._open is None:
            raise ActionFailedError("actions need a cluster profile")
        require_writes(self.profile)
        client = await self._open(writes=True)
        runner = ActionRunner(self.profile, client, self.audit, operator, options)
        if stop is not None:
            runner.stop = stop
        try:
            if kind.act is not None:
                return await kind.act(runner, request)
            plan = await kind.plan(runner, request)
            if not runner.prepare(plan):
                return None
            assert kind.send is not None
            return await kind.send(runner, request, plan)
        finally:
            await runner.aclose()

    async def execute(self, request: ActionRequest, progress: Progress) -> str:
        """Carry out a request the face confirmed already (the console's modal)."""
        return await self.run(request, ConfirmedOperator(progress), Options(yes=True)) or ""


def _ignore(done: int, total: int, status: str) -> None:
    return None


# =========================================================================== the kinds

Planner = Callable[[ActionRunner, ActionRequest], Awaitable[Plan]]
Sender = Callable[[ActionRunner, ActionRequest, Plan], Awaitable[str]]


@dataclass(frozen=True)
class Kind:
    """How one kind of request is planned and sent (``act``: a flow of several sends that
    plans and confirms itself)."""

    plan: Planner
    send: Sender | None = None
    act: Callable[[ActionRunner, ActionRequest], Awaitable[str | None]] | None = None


def _kind(request: ActionRequest) -> Kind:
    kind = KINDS.get(request.kind)
    if kind is None:
        raise ActionInputError(f"unknown action {request.kind!r}")
    return kind


def _server_id(request: ActionRequest) -> int:
    try:
        return int(request.target)
    except ValueError:
        raise ActionInputError(f"a server id is a number, got {request.target!r}") from None


def _goal_names(request: ActionRequest) -> list[str]:
    from fluss_proto.actions import Goal

    names = [g for g in request.value.split(",") if g]
    if not names:
        raise ActionInputError("choose at least one rebalance goal")
    unknown = [g for g in names if g not in Goal.__members__]
    if unknown:
        raise ActionInputError(f"unknown rebalance goal {unknown[0]!r}")
    return names


async def _plan_drain(runner: ActionRunner, request: ActionRequest) -> Plan:
    from konsole.model.actions import plan_drain

    look = await runner.look()
    goals = _goal_names(request)
    sid = _server_id(request)
    return plan_drain(
        look.view, look.placement, sid, health=look.health, running=look.running, goals=goals
    )


async def _drain(runner: ActionRunner, request: ActionRequest) -> str | None:
    from fluss_proto.actions import Goal

    sid = _server_id(request)
    progress = await runner.drain(sid, [Goal[g] for g in _goal_names(request)])
    return None if progress is None else f"server {sid} drained: it holds no replica"


async def _plan_retire(runner: ActionRunner, request: ActionRequest) -> Plan:
    from konsole.collect.history.server_memory import recall
    from konsole.model.actions import plan_retire

    look = await runner.look()
    known = recall(runner.audit.path, runner.profile.known_servers)
    return plan_retire(look.view, look.placement, _server_id(request), known)


async def _send_retire(runner: ActionRunner, request: ActionRequest, plan: Plan) -> str:
    async def nothing() -> None:  # the audit's succeeded event is the retirement
        return None

    sid = _server_id(request)
    await runner.send(plan, nothing)
    if runner.audit.path is None or runner.audit.trouble:
        why = runner.audit.trouble[0] if runner.audit.trouble else "no history file"
        raise ActionFailedError(f"server retire {sid}: not recorded ({why})")
    done = f"server {sid} retired: no face judges it gone any more"
    runner.operator.show([done])
    return done


async def _plan_tag(runner: ActionRunner, request: ActionRequest) -> Plan:
    from fluss_proto.actions import ServerTag
    from konsole.model.actions import plan_tag

    if request.value not in ServerTag.__members__:
        raise ActionInputError(f"unknown server tag {request.value!r}")
    look = await runner.look()
    remove = request.kind == "server-untag"
    return plan_tag(look.view, _server_id(request), request.value, remove=remove)


async def _send_tag(runner: ActionRunner, request: ActionRequest, plan: Plan) -> str:
    from fluss_proto.actions import ServerTag

    sid, tag = _server_id(request), ServerTag[request.value]
    remove = request.kind == "server-untag"
    send = runner.actions.remove_server_tag if remove else runner.actions.add_server_tag
    await runner.send(plan, lambda: send([sid], tag))
    return f"server {sid} {'untagged' if remove else 'tagged'}"


async def _plan_rebalance(runner: ActionRunner, request: ActionRequest) -> Plan:
    from konsole.model.actions import plan_rebalance

    goals = _goal_names(request)
    look = await runner.look()
    return plan_rebalance(look.placement, health=look.health, running=look.running, goals=goals)


async def _send_rebalance(runner: ActionRunner, request: ActionRequest, plan: Plan) -> str:
    from fluss_proto.actions import Goal

    goals = [Goal[g] for g in plan.params["goals"]]
    rebalance_id = await runner.send(plan, lambda: runner.actions.rebalance(goals))
    runner.operator.show([f"rebalance {rebalance_id} started"])
    runner.check_ended(plan, rebalance_id, await runner.follow(rebalance_id))
    return f"rebalance {rebalance_id} ended"


async def _plan_cancel(runner: ActionRunner, request: ActionRequest) -> Plan:
    from konsole.model.actions import plan_cancel

    return plan_cancel(await runner.running(), request.target or None)


async def _send_cancel(runner: ActionRunner, request: ActionRequest, plan: Plan) -> str:
    target = plan.params["rebalance_id"]
    await runner.send(plan, lambda: runner.actions.cancel_rebalance(target))
    return f"rebalance {target or ''} cancelled".replace("  ", " ")


async def _plan_config(runner: ActionRunner, request: ActionRequest) -> Plan:
    from konsole.model.actions import plan_config

    delete = request.kind == "config-delete"
    configs = await runner.admin.cluster_configs()
    return plan_config(configs, request.target, None if delete else request.value, delete=delete)


async def _send_config(runner: ActionRunner, request: ActionRequest, plan: Plan) -> str:
    from fluss_proto.actions import AlterOp, ConfigChange

    delete = request.kind == "config-delete"
    op = AlterOp.DELETE if delete else AlterOp.SET
    change = ConfigChange(request.target, None if delete else request.value, op)
    await runner.send(plan, lambda: runner.actions.alter_cluster_configs([change]))
    return f"config {request.target} {'deleted' if delete else 'set'}"


async def _plan_partition(runner: ActionRunner, request: ActionRequest) -> Plan:
    from konsole.model.actions import plan_partition

    look = await runner.look()
    drop = request.kind == "partition-drop"
    return plan_partition(look.view, request.target, request.value, drop=drop)


async def _send_partition(runner: ActionRunner, request: ActionRequest, plan: Plan) -> str:
    from konsole.model.actions import parse_assignments

    values = parse_assignments(request.value, "a partition spec")
    drop = request.kind == "partition-drop"
    send = runner.actions.drop_partition if drop else runner.actions.create_partition
    await runner.send(plan, lambda: send(request.target, values))
    return f"{plan.subject} {'dropped' if drop else 'created'}"


async def _plan_table_set(runner: ActionRunner, request: ActionRequest) -> Plan:
    from konsole.model.actions import plan_table_set

    look = await runner.look()
    return plan_table_set(look.view, request.target, request.value)


async def _send_table_set(runner: ActionRunner, request: ActionRequest, plan: Plan) -> str:
    from fluss_proto.actions import ConfigChange

    change = ConfigChange(str(plan.params["key"]), str(plan.params["value"]))
    await runner.send(plan, lambda: runner.actions.alter_table_properties(request.target, [change]))
    return f"{request.target}: {plan.params['key']} set"


async def _plan_acl(runner: ActionRunner, request: ActionRequest) -> Plan:
    from konsole.model.actions import plan_acl

    drop = request.kind == "acl-drop"
    return plan_acl(request.target, request.value, request.operation, request.host, drop=drop)


async def _send_acl(runner: ActionRunner, request: ActionRequest, plan: Plan) -> str:
    from fluss_proto.model import AclBinding, AclFilter, OperationType, ResourceType
    from konsole.model.actions import ACL_OPERATIONS, parse_principal, parse_resource

    kind, name = parse_principal(request.value)
    rtype, rname = parse_resource(request.target)
    op = ACL_OPERATIONS[request.operation.upper()]
    drop = request.kind == "acl-drop"

    async def send() -> None:
        if drop:
            flt = AclFilter(ResourceType(rtype), rname, name, kind, request.host, OperationType(op))
            results: Sequence[Any] = await runner.actions.drop_acls([flt])
        else:
            binding = AclBinding(rtype, rname, name, kind, request.host, op, 2)
            results = await runner.actions.create_acls([binding])
        bad = [r for r in results if r.error_code]
        if bad:
            raise ActionFailedError(f"{plan.action}: {bad[0].error_message}")
        runner.operator.show([f"{plan.action}: {len(results)} binding(s)"])

    await runner.send(plan, send)
    return f"{plan.action} {plan.subject}"


#: The one dispatch table: every action a face may request (docs/actions.md).
KINDS: dict[str, Kind] = {
    "server-drain": Kind(_plan_drain, act=_drain),
    "server-tag": Kind(_plan_tag, _send_tag),
    "server-untag": Kind(_plan_tag, _send_tag),
    "server-retire": Kind(_plan_retire, _send_retire),
    "rebalance": Kind(_plan_rebalance, _send_rebalance),
    "rebalance-cancel": Kind(_plan_cancel, _send_cancel),
    "config-set": Kind(_plan_config, _send_config),
    "config-delete": Kind(_plan_config, _send_config),
    "partition-create": Kind(_plan_partition, _send_partition),
    "partition-drop": Kind(_plan_partition, _send_partition),
    "table-set": Kind(_plan_table_set, _send_table_set),
    "acl-create": Kind(_plan_acl, _send_acl),
    "acl-drop": Kind(_plan_acl, _send_acl),
}

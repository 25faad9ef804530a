"""Operator actions the console offers beyond one server: rebalance, configs, partitions,
table properties.

:class:`ClusterActions` is what the Rebalance and Config screens, the Tables screen and the
confirmation modal ask (the app hands one out; tests hand a fake): why actions are off,
what the cluster holds (configs, the rebalance's progress: reads, no opt-in needed), the
plan of one :class:`ActionRequest`, and carrying it out. :class:`LiveClusterActions` does
it through :mod:`konsole.collect.actions`, the same plans, rails and audit as
``konsole admin``; each call opens its own client (with the write grant only to send, and
only for a profile with ``writes = true``) and closes it after.

A screen that reads again and again (the Rebalance screen's progress, every few seconds)
holds :meth:`ClusterActions.reads` instead: :class:`HeldReads` opens one read-only client
at its first read, keeps it (the client reconnects a dropped connection itself) and closes
it in :meth:`HeldReads.aclose`, when the screen closes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from konsole.collect.profiles import Profile
from konsole.model.actions import Plan
from konsole.ui.actions import LiveServerActions, Progress, _Operator

if TYPE_CHECKING:
    from fluss_proto.model import ConfigEntry, RebalanceProgress
    from konsole.collect.actions import ActionRunner

__all__ = [
    "GOALS",
    "ActionRequest",
    "ClusterActions",
    "ClusterReads",
    "HeldReads",
    "LiveClusterActions",
    "cancel_plan",
]

#: The rebalance goals a server takes, in the order the Rebalance screen offers them.
GOALS: tuple[str, ...] = ("REPLICA_DISTRIBUTION", "LEADER_DISTRIBUTION", "RACK_AWARE")

#: Request kinds: what each sends is in docs/actions.md.
KINDS = frozenset(
    {
        "rebalance",
        "rebalance-cancel",
        "config-set",
        "config-delete",
        "partition-create",
        "partition-drop",
        "table-set",
    }
)


@dataclass(frozen=True, slots=True)
class ActionRequest:
    """One action as the console asks for it (typed input, not yet checked).

    ``target`` is the table (``db.table``) or config key, empty for the cluster;
    ``value`` the goals (comma-joined), the config value, the partition spec
    (``k=v[,k=v]``) or the table property (``KEY=VALUE``)."""

    kind: str
    target: str = ""
    value: str = ""

    def with_value(self, typed: str) -> ActionRequest:
        """The request with the value the operator typed; a config set without a key
        takes ``KEY=VALUE`` (ActionInputError otherwise)."""
        if self.kind == "config-set" and not self.target:
            key, sep, value = (part.strip() for part in typed.partition("="))
            if not sep or not key or not value:
                from konsole.errors import ActionInputError

                raise ActionInputError(f"a config is KEY=VALUE, got {typed!r}")
            return replace(self, target=key, value=value)
        return replace(self, value=typed)


def cancel_plan(running: str | None) -> Plan:
    """Cancelling the current rebalance; the subject typed is ``rebalance``."""
    return Plan(
        "rebalance cancel",
        "cluster",
        "rebalance",
        ("CANCEL_REBALANCE",),
        {"rebalance_id": running},
        notes=(
            (f"cancels rebalance {running}; moves already done stay",)
            if running
            else ("no rebalance is running: the server will say so",)
        ),
    )


class ClusterReads(Protocol):
    """Reads over one client its holder keeps (see :meth:`ClusterActions.reads`)."""

    async def progress(self) -> RebalanceProgress:
        """The current or last rebalance (ListRebalanceProgress; a read)."""
        ...

    async def aclose(self) -> None:
        """Close the client, if one was opened (the holder is done reading)."""
        ...


class ClusterActions(Protocol):
    def reads(self) -> ClusterReads:
        """Reads for a holder that asks again and again: one client for its life at most."""
        ...

    def unavailable(self) -> str | None:
        """Why the writing actions are off (None: they may be offered)."""
        ...

    async def configs(self) -> Sequence[ConfigEntry]:
        """The cluster's configs (DescribeClusterConfigs; a read)."""
        ...

    async def plan(self, request: ActionRequest) -> Plan:
        """The plan (raises konsole.errors.ActionError for bad input)."""
        ...

    async def execute(self, request: ActionRequest, progress: Progress) -> str:
        """Carry it out; the outcome as one line (raises ActionError when it fails)."""
        ...


class LiveClusterActions:
    """The real cluster's actions, for the profile the console watches (the opt-in and the
    write-granted runner are the server actions')."""

    def __init__(self, profile: Profile | None, history: Path | None) -> None:
        self.profile = profile
        self._writes = LiveServerActions(profile, history)

    def unavailable(self) -> str | None:
        return self._writes.unavailable()

    def reads(self) -> HeldReads:
        return HeldReads(self.profile)

    async def _read(self, body: Callable[[ActionRunner], Awaitable[object]]) -> object:
        from konsole.collect.actions import Audit, Options, open_runner

        if self.profile is None:
            from konsole.errors import ActionFailedError

            raise ActionFailedError("actions need a cluster profile")
        operator = _Operator(lambda done, total, status: None)
        runner = await open_runner(
            self.profile, Audit(None), operator, Options(yes=True), writes=False
        )
        try:
            return await body(runner)
        finally:
            await runner.aclose()

    async def configs(self) -> Sequence[ConfigEntry]:
        async def body(runner: ActionRunner) -> object:
            return await runner.admin.cluster_configs()

        return list(await self._read(body))  # type: ignore[call-overload]

    async def plan(self, request: ActionRequest) -> Plan:
        runner = await self._writes._runner()
        try:
            return await _plan(runner, request)
        finally:
            await runner.aclose()

    async def execute(self, request: ActionRequest, progress: Progress) -> str:
        runner = await self._writes._runner(progress)
        try:
            return await _execute(runner, request)
        finally:
            await runner.aclose()


class HeldReads:
    """The cluster's reads over one read-only client, opened at the first read and kept
    until :meth:`aclose` (a read after it opens none: it raises)."""

    def __init__(self, profile: Profile | None) -> None:
        self.profile = profile
        #: Clients opened so far (0 or 1: what the live tests count).
        self.opened = 0
        self._runner: ActionRunner | None = None
        self._closed = False
        # Two reads at once (a key pressed during the timer's read) share one connect.
        self._lock = asyncio.Lock()

    async def _held(self) -> ActionRunner:
        from konsole.errors import ActionFailedError

        async with self._lock:
            if self._closed:
                raise ActionFailedError("the reads were closed")
            if self._runner is None:
                from konsole.collect.actions import Audit, Options, open_runner

                if self.profile is None:
                    raise ActionFailedError("actions need a cluster profile")
                operator = _Operator(lambda done, total, status: None)
                self._runner = await open_runner(
                    self.profile, Audit(None), operator, Options(yes=True), writes=False
                )
                self.opened += 1
            return self._runner

    async def progress(self) -> RebalanceProgress:
        return await (await self._held()).admin.rebalance_progress()

    async def aclose(self) -> None:
        async with self._lock:
            self._closed = True
            runner, self._runner = self._runner, None
        if runner is not None:
            await runner.aclose()


async def _plan(runner: ActionRunner, request: ActionRequest) -> Plan:
    from konsole.errors import ActionInputError
    from konsole.model.actions import plan_config, plan_partition, plan_rebalance, plan_table_set

    kind = request.kind
    if kind not in KINDS:
        raise ActionInputError(f"unknown action {kind!r}")
    if kind.startswith("config-"):
        configs = await runner.admin.cluster_configs()
        delete = kind == "config-delete"
        return plan_config(configs, request.target, request.value or None, delete=delete)
    if kind == "rebalance-cancel":
        return cancel_plan(await runner.running())
    look = await runner.look()
    if kind == "rebalance":
        goals = [g for g in request.value.split(",") if g]
        if not goals:
            raise ActionInputError("choose at least one rebalance goal")
        return plan_rebalance(look.view, health=look.health, running=look.running, goals=goals)
    if kind.startswith("partition-"):
        drop = kind == "partition-drop"
        return plan_partition(look.view, request.target, request.value, drop=drop)
    return plan_table_set(look.view, request.target, request.value)


async def _execute(runner: ActionRunner, request: ActionRequest) -> str:
    from fluss_proto.actions import AlterOp, ConfigChange, Goal
    from konsole.model.actions import parse_assignments

    plan = await _plan(runner, request)
    kind, target = request.kind, request.target
    if kind == "rebalance":
        goals = [Goal[g] for g in plan.params["goals"]]
        rebalance_id = await runner.run(plan, lambda: runner.actions.rebalance(goals))
        runner.check_ended(plan, rebalance_id, await runner.follow(rebalance_id))
        return f"rebalance {rebalance_id} ended"
    if kind == "rebalance-cancel":
        running = plan.params["rebalance_id"]
        await runner.run(plan, lambda: runner.actions.cancel_rebalance(running))
        return f"rebalance {running or ''} cancelled".replace("  ", " ")
    if kind.startswith("config-"):
        delete = kind == "config-delete"
        op = AlterOp.DELETE if delete else AlterOp.SET
        change = ConfigChange(target, None if delete else request.value, op)
        await runner.run(plan, lambda: runner.actions.alter_cluster_configs([change]))
        return f"config {target} {'deleted' if delete else 'set'}"
    if kind.startswith("partition-"):
        values = parse_assignments(request.value, "a partition spec")
        drop = kind == "partition-drop"
        send = runner.actions.drop_partition if drop else runner.actions.create_partition
        await runner.run(plan, lambda: send(target, values))
        return f"{plan.subject} {'dropped' if drop else 'created'}"
    prop = ConfigChange(str(plan.params["key"]), str(plan.params["value"]))
    await runner.run(plan, lambda: runner.actions.alter_table_properties(target, [prop]))
    return f"{target}: {plan.params['key']} set"

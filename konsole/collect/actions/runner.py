"""Operator actions, carried out: look, plan, confirm, send, follow, and audit every step.

The flow of every action (:meth:`ActionRunner.run`): the plan is shown and written to the
history as ``planned``; a blocking safety rail writes ``refused`` and raises
:class:`~konsole.errors.ActionRefusedError`; ``dry_run`` stops there (nothing sent); an
unconfirmed plan is ``refused``; then ``sent`` and ``succeeded`` or ``failed`` (with the
server's error, first line). The write grant comes from the profile: without
``writes = true`` (``--allow-writes``) :func:`require_writes` refuses before anything
connects. The audit goes into the profile's history file (the one rule of
:mod:`konsole.collect.cluster.connect`) through :func:`store.add_event`, without the writer lock,
so it works beside a running ``konsole record``.

Waiting is bounded (``timeout``) and stoppable (``stop``, set on Ctrl-C): a stopped wait
leaves the server-side rebalance running and says how to follow or cancel it.
"""

from __future__ import annotations

import asyncio
import getpass
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from fluss_proto.actions import FlussActions, Goal, ServerTag
from fluss_proto.admin import FlussAdmin
from fluss_proto.client import FlussClient
from fluss_proto.errors import FlussError, ServerError
from fluss_proto.model import ClusterView, HealthStatus, RebalanceProgress, RebalanceStatus
from konsole.collect.profiles import Profile
from konsole.errors import (
    ActionFailedError,
    ActionInputError,
    ActionInterruptedError,
    ActionRefusedError,
    WritesNotAllowedError,
)
from konsole.model.actions import (
    Outcome,
    Plan,
    audit_event,
    plan_drain,
    plan_rebalance,
    plan_tag,
    replicas_on,
)
from konsole.model.events.base import Event
from konsole.model.placement import Placement

__all__ = [
    "ActionRunner",
    "Audit",
    "Look",
    "Operator",
    "Options",
    "operator_name",
    "require_writes",
    "server_error_text",
]

T = TypeVar("T")

#: Server error codes that mean the input named something wrong (nothing changed):
#: INVALID_CONFIG 39, PARTITION_NOT_EXISTS 36, TABLE_NOT_PARTITIONED 37,
#: PARTITION_ALREADY_EXISTS 42, PARTITION_SPEC_INVALID 43, INVALID_ALTER_TABLE 56,
#: SERVER_NOT_EXIST 58, SERVER_TAG_NOT_EXIST 60, CONFIG_EXCEPTION 64 (1.0).
_INPUT_CODES = frozenset({36, 37, 39, 42, 43, 56, 58, 60, 64})
#: The cluster's state is in the way: SERVER_TAG_ALREADY_EXIST 59 (remove the other tag
#: first), REBALANCE_FAILURE 61 ("already exists"), NO_REBALANCE_IN_PROGRESS 62.
_BUSY_CODES = frozenset({59, 61, 62})
_FINAL = frozenset(
    {
        RebalanceStatus.COMPLETED,
        RebalanceStatus.FAILED,
        RebalanceStatus.CANCELED,
        RebalanceStatus.TIMEOUT,
    }
)


def operator_name() -> str:
    """Who acts: ``user@host`` of this process (the audit's ``who``)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry, no LOGNAME
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def require_writes(profile: Profile) -> None:
    """Refuse (exit 77) before connecting unless the profile opted in to writes."""
    if not profile.writes:
        how = (
            f"set `writes = true` in profile {profile.name!r}"
            if profile.source == "profile"
            else "pass --allow-writes"
        )
        raise WritesNotAllowedError(f"read-only: {how} to act on this cluster; nothing was sent")


def server_error_text(exc: BaseException) -> str:
    """The first line of a server's error (Fluss 0.9.1 sends Java stack traces)."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _classify(exc: FlussError, what: str) -> Exception:
    text = f"{what}: {server_error_text(exc)}"
    if isinstance(exc, ServerError):
        if exc.code in _INPUT_CODES or "ConfigException" in str(exc):
            return ActionInputError(text)
        if exc.code in _BUSY_CODES:
            return ActionRefusedError(text)
    return ActionFailedError(text)


class Operator(Protocol):
    """What the runner asks of the face it runs under (the CLI's terminal; the console's
    confirmed modal: :class:`konsole.collect.actions.service.ConfirmedOperator`)."""

    def show(self, lines: Sequence[str]) -> None: ...

    def confirm(self, plan: Plan) -> bool: ...

    def progress(self, progress: RebalanceProgress) -> None: ...


@dataclass
class Audit:
    """Writes each step of an action to the history as an ``operator`` event."""

    path: Path | None
    who: str = field(default_factory=operator_name)
    clock: Callable[[], float] = time.time
    events: list[Event] = field(default_factory=list)
    #: Why a step could not be written (the action is never hidden: it is printed too).
    trouble: list[str] = field(default_factory=list)

    def record(
        self,
        plan: Plan,
        outcome: Outcome,
        *,
        error: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Event:
        event = audit_event(plan, outcome, who=self.who, at=self.clock(), error=error, extra=extra)
        self.events.append(event)
        if self.path is not None:
            from konsole.collect.history.rows import event_row
            from store import HistoryError, add_event

            try:
                add_event(self.path, event_row(event))
            except HistoryError as exc:
                self.trouble.append(str(exc))
        return event


@dataclass(frozen=True)
class Look:
    """What a plan is computed from: the view, its placement and health (as judged), the
    rebalance in progress."""

    view: ClusterView
    placement: Placement
    health: HealthStatus
    running: str | None


@dataclass
class Options:
    dry_run: bool = False
    yes: bool = False
    force: bool = False
    #: Bound on following a rebalance, and the pause between progress reads.
    timeout: float = 300.0
    interval: float = 0.5


class ActionRunner:
    """One connected session of operator actions (a client holding the write grant)."""

    def __init__(
        self,
        profile: Profile,
        client: FlussClient,
        audit: Audit,
        operator: Operator,
        options: Options,
    ) -> None:
        self.profile = profile
        self.client = client
        self.admin = FlussAdmin(client)
        self.actions = FlussActions(client)
        self.audit = audit
        self.operator = operator
        self.options = options
        self.stop = asyncio.Event()

    async def aclose(self) -> None:
        await self.client.close()

    # ------------------------------------------------------------------ looking

    async def look(self) -> Look:
        """One poll through the profile's poller, judged as ``check`` judges its look
        (:func:`~konsole.model.poll.judge_look`), and the rebalance the coordinator reports."""
        from konsole.collect.cluster.connect import build_poller
        from konsole.model.poll import judge_look

        poller, release = build_poller(self.profile, None)
        try:
            snapshot = await poller.poll()
        finally:
            await release()
        if snapshot.view is None:
            raise ActionFailedError(f"cannot read the cluster: {snapshot.error}")
        judged = judge_look(snapshot, self.profile.health)
        assert judged.placement is not None  # a poll with a view
        return Look(snapshot.view, judged.placement, judged.health.status, await self.running())

    async def running(self) -> str | None:
        progress = await self.admin.rebalance_progress()
        if progress.status in (RebalanceStatus.NOT_STARTED, RebalanceStatus.REBALANCING):
            return progress.rebalance_id or "(unnamed)"
        return None

    # ------------------------------------------------------------------ the flow

    async def run(self, plan: Plan, send: Callable[[], Awaitable[T]]) -> T | None:
        """One-step action: :meth:`prepare`, then :meth:`send` (None for a dry run)."""
        if not self.prepare(plan):
            return None
        return await self.send(plan, send)

    def prepare(self, plan: Plan) -> bool:
        """Show and audit the plan, check its rails, ask for confirmation; False for a
        dry run (nothing is sent). Raises ActionRefusedError (audited ``refused``)."""
        opts = self.options
        self.operator.show(plan.lines())
        self.audit.record(plan, Outcome.PLANNED)
        blocking = plan.blocking(opts.force)
        if blocking:
            self.audit.record(plan, Outcome.REFUSED, error=blocking[0].reason)
            hint = " (--force overrides)" if all(r.overridable for r in blocking) else ""
            raise ActionRefusedError(f"{plan.action} refused: {blocking[0].reason}{hint}")
        if opts.dry_run:
            self.operator.show(["dry run: nothing sent"])
            return False
        if not opts.yes and not self.operator.confirm(plan):
            self.audit.record(plan, Outcome.REFUSED, error="not confirmed")
            raise ActionRefusedError(f"{plan.action} not confirmed: nothing sent")
        return True

    async def send(self, plan: Plan, send: Callable[[], Awaitable[T]]) -> T:
        """Send one step of a confirmed plan; audit sent and its result."""
        self.audit.record(plan, Outcome.SENT)
        try:
            result = await send()
        except FlussError as exc:
            self.audit.record(plan, Outcome.FAILED, error=server_error_text(exc))
            raise _classify(exc, f"{plan.action} {plan.subject}") from None
        self.audit.record(plan, Outcome.SUCCEEDED)
        return result

    async def follow(self, rebalance_id: str | None) -> RebalanceProgress:
        """Progress of a rebalance until it ends, ``timeout`` passes or ``stop`` is set."""
        deadline = time.monotonic() + self.options.timeout
        rounds = int(self.options.timeout / self.options.interval) + 2
        progress = RebalanceProgress(None, None)
        for _ in range(rounds):
            progress = await self.admin.rebalance_progress(rebalance_id)
            self.operator.progress(progress)
            if progress.status in _FINAL or not progress.exists:
                return progress
            left = deadline - time.monotonic()
            if left <= 0 or self.stop.is_set():
                break
            try:
                await asyncio.wait_for(self.stop.wait(), min(self.options.interval, left))
                break
            except TimeoutError:
                pass
        return progress

    # ------------------------------------------------------------------ server drain

    async def drain(self, server_id: int, goals: Sequence[Goal]) -> RebalanceProgress | None:
        """Tag the server PERMANENT_OFFLINE, rebalance, follow; audit each step."""
        look = await self.look()
        names = [g.name for g in goals]
        plan = plan_drain(
            look.view,
            look.placement,
            server_id,
            health=look.health,
            running=look.running,
            goals=names,
        )
        if not self.prepare(plan):
            return None
        self.audit.record(plan, Outcome.SENT)
        tag = plan_tag(look.view, server_id, ServerTag.PERMANENT_OFFLINE.name, remove=False)
        try:
            await self.send(
                tag, lambda: self.actions.add_server_tag([server_id], ServerTag.PERMANENT_OFFLINE)
            )
        except Exception as exc:
            self.audit.record(plan, Outcome.FAILED, error=str(exc))
            raise
        rebalance = plan_rebalance(look.placement, health=look.health, running=None, goals=names)
        try:
            rebalance_id = await self.send(rebalance, lambda: self.actions.rebalance(goals))
        except Exception as exc:
            self.audit.record(plan, Outcome.FAILED, error=str(exc))
            raise
        self.operator.show([f"rebalance {rebalance_id} started"])
        progress = await self.follow(rebalance_id)
        await self._drain_result(plan, server_id, rebalance_id, progress)
        return progress

    async def _drain_result(
        self, plan: Plan, server_id: int, rebalance_id: str, progress: RebalanceProgress
    ) -> None:
        extra: dict[str, Any] = {"rebalance_id": rebalance_id, "status": _status_name(progress)}
        self.check_ended(plan, rebalance_id, progress)
        # Metadata may lag the coordinator's COMPLETED by a moment: a few bounded looks.
        for attempt in range(5):
            left, _ = replicas_on((await self.look()).placement, server_id)
            if left == 0 or progress.status is not RebalanceStatus.COMPLETED:
                break
            await asyncio.sleep(0.2 * (attempt + 1))
        extra["replicas_left"] = left
        if progress.status is RebalanceStatus.COMPLETED and left == 0:
            self.audit.record(plan, Outcome.SUCCEEDED, extra=extra)
            self.operator.show(
                [
                    f"server {server_id} drained: it holds no replica",
                    f"  once it is stopped for good: konsole admin server retire {server_id}",
                ]
            )
            return
        error = f"rebalance {extra['status']}, {left} replica(s) left on server {server_id}"
        self.audit.record(plan, Outcome.FAILED, error=error, extra=extra)
        raise ActionFailedError(f"server drain {server_id}: {error}")

    def check_ended(
        self, plan: Plan | None, rebalance_id: str | None, progress: RebalanceProgress
    ) -> None:
        """Raise (audited ``left_running``) when the wait ended before the rebalance did:
        130 after Ctrl-C, 75 after the bound."""
        if progress.status in _FINAL or not progress.exists:
            return
        if plan is not None:
            extra = {"rebalance_id": rebalance_id, "status": _status_name(progress)}
            self.audit.record(plan, Outcome.LEFT_RUNNING, extra=extra)
        text = self.left_running(rebalance_id)
        if self.stop.is_set():
            raise ActionInterruptedError(text)
        raise ActionRefusedError(f"timed out: {text}")

    @staticmethod
    def left_running(rebalance_id: str | None) -> str:
        return (
            f"stopped waiting; rebalance {rebalance_id or '(current)'} keeps running on the "
            "server: follow it with `konsole admin rebalance status`, cancel it with "
            "`konsole admin rebalance cancel`"
        )


def _status_name(progress: RebalanceProgress) -> str:
    status = progress.status
    if status is None:
        return "none"
    return status.name if isinstance(status, RebalanceStatus) else str(status)

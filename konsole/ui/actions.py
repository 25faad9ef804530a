"""Operator actions the console offers on a tablet server: drain, tag, untag.

:class:`ServerActions` is what the server detail screen and its confirmation modal ask
(the app hands one out; tests hand a fake): why actions are off, the plan of one, and
carrying it out with progress. :class:`LiveServerActions` does it through
:mod:`konsole.collect.actions` (the same flow, rails and audit as ``konsole admin``):
the profile's ``writes = true`` is the only way in, and each call opens its own client
with the operator actions' write grant and closes it after.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from konsole.collect.profiles import Profile
from konsole.model.actions import Plan

if TYPE_CHECKING:
    from konsole.collect.actions import ActionRunner

__all__ = ["ACTIONS", "LiveServerActions", "Progress", "ServerActions"]

#: The actions a server offers: (name, what the key shows).
ACTIONS: tuple[tuple[str, str], ...] = (
    ("drain", "drain"),
    ("tag", "tag temporary-offline"),
    ("untag", "untag temporary-offline"),
)

#: (buckets done, buckets in the plan, the rebalance's status) as it moves.
Progress = Callable[[int, int, str], None]


class ServerActions(Protocol):
    def unavailable(self) -> str | None:
        """Why the actions are off (None: they may be offered)."""
        ...

    async def plan(self, action: str, server_id: int) -> Plan:
        """The plan (raises konsole.errors.ActionError for bad input)."""
        ...

    async def execute(self, action: str, server_id: int, progress: Progress) -> str:
        """Carry it out; the outcome as one line (raises ActionError when it fails)."""
        ...


@dataclass
class _Operator:
    """The runner's face inside the console: the modal already confirmed."""

    progress_to: Progress

    def show(self, lines: Sequence[str]) -> None:
        pass

    def confirm(self, plan: Plan) -> bool:
        return True

    def progress(self, progress: object) -> None:
        from fluss_proto.model import RebalanceProgress
        from konsole.model.actions import progress_counts

        if isinstance(progress, RebalanceProgress):
            self.progress_to(*progress_counts(progress))


class LiveServerActions:
    def __init__(self, profile: Profile | None, history: Path | None) -> None:
        self.profile = profile
        self.history = history

    def unavailable(self) -> str | None:
        if self.profile is None:
            return "actions need a cluster profile"
        if not self.profile.writes:
            return f"read-only: profile {self.profile.name!r} has no `writes = true`"
        return None

    async def _runner(self, progress: Progress | None = None) -> ActionRunner:
        from konsole.collect.actions import Audit, Options, open_runner

        assert self.profile is not None
        operator = _Operator(progress or (lambda done, total, status: None))
        return await open_runner(self.profile, Audit(self.history), operator, Options(yes=True))

    async def plan(self, action: str, server_id: int) -> Plan:
        from konsole.model.actions import plan_drain, plan_tag

        runner = await self._runner()
        try:
            look = await runner.look()
        finally:
            await runner.aclose()
        if action == "drain":
            goals = ["REPLICA_DISTRIBUTION", "LEADER_DISTRIBUTION"]
            return plan_drain(
                look.view, server_id, health=look.health, running=look.running, goals=goals
            )
        return plan_tag(look.view, server_id, "TEMPORARY_OFFLINE", remove=action == "untag")

    async def execute(self, action: str, server_id: int, progress: Progress) -> str:
        from fluss_proto.actions import Goal, ServerTag
        from konsole.model.actions import plan_tag

        runner = await self._runner(progress)
        try:
            if action == "drain":
                await runner.drain(server_id, [Goal.REPLICA_DISTRIBUTION, Goal.LEADER_DISTRIBUTION])
                return f"server {server_id} drained: it holds no replica"
            look = await runner.look()
            remove = action == "untag"
            plan = plan_tag(look.view, server_id, ServerTag.TEMPORARY_OFFLINE.name, remove=remove)
            send = runner.actions.remove_server_tag if remove else runner.actions.add_server_tag
            await runner.run(plan, lambda: send([server_id], ServerTag.TEMPORARY_OFFLINE))
            return f"server {server_id} {'untagged' if remove else 'tagged'}"
        finally:
            await runner.aclose()

"""Operator actions the console offers on a tablet server: drain, tag, untag.

:class:`ServerActions` is what the server detail screen and its confirmation modal ask
(the app hands one out; tests hand a fake): why actions are off, the plan of one, and
carrying it out with progress. :class:`LiveServerActions` only builds the request: the
plan, the rails, the send and the audit are the one action service's
(:class:`konsole.collect.actions.service.ActionService`, the same as ``konsole admin``'s);
the profile's ``writes = true`` is the only way in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from konsole.collect.actions.service import DRAIN_GOALS, ActionRequest, Progress
from konsole.model.actions import Plan

if TYPE_CHECKING:
    from konsole.collect.actions.service import ActionService

__all__ = ["ACTIONS", "LiveServerActions", "Progress", "ServerActions", "server_request"]

#: The actions a server offers: (name, what the key shows).
ACTIONS: tuple[tuple[str, str], ...] = (
    ("drain", "drain"),
    ("tag", "tag temporary-offline"),
    ("untag", "untag temporary-offline"),
)


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


def server_request(action: str, server_id: int) -> ActionRequest:
    """The request of one of :data:`ACTIONS` on ``server_id``."""
    if action == "drain":
        return ActionRequest("server-drain", str(server_id), DRAIN_GOALS)
    return ActionRequest(f"server-{action}", str(server_id), "TEMPORARY_OFFLINE")


class LiveServerActions:
    """The server actions of the action service the console holds for its profile."""

    def __init__(self, service: ActionService) -> None:
        self.service = service

    def unavailable(self) -> str | None:
        return self.service.unavailable()

    async def plan(self, action: str, server_id: int) -> Plan:
        return await self.service.plan(server_request(action, server_id))

    async def execute(self, action: str, server_id: int, progress: Progress) -> str:
        return await self.service.execute(server_request(action, server_id), progress)

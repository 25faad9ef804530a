"""Operator actions the console offers beyond one server: rebalance, configs, partitions,
table properties.

:class:`ClusterActions` is what the Rebalance and Config screens, the Tables screen and the
confirmation modal ask (the app hands one out; tests hand a fake): why actions are off, the
plan of one :class:`ActionRequest`, and carrying it out. The live one is the action service
itself (:class:`konsole.collect.actions.service.ActionService`: the same plans, rails and
audit as ``konsole admin``): a face only builds requests.

A screen that reads again and again (the Rebalance screen's progress, every few seconds;
the Config screen's list) holds :meth:`ClusterActions.reads` from its mount to its unmount
(:class:`HeldReads`): the screens' holds share the service's one read-only client, opened at
the first read and closed when the last screen lets go.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from konsole.collect.actions.service import ActionRequest, Progress
from konsole.model.actions import Plan

if TYPE_CHECKING:
    from fluss_proto.model import ConfigEntry, RebalanceProgress
    from konsole.collect.cluster.upgrade_reads import NotesInputs
    from konsole.model.snapshot import ClusterSnapshot

__all__ = [
    "GOALS",
    "ActionRequest",
    "ClusterActions",
    "ClusterReads",
    "HeldReads",
]

#: The rebalance goals a server takes, in the order the Rebalance screen offers them.
GOALS: tuple[str, ...] = ("REPLICA_DISTRIBUTION", "LEADER_DISTRIBUTION", "RACK_AWARE")


class ClusterReads(Protocol):
    """Reads over the one read client (see :meth:`ClusterActions.reads`)."""

    async def progress(self) -> RebalanceProgress:
        """The current or last rebalance (ListRebalanceProgress; a read)."""
        ...

    async def configs(self) -> Sequence[ConfigEntry]:
        """The cluster's configs (DescribeClusterConfigs; a read)."""
        ...

    async def notes_inputs(self, snapshot: ClusterSnapshot) -> NotesInputs:
        """The ACLs and the configs of ``snapshot``'s servers, for the 1.0 upgrade notes
        (ListAcls, DescribeClusterConfigs of each; reads)."""
        ...

    async def aclose(self) -> None:
        """Let go of the client (closed when no holder is left)."""
        ...


class ClusterActions(Protocol):
    def reads(self) -> ClusterReads:
        """Reads for a holder that asks again and again: one client for all holders."""
        ...

    def unavailable(self) -> str | None:
        """Why the writing actions are off (None: they may be offered)."""
        ...

    async def plan(self, request: ActionRequest) -> Plan:
        """The plan (raises konsole.errors.ActionError for bad input)."""
        ...

    async def execute(self, request: ActionRequest, progress: Progress) -> str:
        """Carry it out; the outcome as one line (raises ActionError when it fails)."""
        ...


class ReadsSource(Protocol):
    """Where a screen's reads come from: the app's actions for the feed it watches (the
    part of :class:`~konsole.ui.services.ConsoleServices` a hold needs)."""

    @property
    def feed(self) -> object: ...

    def cluster_actions(self) -> ClusterActions: ...


class HeldReads:
    """A screen's hold on the cluster reads, from :meth:`open` (its mount) to :meth:`close`
    (its unmount); after a switch to another profile, a hold on that profile's."""

    def __init__(self, services: Callable[[], ReadsSource]) -> None:
        self._services = services
        self.reads: ClusterReads | None = None
        self._of: object = None

    def open(self) -> None:
        konsole = self._services()
        self.reads, self._of = konsole.cluster_actions().reads(), konsole.feed

    async def current(self) -> tuple[ClusterReads | None, bool]:
        """The reads held (None: closed), and whether they were just renewed (the profile
        changed: what was read before is of another cluster)."""
        konsole = self._services()
        if self.reads is None or konsole.feed is self._of:
            return self.reads, False
        old, self._of = self.reads, konsole.feed
        self.reads = konsole.cluster_actions().reads()
        await _close(old)
        return self.reads, True

    async def close(self) -> None:
        reads, self.reads = self.reads, None
        await _close(reads)


async def _close(reads: ClusterReads | None) -> None:
    if reads is not None:
        with contextlib.suppress(Exception):  # closing: nothing left to tell
            await asyncio.shield(reads.aclose())

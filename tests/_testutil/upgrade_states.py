"""A rolling upgrade midway, for the console's pictures and pilot tests: the story's state
with some tablet servers advertising the 1.0 line's API keys (the others and the
coordinator the 0.9 line's), and what the 1.0 upgrade notes are checked against (ACLs
with a principal allowed ALTER but not ALL, ``datalake.format`` without
``datalake.enabled``, an old key name the 1.0 line renamed)."""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from fluss_proto.model import (
    AclBinding,
    AclListing,
    ApiVersionRange,
    ClusterView,
    ConfigEntry,
    OperationType,
    PermissionType,
    ResourceType,
)
from konsole.collect.cluster.upgrade_reads import NotesInputs
from konsole.ui.state import ConsoleState
from tests._testutil.judging import showing

__all__ = ["NEW", "NOTES_CLEAN", "NOTES_TO_ACT_ON", "OLD", "speaking"]

OLD: Final = tuple(ApiVersionRange(k, 0, 1) for k in range(1000, 1052))
NEW: Final = tuple(ApiVersionRange(k, 0, 1) for k in range(1000, 1065))


def speaking(state: ConsoleState, upgraded: set[int]) -> ConsoleState:
    """``state`` whose tablet servers in ``upgraded`` advertise the 1.0 line's keys, the
    others (and the coordinator) the 0.9 line's."""

    def of(view: ClusterView) -> ClusterView:
        coordinator = view.coordinator
        return replace(
            view,
            coordinator=replace(coordinator, api_versions=OLD) if coordinator else None,
            tablet_servers=tuple(
                replace(s, api_versions=NEW if s.node_id in upgraded else OLD)
                for s in view.tablet_servers
            ),
        )

    snap = state.last_ok
    assert snap is not None and snap.view is not None
    last_ok = replace(snap, view=of(snap.view))
    latest = state.snapshot
    if latest is snap:
        latest = last_ok
    elif latest is not None and latest.view is not None:
        latest = replace(latest, view=of(latest.view))
    return showing(state, latest, last_ok=last_ok, previous_ok=state.previous_ok)


def _initial(key: str, value: str) -> ConfigEntry:
    return ConfigEntry(key, value, "INITIAL_SERVER_CONFIG")


_BASE = (
    _initial("bind.listeners", "FLUSS://127.0.0.1:9123"),
    _initial("default.bucket.number", "4"),
)

#: Three items to act on: bob manages ACLs with ALTER only; tablet server 2 sets
#: datalake.format alone; tablet server 3 still uses an old key name.
NOTES_TO_ACT_ON: Final = NotesInputs(
    AclListing(
        enabled=True,
        bindings=(
            AclBinding(
                ResourceType.DATABASE,
                "shop",
                "bob",
                "User",
                "*",
                OperationType.ALTER,
                PermissionType.ALLOW,
            ),
            AclBinding(
                ResourceType.DATABASE,
                "shop",
                "alice",
                "User",
                "*",
                OperationType.ALL,
                PermissionType.ALLOW,
            ),
        ),
    ),
    {
        "coordinator 127.0.0.1:9123": _BASE,
        "tablet-server 1": _BASE,
        "tablet-server 2": (*_BASE, _initial("datalake.format", "paimon")),
        "tablet-server 3": (*_BASE, _initial("log.fetch.max-bytes", "16mb")),
    },
)
#: Nothing to act on: no authorizer, no datalake key, no old key name.
NOTES_CLEAN: Final = NotesInputs(
    AclListing(enabled=False, reason="security disabled"),
    {"coordinator 127.0.0.1:9123": _BASE, "tablet-server 1": _BASE},
)

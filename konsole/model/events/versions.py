"""server_version_changed: a server speaks another Fluss line than when last seen (a
rolling upgrade's step, or a step back), told by the API keys it advertises
(:mod:`konsole.model.server_lines`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from konsole.model import subjects
from konsole.model.events.base import Emitter, Event, EventConfig, EventKind, Severity, Subject
from konsole.model.server_lines import line_of
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["VersionState", "detect_versions"]


@dataclass(frozen=True, slots=True)
class VersionState:
    """Server subject -> the line it spoke when last seen. A server that is gone keeps its
    entry, so the change across its restart is seen (bounded by the cluster's servers)."""

    lines: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


def detect_versions(
    state: VersionState, current: ClusterSnapshot, config: EventConfig
) -> tuple[list[Event], VersionState]:
    out = Emitter(current, config)
    view = current.view
    if view is None:
        return out.events, state
    lines = dict(state.lines)
    servers = [(subjects.tablet_server(s.node_id), s) for s in view.tablet_servers]
    if view.coordinator is not None:
        servers.insert(0, (subjects.coordinator(view.coordinator.address), view.coordinator))
    for name, server in servers:
        line, top = line_of(server)
        if line is None:
            continue  # not asked this poll: keep what was known
        before = lines.get(name)
        lines[name] = line
        if before is not None and before != line:
            out.emit(
                EventKind.SERVER_VERSION_CHANGED,
                Severity.INFO,
                Subject("server", name),
                f"{name} now speaks the {line} line (was {before}; API keys up to {top})",
                {"server": name, "old": before, "new": line, "max_api_key": top},
            )
    return out.events, VersionState(MappingProxyType(lines))

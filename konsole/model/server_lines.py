"""Which Fluss line a server speaks, told by the API keys it advertises (pure).

Fluss sends no version string, so the line is told from ApiVersions, by the one rule
:func:`fluss_proto.api_keys.line_of_keys` (a server advertising a key only the 1.0 line
serves, GetClusterHealth for one, speaks 1.0; otherwise 0.9). A server that could not be
asked has no line.
"""

from __future__ import annotations

from fluss_proto.model import ClusterView, ServerInfo

__all__ = ["line_of", "skewed", "view_lines"]


def line_of(server: ServerInfo) -> tuple[str | None, int | None]:
    """The line ``server`` speaks and its highest API key; (None, None) when not asked."""
    keys = server.apis
    return server.generation, max(keys) if keys else None


def view_lines(view: ClusterView | None) -> tuple[str | None, dict[int, str]]:
    """The metadata coordinator's line and each tablet server's (those asked)."""
    if view is None:
        return None, {}
    coordinator = line_of(view.coordinator)[0] if view.coordinator is not None else None
    tablets = {s.node_id: line for s in view.tablet_servers if (line := line_of(s)[0])}
    return coordinator, tablets


def skewed(view: ClusterView | None) -> bool:
    """More than one line spoken among the servers of ``view`` (a rolling upgrade midway)."""
    coordinator, tablets = view_lines(view)
    spoken = set(tablets.values()) | ({coordinator} if coordinator else set())
    return len(spoken) > 1

"""Which Fluss line a server speaks, told by the API keys it advertises (pure).

Fluss sends no version string, so the line is told from ApiVersions: the 1.0 line added
GetClusterHealth (1062), ListRemoteLogManifests (1063) and ListKvSnapshots (1064); a
server advertising any key from 1062 up speaks 1.0, one whose keys stop below speaks 0.9.
A server that could not be asked has no line.
"""

from __future__ import annotations

from typing import Final

from fluss_proto.model import ClusterView, ServerInfo

__all__ = ["BASE_LINE", "LINES", "line_of", "skewed", "view_lines"]

#: Each line and the first API key it added (its marker), newest first.
LINES: Final = (("1.0", 1062),)
#: The line a server speaks when it advertises no marker key.
BASE_LINE: Final = "0.9"


def line_of(server: ServerInfo) -> tuple[str | None, int | None]:
    """The line ``server`` speaks and its highest API key; (None, None) when not asked."""
    keys = server.apis
    if not keys:
        return None, None
    top = max(keys)
    for line, marker in LINES:
        if any(k >= marker for k in keys):
            return line, top
    return BASE_LINE, top


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

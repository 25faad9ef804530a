"""Which Fluss line a server speaks, told by the API keys it advertises (pure).

Fluss sends no version string, so the line is told from ApiVersions: the 1.0 line added
GetClusterHealth (1062), ListRemoteLogManifests (1063) and ListKvSnapshots (1064); a
server advertising any key from 1062 up speaks 1.0, one whose keys stop below speaks 0.9.
A server that could not be asked has no line.
"""

from __future__ import annotations

from typing import Final

from fluss_proto.model import ServerInfo

__all__ = ["BASE_LINE", "LINES", "line_of"]

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

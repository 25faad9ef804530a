"""The console's colours: one map per concept, used by every screen, modal and widget.

- event severity (``critical``, ``warning``, ``info``, and operator ``note``s on the timeline);
- health status (GREEN, YELLOW, RED, UNKNOWN);
- server state (``alive``, ``active``, ``standby``, ``gone``, ``unreachable``).

Rich style strings, so the themes (light and dark) keep their own palette. Stale data is
never painted green: the styles that say "fine" turn plain when what is shown is stale.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

# The health model (and the snapshot types under it) is not needed to paint the first
# frame: the health styles are keyed by the status's name.
if TYPE_CHECKING:
    from konsole.model.health import HealthStatus

__all__ = [
    "HEALTH_STYLE",
    "SERVER_STATE_STYLE",
    "SEVERITY_STYLE",
    "health_style",
    "server_state_style",
    "severity_style",
]

#: Keyed by the severity's value (``Severity`` is a StrEnum; history rows carry the text).
SEVERITY_STYLE: Mapping[str, str] = MappingProxyType(
    {"critical": "bold red", "warning": "yellow", "info": "", "note": "bold cyan"}
)
#: Keyed by the health status's name (``HealthStatus.GREEN.name``...).
HEALTH_STYLE: Mapping[str, str] = MappingProxyType(
    {
        "GREEN": "bold green",
        "YELLOW": "bold yellow",
        "RED": "bold red",
        "UNKNOWN": "bold magenta",
    }
)
SERVER_STATE_STYLE: Mapping[str, str] = MappingProxyType(
    {
        "alive": "green",
        "active": "bold green",
        "standby": "",
        "gone": "bold red",
        "unreachable": "yellow",
    }
)
#: Server states that say "fine": plain when the data is stale.
_FINE_STATES = frozenset({"alive", "active"})


def severity_style(severity: str) -> str:
    return SEVERITY_STYLE.get(severity, "")


def health_style(status: HealthStatus, stale: bool = False) -> str:
    # The last good health may no longer hold: stale GREEN is shown without colour.
    if stale and status.name == "GREEN":
        return "bold"
    return HEALTH_STYLE.get(status.name, "")


def server_state_style(state: str, stale: bool = False) -> str:
    if stale and state in _FINE_STATES:
        return ""
    return SERVER_STATE_STYLE.get(state, "")

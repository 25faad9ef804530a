"""One cause, one judgement: the findings that say a tablet server is down, and what follows.

A dead tablet server shows up as several findings over its death, one after the other or
together: listed in metadata but not answering (``server_unreachable``), dropped from
metadata once its ZooKeeper session ends (``server_gone``, or ``replicas_offline`` when it
held replicas). They are one fact, a server that is down, so every face judges them as
one: :func:`down_servers` is the set ``serve``'s alerts (one ``FlussTabletServerDown`` per
server, whichever of the findings says it) and its ``konsole_tablet_server_up`` series both
read, so the two alert paths fire and resolve on the same polls.

What follows from a dead server (:data:`CONSEQUENCE_RULES`: its metrics cannot be read,
reads fail, the buckets it followed are under-replicated, GetClusterHealth degraded) is no
page of its own while a server of the same cluster is down, nor while that server's alert
is still active (its hold-down: a server just back catches up): it is folded into the
cause's alert (docs/alerts.md, "One page per cause"), and pages only if it outlasts that
by its own ``for``. Offline buckets (``leaders``) are not folded:
data that cannot be read or written is paged on its own, and Alertmanager groups it with
the cause (deploy/alertmanager/konsole-alertmanager.yml). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from fluss_proto.model import HealthStatus
from konsole.model.health import Finding

__all__ = [
    "CONSEQUENCE_RULES",
    "SERVER_DOWN_ALERT",
    "SERVER_DOWN_RULES",
    "SERVER_DOWN_SEVERITY",
    "down_servers",
]

#: The health rules whose finding says "this tablet server is down" (subject tablet-server N).
SERVER_DOWN_RULES: Final = frozenset({"server_unreachable", "server_gone", "replicas_offline"})
#: The one alert of the cause, and its one severity: a label change would make it another
#: alert (Alertmanager identifies alerts by their labels) and resolve the first mid-death.
SERVER_DOWN_ALERT: Final = "FlussTabletServerDown"
SERVER_DOWN_SEVERITY: Final = "warning"
#: Rules whose findings follow from a down server: folded into its alert meanwhile.
CONSEQUENCE_RULES: Final = frozenset(
    {"metrics_unknown", "read_errors", "under_replicated", "under_min_isr", "cluster_health"}
)
_PREFIX: Final = "tablet-server "


def down_servers(findings: Iterable[Finding]) -> dict[str, tuple[Finding, ...]]:
    """Tablet servers judged down by ``findings``: server id (as the ``server`` label
    spells it) -> its down findings, in the order health gave them."""
    out: dict[str, list[Finding]] = {}
    for f in findings:
        if (
            f.rule in SERVER_DOWN_RULES
            and f.status is not HealthStatus.GREEN
            and f.subject.startswith(_PREFIX)
        ):
            out.setdefault(f.subject.removeprefix(_PREFIX), []).append(f)
    return {server: tuple(fs) for server, fs in out.items()}

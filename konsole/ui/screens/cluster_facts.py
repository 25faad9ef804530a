"""Rows the Overview, Servers and Server detail screens build from one state (no Textual).

Every cluster fact comes from :mod:`konsole.model.placement` (alive servers, offline and
under-replicated buckets, replicas out of sync, leaders and replicas per server), so the
screens print the numbers ``check``, ``watch`` and the history give for the same poll;
this module only shapes them into rows, from the placement the poll made once
(:attr:`ConsoleState.placement`): a refresh makes none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fluss_proto.model import BucketView, ClusterView
from konsole.model.events import EventKind
from konsole.model.metrics import ServerMetrics
from konsole.model.placement import Replication
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole
from konsole.ui.state import ConsoleState

__all__ = [
    "BucketCounts",
    "ServerRow",
    "bucket_counts",
    "fmt_ratio",
    "server_rows",
    "version_text",
]


@dataclass(frozen=True, slots=True)
class BucketCounts:
    """The overview's catalog and replication counts, each in its unit."""

    databases: int
    tables: int
    buckets: int
    #: :class:`~konsole.model.placement.Replication`'s cluster-wide figures.
    offline_buckets: int
    under_replicated_buckets: int
    out_of_sync_replicas: int


@dataclass(frozen=True, slots=True)
class ServerRow:
    """One line of the servers table."""

    #: "coordinator" or "tablet".
    role: str
    #: Tablet server node id; None for a coordinator (they are known by address).
    node_id: int | None
    endpoint: str
    rack: str
    #: "alive", "active", "standby", "gone" or "unreachable".
    state: str
    leaders: int | None = None
    replicas: int | None = None
    metrics: ServerMetrics | None = None
    #: Why it is gone or unreachable (secret-free).
    note: str = ""

    @property
    def key(self) -> str:
        """A stable row key across refreshes."""
        return f"tablet-{self.node_id}" if self.node_id is not None else f"coord-{self.endpoint}"


def bucket_counts(snapshot: ClusterSnapshot, rep: Replication | None) -> BucketCounts | None:
    """Counts of the poll's catalog and its replication figures (``rep``: the poll's,
    :attr:`ConsoleState.replication`); None when it has no view."""
    view = snapshot.view
    if view is None or rep is None:
        return None
    return BucketCounts(
        len(view.databases),
        len(view.tables),
        rep.placement.buckets,
        rep.offline_buckets,
        rep.under_replicated_buckets,
        rep.out_of_sync_replicas,
    )


def buckets_of(view: ClusterView, node_id: int) -> list[BucketView]:
    """The buckets ``node_id`` leads or holds a replica of."""
    return [b for b in view.buckets if b.leader_id == node_id or node_id in b.replica_ids]


def left_servers(state: ConsoleState) -> dict[int, str]:
    """Tablet servers the recent events saw leave and not come back: id -> address."""
    out: dict[int, str] = {}
    for event in state.events:
        server = event.details.get("server")
        if not isinstance(server, int):
            continue
        if event.kind is EventKind.SERVER_LEFT:
            out[server] = str(event.details.get("address", ""))
        elif event.kind is EventKind.SERVER_JOINED:
            out.pop(server, None)
    return out


def _coordinator_rows(
    state: ConsoleState, snap: ClusterSnapshot, view: ClusterView
) -> list[ServerRow]:
    """The probed coordinators (active, standby, unreachable), else metadata's one."""
    down = state.stale
    latest = state.snapshot if state.snapshot is not None else snap
    coords = latest.coordinators if latest.coordinators else snap.coordinators
    if not coords:
        if view.coordinator is None:
            return []
        c = view.coordinator
        return [
            ServerRow(
                "coordinator", None, c.address, c.rack or "", "unreachable" if down else "active"
            )
        ]
    coord_metrics = {m.host: m for m in snap.coordinator_metrics}
    return [
        ServerRow(
            "coordinator",
            None,
            c.address,
            "",
            "unreachable" if down else c.role.value,
            metrics=coord_metrics.get(c.address.rpartition(":")[0]) if len(coords) == 1 else None,
            note=c.error or "" if c.role is CoordinatorRole.UNREACHABLE else "",
        )
        for c in coords
    ]


def server_rows(
    state: ConsoleState, seen: Mapping[int, tuple[str, str]] | None = None
) -> list[ServerRow]:
    """Coordinators then tablet servers, alive ones and those known to be gone.

    A tablet server is *gone* when it is not in metadata but the events saw it leave, a
    replica is still placed on it, or ``seen`` (id -> (endpoint, rack) remembered by the
    screen) knew it. When the latest poll failed every server is *unreachable*: the panels
    must not claim they are alive.
    """
    snap = state.last_ok
    if snap is None or snap.view is None:
        return []
    view = snap.view
    down = state.stale
    rows = _coordinator_rows(state, snap, view)
    facts = state.placement
    assert facts is not None  # a good poll with a view has its placement
    leaders, replicas = facts.leaders, facts.replicas
    metrics = snap.tablet_metrics
    listed = {s.node_id: s for s in view.tablet_servers}
    for node_id, s in sorted(listed.items()):
        rows.append(
            ServerRow(
                "tablet",
                node_id,
                s.address,
                s.rack or "",
                "unreachable" if down else "alive",
                leaders.get(node_id, 0),
                replicas.get(node_id, 0),
                metrics.get(str(node_id)),
                note=str(s.error) if s.error is not None else "",
            )
        )
    gone: dict[int, tuple[str, str]] = {}
    for node_id, (endpoint, rack) in (seen or {}).items():
        gone[node_id] = (endpoint, rack)
    for node_id, address in left_servers(state).items():
        gone[node_id] = (address or gone.get(node_id, ("", ""))[0], gone.get(node_id, ("", ""))[1])
    for node_id in replicas:
        gone.setdefault(node_id, ("", ""))
    for node_id, (endpoint, rack) in sorted(gone.items()):
        if node_id in facts.alive:
            continue
        rows.append(
            ServerRow(
                "tablet",
                node_id,
                endpoint or "?",
                rack,
                "gone",
                leaders.get(node_id, 0),
                replicas.get(node_id, 0),
                note="not in metadata",
            )
        )
    return rows


def version_text(view: ClusterView | None) -> str | None:
    """``Fluss 1.0 line`` when the servers' advertised APIs tell; None when they do not."""
    if view is None:
        return None
    generations = {s.generation for s in view.servers if s.generation is not None}
    if not generations:
        return None
    return "Fluss " + " / ".join(sorted(generations)) + " line"


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def count_text(n: int | None, word: str, plural: str | None = None) -> str:
    if n is None:
        return f"- {plural or word + 's'}"
    return f"{n} {word if n == 1 else plural or word + 's'}"


def remembered(rows: Iterable[ServerRow]) -> dict[int, tuple[str, str]]:
    """What a screen keeps of the tablet servers it saw (to show them gone later)."""
    return {r.node_id: (r.endpoint, r.rack) for r in rows if r.node_id is not None}


class SeenServers:
    """The tablet servers a screen saw alive in live states of one profile, so one that
    vanishes from metadata is still listed, as gone (the overview and the servers screen
    share the rule)."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[str, str]] = {}
        self._profile: str | None = None

    def known(self, state: ConsoleState) -> dict[int, tuple[str, str]]:
        if state.profile != self._profile:  # another cluster: nothing seen yet
            self._seen, self._profile = {}, state.profile
        # A recorded moment is shown as it was: what was seen later does not apply.
        return {} if state.historic else self._seen

    def rows(self, state: ConsoleState) -> list[ServerRow]:
        """:func:`server_rows` with the remembered servers; remembers the ones alive now
        (only from a live, fresh state)."""
        rows = server_rows(state, self.known(state))
        if not state.historic and not state.stale:
            self._seen.update(remembered(r for r in rows if r.state == "alive"))
        return rows

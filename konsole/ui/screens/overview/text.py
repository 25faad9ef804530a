"""The Overview's text panels: the cluster's facts, health with the capacity outlook.

Rich text only (no Textual), built from a console state; the screen places them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from konsole.model.timefmt import age_text, clock_text
from konsole.ui.colors import health_style
from konsole.ui.widgets.line_fit import RankedLines

if TYPE_CHECKING:
    from konsole.collect.profiles import Profile
    from konsole.model.headroom import ServerHeadroom
    from konsole.model.snapshot import ClusterSnapshot
    from konsole.ui.state import ConsoleState

__all__ = [
    "cluster_line",
    "cluster_text",
    "health_lines",
    "outlook_text",
    "rooms_of",
    "skew_text",
]


def cluster_text(state: ConsoleState, profile: Profile | None) -> Text:
    """The Cluster panel: identity, version, coordinators, catalog, buckets, last poll."""
    from konsole.ui.screens.cluster_facts import bucket_counts, count_text, version_text

    snap = state.last_ok
    assert snap is not None
    stale = state.stale
    t = Text(no_wrap=True, overflow="ellipsis")

    def row(label: str, *parts: str | tuple[str, str] | Text) -> None:
        if len(t):
            t.append("\n")
        t.append(f"{label:<12}", style="dim")
        t.append_text(Text.assemble(*parts))

    identity = state.profile
    if profile is not None and profile.bootstrap:
        identity += f" ({', '.join(profile.bootstrap)})"
    row("cluster", identity)
    # during a version skew the row says who speaks which line (no row more: the panel's
    # height is the dashboard's)
    version = skew_text(snap) or version_text(snap.view)
    if version:
        row("version", version)
    latest = state.snapshot or snap
    active = latest.active_coordinator if not stale else None
    row(
        "coordinator",
        (active, "") if active else ("none answering", "bold red"),
    )
    standby = latest.standby_coordinators
    if standby and not stale:
        row("standby", ", ".join(standby))
    unreachable = [c.address for c in latest.coordinators if c.role.value == "unreachable"]
    if unreachable and not stale:
        row("unreachable", (", ".join(unreachable), "yellow"))
    counts = bucket_counts(snap, state.replication)
    if counts is not None:
        if counts.databases == 0:
            row("catalog", ("no databases yet", "italic"))
        else:
            row(
                "catalog",
                f"{count_text(counts.databases, 'database')} · "
                f"{count_text(counts.tables, 'table')} · "
                f"{count_text(counts.buckets, 'bucket')}",
            )
        off_style = "bold red" if counts.offline_buckets else ""
        under_style = "yellow" if counts.under_replicated_buckets else ""
        row(
            "buckets",
            (f"{counts.offline_buckets} offline", off_style),
            " · ",
            (f"{counts.under_replicated_buckets} under-replicated", under_style),
        )
        if counts.out_of_sync_replicas:
            row("replicas", (f"{counts.out_of_sync_replicas} out of sync", "yellow"))
    row(
        "last poll",
        f"{clock_text(snap.taken_at)[11:]} · {age_text(state.data_age)} old · "
        f"{snap.latency_s * 1000:.0f} ms",
    )
    return t


def skew_text(snap: ClusterSnapshot) -> Text | None:
    """During a version skew (a rolling upgrade midway), which server speaks which line,
    newest first: ``skew · 1.0: ts 1 · 0.9: coordinator, ts 2, ts 3``; None otherwise."""
    from konsole.model.server_lines import skewed, view_lines

    if not skewed(snap.view):
        return None
    coordinator, tablets = view_lines(snap.view)
    speakers: dict[str, list[str]] = {}
    if coordinator is not None:
        speakers.setdefault(coordinator, []).append("coordinator")
    for node, line in sorted(tablets.items()):
        speakers.setdefault(line, []).append(f"ts {node}")
    t = Text()
    t.append("skew", style="bold yellow")  # first: a narrow panel cuts the tail
    for line in sorted(speakers, reverse=True):
        t.append(f" · {line}: {', '.join(speakers[line])}")
    return t


def health_lines(
    state: ConsoleState,
    rooms: dict[str, ServerHeadroom],
    *,
    with_cluster: bool,
) -> RankedLines:
    """The Health panel: status, (the cluster's line), the capacity outlook, findings.

    When the panel is short the status stays; the cluster's line goes first, then the
    outlook when it knows no room, then the findings, the least severe first (the last
    listed first among equals), then an outlook that knows the room (a forecast lock)."""
    lines: list[Text] = []
    health = state.health
    status = Text()
    if health is None:
        from konsole.model.health import HealthStatus

        status.append("unknown", style=health_style(HealthStatus.UNKNOWN))
    else:
        status.append(health.status.name, style=health_style(health.status, state.stale))
        status.append(f"  ({health.source})", style="dim")
    lines.append(status)
    drop: list[int] = []
    if with_cluster:  # the cluster panel has no room: its key facts here
        drop.append(len(lines))
        lines.append(cluster_line(state))
    outlook = len(lines)
    lines.append(outlook_text(state, rooms))
    room_known = least_room_known(rooms)
    if not room_known:
        drop.append(outlook)
    if health is not None:
        ranked: list[tuple[int, int]] = []
        if not health.findings:
            ranked.append((0, len(lines)))
            lines.append(Text("no findings"))
        for finding in health.findings:
            ranked.append((_SEVERITY.get(finding.status.name, 1), len(lines)))
            t = Text("• ")
            t.append(finding.subject + ": ", style=health_style(finding.status, state.stale))
            t.append(finding.reason)
            lines.append(t)
        drop += [i for _, i in sorted(ranked, key=lambda r: (r[0], -r[1]))]
    if room_known:
        drop.append(outlook)
    return RankedLines(tuple(lines), tuple(drop))


#: How severe a finding is, by its status's name: the least severe drops first.
_SEVERITY = {"GREEN": 0, "UNKNOWN": 1, "YELLOW": 2, "RED": 3}


def least_room_known(rooms: dict[str, ServerHeadroom]) -> bool:
    """Whether some tablet server's room before its write lock is known."""
    from konsole.model.headroom import least_headroom

    return least_headroom(list(rooms.values())) is not None


def cluster_line(state: ConsoleState) -> Text:
    """``coordinator 127.0.0.1:9123 (+1 standby) · Fluss 1.0 line``."""
    from konsole.ui.screens.cluster_facts import version_text

    snap = state.last_ok
    latest = state.snapshot or snap
    t = Text()
    active = latest.active_coordinator if latest is not None and not state.stale else None
    if active:
        t.append(f"coordinator {active}")
    else:
        t.append("no coordinator answering", style="bold red")
    standby = latest.standby_coordinators if latest is not None else ()
    if standby and not state.stale:
        t.append(f" (+{len(standby)} standby)")
    version = version_text(snap.view) if snap is not None else None
    if version:
        t.append(f" · {version}")
    return t


def outlook_text(state: ConsoleState, rooms: dict[str, ServerHeadroom]) -> Text:
    """``least room 41% (tablet-server 3) · first lock in 2h 10m``, or why unknown."""
    from konsole.model.headroom import least_headroom, soonest_lock

    t = Text()
    servers = list(rooms.values())
    room = least_headroom(servers)
    snap = state.last_ok
    if room is None:
        t.append("room before the write lock unknown", style="dim")
        if snap is not None and snap.capacity is None:
            t.append(" (limits not read)", style="dim")
        return t
    tight = min(servers, key=_room_of)
    style = "bold red" if room <= 0.05 else "yellow" if room <= 0.15 else ""
    t.append(f"least room {room * 100:.0f}%", style=style)
    t.append(f" ({tight.subject})", style="dim")
    eta = soonest_lock(servers, snap.taken_at) if snap is not None else None
    if eta is not None:
        t.append(f" · first lock in {age_text(round(eta))}", style="bold yellow")
    else:
        t.append(" · no lock forecast", style="dim")
    locked = sum(1 for s in servers if s.locked)
    if locked:
        t.append(f" · {locked} LOCKED", style="bold red")
    return t


def rooms_of(state: ConsoleState) -> dict[str, ServerHeadroom]:
    """Each tablet server's room before its write lock, by id (the judged poll's)."""
    return {s.server_id: s for s in state.capacity}


def _room_of(server: ServerHeadroom) -> float:
    """A server's least room (1.0: unknown, never the least)."""
    tight = server.tightest
    ratio = tight.headroom_ratio if tight is not None else None
    return 1.0 if ratio is None else ratio

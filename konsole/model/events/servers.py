"""Tablet servers: server_left / server_joined between two views (metadata membership)."""

from __future__ import annotations

from collections import Counter

from fluss_proto.model import ClusterView
from konsole.model.events.base import (
    Emitter,
    Event,
    EventConfig,
    EventKind,
    Severity,
    plural,
    server_subject,
)
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.subjects import tablet_server

__all__ = ["detect_servers"]


def detect_servers(
    previous: ClusterSnapshot, current: ClusterSnapshot, config: EventConfig
) -> list[Event]:
    """Servers gone from and new in metadata; stateless (two views tell it all)."""
    out = Emitter(current, config)
    if previous.view is not None and current.view is not None:
        _servers(out, previous.view, current.view)
    return out.events


def _servers(out: Emitter, base: ClusterView, cur: ClusterView) -> None:
    before = {s.node_id: s for s in base.tablet_servers}
    now = {s.node_id: s for s in cur.tablet_servers}
    left = sorted(before.keys() - now.keys())
    led = Counter(b.leader_id for b in base.buckets if b.leader_id in left) if left else {}
    for node_id in left:
        n = led.get(node_id, 0)
        out.emit(
            EventKind.SERVER_LEFT,
            Severity.WARNING,
            server_subject(node_id),
            f"{tablet_server(node_id)} ({before[node_id].address}) left; "
            f"it led {plural(n, 'bucket')}",
            {"server": node_id, "address": before[node_id].address, "leaders_before": n},
        )
    for node_id in sorted(now.keys() - before.keys()):
        out.emit(
            EventKind.SERVER_JOINED,
            Severity.INFO,
            server_subject(node_id),
            f"{tablet_server(node_id)} ({now[node_id].address}) joined",
            {"server": node_id, "address": now[node_id].address},
        )

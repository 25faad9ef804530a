"""Console states with a capacity part, for the Capacity screen and the Servers column.

The story's states (``tests/_testutil/console.py``) carry no capacity part; these attach one
to each tablet server of the state's own view, with the metrics a 1.0-line server (or a
0.9.1 one) would give: disk usage, the lock, KV backpressure, requests. Fixed times: every
figure is taken at the snapshot's time, so the screen snapshots are deterministic.

Cases: ``normal`` (room everywhere, slow fills), ``near_lock`` (tablet server 2's second
data dir locks within the hour, tablet server 1 within 6 h), ``locked`` (tablet server 2
has engaged its lock: writes fail), ``unknown_0_9`` (0.9.1: no usage, no lock, no limits;
the dirs' bytes only). :func:`record_capacity_story` writes polls with the ``near_lock``
part into a history, so a past moment is read back through ``capacity_from_values``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Final

from konsole.model.capacity import (
    CapacityPart,
    ConfigSource,
    DirUsage,
    ServerCapacity,
    WriteLimits,
)
from konsole.model.forecast import Forecast
from konsole.model.metrics import ServerMetrics, TableMetrics
from konsole.model.snapshot import ClusterSnapshot
from konsole.ui.state import ConsoleState
from tests._testutil.console import T0, story_snapshot
from tests._testutil.judging import JudgingRecorder, health_of, showing

__all__ = ["CASES", "record_capacity_story", "with_capacity", "with_capacity_snapshot"]

CASES: Final = ("normal", "near_lock", "locked", "unknown_0_9")
MIB: Final = 1024 * 1024
LIMITS: Final = WriteLimits(0.85, 0.80, ConfigSource.INITIAL, ConfigSource.DEFAULT)
WINDOW_S: Final = 3600.0

#: case -> server id -> (the server's usage, each dir's usage, each dir's ETA in seconds).
_USAGE: Final[dict[str, dict[str, tuple[float, tuple[float, ...], tuple[float | None, ...]]]]] = {
    "normal": {
        "1": (0.36, (0.36, 0.22), (3 * 86400.0, None)),
        "2": (0.41, (0.41,), (2 * 86400.0,)),
        "3": (0.46, (0.46,), (None,)),
    },
    "near_lock": {
        "1": (0.62, (0.62, 0.30), (4 * 3600.0, None)),
        "2": (0.83, (0.71, 0.83), (9 * 3600.0, 40 * 60.0)),
        "3": (0.46, (0.46,), (None,)),
    },
    "locked": {
        "1": (0.62, (0.62, 0.30), (4 * 3600.0, None)),
        "2": (0.86, (0.71, 0.86), (9 * 3600.0, 0.0)),
        "3": (0.46, (0.46,), (None,)),
    },
}


def _forecast(level: float, value: float, at: float, eta: float | None) -> Forecast:
    if eta is None:
        return Forecast(level, value, at, WINDOW_S, points=32, span_s=3540.0, why="not rising")
    slope = (level - value) / eta if eta else 0.0001
    return Forecast(
        level,
        value,
        at,
        WINDOW_S,
        eta_s=eta,
        eta_soonest_s=eta * 0.8,
        eta_latest_s=eta * 1.3,
        slope=slope,
        slope_low=slope * 0.77,
        slope_high=slope * 1.25,
        points=32,
        span_s=3540.0,
        confident=True,
    )


def _dirs(sid: str, usage: tuple[float, ...], etas: tuple[float | None, ...], at: float):
    out = []
    for i, (ratio, eta) in enumerate(zip(usage, etas, strict=True)):
        total = 512 * MIB
        free = round(total * (1 - ratio))
        path = f"/data/ts-{sid}/{'ab'[i]}"
        forecast = None if eta is None else _forecast(LIMITS.limit_ratio, ratio, at, eta)
        out.append(DirUsage(path, total, free, forecast=forecast))
    return tuple(out)


def _part(case: str, snap: ClusterSnapshot) -> CapacityPart:
    t = snap.taken_at
    servers = {}
    for sid in snap.tablet_metrics:
        if case == "unknown_0_9":
            dirs = (DirUsage(f"/data/ts-{sid}/a", 512 * MIB, 400 * MIB),)
            why = "the server has no data-disk write lock (0.9.1)"
            servers[sid] = ServerCapacity(sid, None, why, dirs, None, t)
            continue
        ratio, usage, etas = _USAGE[case][sid]
        eta = min((e for e in etas if e is not None), default=None)
        forecast = _forecast(LIMITS.limit_ratio, ratio, t, eta)
        servers[sid] = ServerCapacity(sid, LIMITS, None, _dirs(sid, usage, etas, t), forecast, t)
    return CapacityPart(t, MappingProxyType(servers), WINDOW_S, 600.0)


def _metrics(case: str, m: ServerMetrics) -> ServerMetrics:
    sid = m.server_id or ""
    if m.role != "tablet" or not sid:
        return m
    requests = {"produceLog": (120.0, 0.0), "putKv": (45.0, 0.0), "fetchLogClient": (300.0, 0.0)}
    latency: dict[str, float | None] = {"produceLog": 4.2, "putKv": 7.9, "fetchLogClient": 1.1}
    if case == "unknown_0_9":
        return replace(
            m,
            disk_usage_ratio=None,
            disk_write_locked=None,
            requests=MappingProxyType(requests),
            request_latency_ms=MappingProxyType(latency),
            request_queue_size=0,
        )
    locked = case == "locked" and sid == "2"
    pressure = 0.92 if case != "normal" and sid == "2" else 0.12
    rejected = 1840.0 if locked else 0.0
    if locked:
        requests = {"produceLog": (2.0, 163.7), "putKv": (0.0, 41.0), "fetchLogClient": (300.0, 0)}
        latency = {"produceLog": 310.0, "putKv": None, "fetchLogClient": 1.4}
    return replace(
        m,
        disk_usage_ratio=_USAGE[case][sid][0],
        disk_write_locked=locked,
        tables=(TableMetrics("shop", "orders", pressure, rejected),),
        requests=MappingProxyType(requests),
        request_latency_ms=MappingProxyType(latency),
        request_queue_size=3 if locked else 0,
    )


def with_capacity_snapshot(snap: ClusterSnapshot, case: str) -> ClusterSnapshot:
    """``snap`` with the ``case``'s metrics and capacity part (a failed poll unchanged)."""
    if not snap.ok:
        return snap
    snap = replace(snap, metrics=tuple(_metrics(case, m) for m in snap.metrics))
    return replace(snap, capacity=_part(case, snap))


def with_capacity(state: ConsoleState, case: str) -> ConsoleState:
    """``state`` with the ``case``'s capacity figures on its last good polls."""
    last_ok = state.last_ok
    if last_ok is None:
        return state
    last_ok = with_capacity_snapshot(last_ok, case)
    previous = state.previous_ok
    if previous is not None:
        previous = with_capacity_snapshot(previous, case)
    snapshot = state.snapshot
    if snapshot is not None and snapshot.ok:
        snapshot = with_capacity_snapshot(snapshot, case)
    return showing(
        state, snapshot, last_ok=last_ok, previous_ok=previous, health=health_of(last_ok)
    )


def record_capacity_story(path: Path, *, polls: int = 6, case: str = "near_lock") -> Path:
    """The story's first ``polls`` polls with the ``case``'s capacity figures, recorded."""
    recorder = JudgingRecorder(
        path, say=lambda _text: None, clock=lambda: T0, retention_every_s=1e12
    )
    recorder.open()
    try:
        for seq in range(1, polls + 1):
            recorder.record(with_capacity_snapshot(story_snapshot(seq), case))
    finally:
        recorder.close()
    return path

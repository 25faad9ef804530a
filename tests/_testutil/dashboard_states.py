"""Console states for the Overview dashboard's snapshots, built on the story's states.

``quiet`` (healthy, idle, the last event an hour old), ``busy`` (every server working hard,
one request type failing), ``server_down`` (tablet server 3 stopped: the story's own
moment), ``near_lock`` (capacity_states' case: a data dir locks within the hour) and
``unknown_0_9`` (0.9.1: no disk usage, no lock, no limits, no write p99 yet). Fixed figures
and times, so the pictures are deterministic.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Final

from konsole.model.events import Event, EventKind, Severity, Subject
from konsole.model.metrics import ServerMetrics
from konsole.model.snapshot import ClusterSnapshot
from konsole.ui.state import ConsoleState
from tests._testutil.capacity_states import with_capacity
from tests._testutil.console import T0, T_STOPPED, story_state
from tests._testutil.judging import showing

__all__ = ["CASES", "dashboard_state"]

CASES: Final = ("quiet", "busy", "server_down", "near_lock", "unknown_0_9")


def _cpu(load: dict[str, float | None], **extra: object):  # type: ignore[no-untyped-def]
    def change(m: ServerMetrics) -> ServerMetrics:
        if m.role != "tablet" or m.server_id is None:
            return m
        return replace(m, cpu_load=load.get(m.server_id), **extra)  # type: ignore[arg-type]

    return change


def _each(state: ConsoleState, change) -> ConsoleState:  # type: ignore[no-untyped-def]
    def snap(s: ClusterSnapshot | None) -> ClusterSnapshot | None:
        if s is None or not s.ok:
            return s
        return replace(s, metrics=tuple(change(m) for m in s.metrics))

    return showing(
        state,
        snap(state.snapshot),
        last_ok=snap(state.last_ok),
        previous_ok=snap(state.previous_ok),
    )


def _busy(m: ServerMetrics) -> ServerMetrics:
    if m.role != "tablet" or m.server_id is None:
        return m
    sid = int(m.server_id)
    requests = {
        "produceLog": (900.0 * sid, 0.0),
        "putKv": (310.0, 12.5 if sid == 2 else 0.0),
        "fetchLogClient": (2400.0, 0.0),
        "metadata": (3.0, 0.0),
    }
    latency = {"produceLog": 18.0 + sid, "putKv": 95.0 if sid == 2 else 9.0, "fetchLogClient": 2.0}
    return replace(
        m,
        cpu_load={1: 0.62, 2: 0.91, 3: 0.55}[sid],
        bytes_in_rate=m.bytes_in_rate * 40 if m.bytes_in_rate is not None else None,
        bytes_out_rate=m.bytes_out_rate * 90 if m.bytes_out_rate is not None else None,
        messages_in_rate=m.messages_in_rate * 40 if m.messages_in_rate is not None else None,
        requests=MappingProxyType(requests),
        request_latency_ms=MappingProxyType(latency),
    )


def dashboard_state(case: str, normal: ConsoleState, story: Path) -> ConsoleState:
    """The ``case``'s state; ``normal`` is the snapshots' ``normal`` console state and
    ``story`` the whole story's history (for the server that stopped)."""
    cpu = _cpu({"1": 0.04, "2": 0.05, "3": 0.03})
    if case == "quiet":
        joined = Event(
            time=T0 - 3600,
            kind=EventKind.SERVER_JOINED,
            severity=Severity.INFO,
            subject=Subject("server", "tablet-server 3"),
            message="tablet-server 3 (127.0.0.1:9203) joined",
        )
        return replace(_each(with_capacity(normal, "normal"), cpu), events=(joined,))
    if case == "busy":
        return _each(with_capacity(normal, "normal"), _busy)
    if case == "server_down":
        return _each(with_capacity(story_state(story, T_STOPPED + 25), "normal"), cpu)
    if case == "near_lock":
        return _each(with_capacity(normal, "near_lock"), cpu)
    if case == "unknown_0_9":
        return _each(with_capacity(normal, "unknown_0_9"), cpu)
    raise ValueError(f"no dashboard case {case!r}")

"""Storage tiers: tiering_stalled / tiering_resumed, kv_snapshot_stale, lake_lag_high.

Judged once per storage part (a new ``taken_at``), by :func:`konsole.model.storage.trouble`,
the same judgement the health rules read: a table is reported when it starts being behind,
once; tiering_resumed when a stalled table's tiering moves again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from konsole.model.events.base import Emitter, Event, EventConfig, EventKind, Severity, Subject
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.storage import StorageTrouble, TableSummary
from konsole.model.timefmt import age_text

__all__ = ["StorageState", "detect_storage"]

#: An event's message: (table name, its summary) -> text.
Message = Callable[[str, TableSummary], str]


@dataclass(frozen=True, slots=True)
class StorageState:
    #: The storage part last judged (its taken_at), and the tables behind at it.
    judged_at: float | None = None
    stalled: frozenset[str] = frozenset()
    stale_kv: frozenset[str] = frozenset()
    lake_behind: frozenset[str] = frozenset()


def detect_storage(
    state: StorageState, current: ClusterSnapshot, config: EventConfig, found: StorageTrouble
) -> tuple[list[Event], StorageState]:
    """Events for a storage part not judged before; nothing between storage polls
    (``found``: the poll's storage judgement, derived once as it is judged)."""
    part = current.storage
    if part is None or part.taken_at == state.judged_at:
        return [], state
    out = Emitter(current, config)
    started: list[tuple[EventKind, Mapping[str, TableSummary], frozenset[str], Message]] = [
        (
            EventKind.TIERING_STALLED,
            found.stalled,
            state.stalled,
            lambda n, s: (
                f"table {n}: tiering stalled on {s.stalled_buckets} bucket(s), remote "
                f"end unchanged for {_seconds(s.tiering_age_s)} while the log grew "
                f"({_offsets(s.untiered)} not tiered)"
            ),
        ),
        (
            EventKind.KV_SNAPSHOT_STALE,
            found.stale_kv,
            state.stale_kv,
            lambda n, s: (
                f"table {n}: no new KV snapshot for {_seconds(s.kv_age_s)} on "
                f"{s.stale_kv_buckets} bucket(s) taking writes"
            ),
        ),
        (
            EventKind.LAKE_LAG_HIGH,
            found.lake_behind,
            state.lake_behind,
            lambda n, s: f"table {n}: {_offsets(s.lake_lag)} not yet in the lake snapshot",
        ),
    ]
    for kind, now, before, message in started:
        for name in sorted(now.keys() - before):
            s = now[name]
            out.emit(kind, Severity.WARNING, Subject("table", name), message(name, s), _figures(s))
        if kind is EventKind.TIERING_STALLED:
            for name in sorted(before - now.keys()):
                out.emit(
                    EventKind.TIERING_RESUMED,
                    Severity.INFO,
                    Subject("table", name),
                    f"table {name}: tiering is moving again",
                )
    return out.events, StorageState(
        part.taken_at,
        frozenset(found.stalled),
        frozenset(found.stale_kv),
        frozenset(found.lake_behind),
    )


def _figures(s: TableSummary) -> dict[str, object]:
    return {
        "untiered_offsets": s.untiered,
        "tiering_age_s": s.tiering_age_s,
        "kv_snapshot_age_s": s.kv_age_s,
        "lake_lag": s.lake_lag,
        "stalled_buckets": s.stalled_buckets,
        "stale_kv_buckets": s.stale_kv_buckets,
    }


def _seconds(value: float | None) -> str:
    return "an unknown time" if value is None else age_text(value)


def _offsets(value: int | None) -> str:
    return "an unknown number of offsets" if value is None else f"{value} offsets"

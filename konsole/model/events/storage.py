"""Storage tiers: tiering_stalled / tiering_resumed, kv_snapshot_stale, lake_lag_high.

Judged once per storage part (a new ``taken_at``), by :func:`konsole.model.storage.trouble`,
the same judgement the health rules read: a table is reported when it starts being behind,
once; tiering_resumed when a stalled table's tiering moves again.
"""

from __future__ import annotations

from dataclasses import dataclass

from konsole.model.events.base import Emitter, Event, EventConfig, EventKind, Severity, Subject
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.storage import StorageLimits, TableSummary, trouble
from konsole.model.timefmt import age_text

__all__ = ["StorageState", "detect_storage"]


@dataclass(frozen=True, slots=True)
class StorageState:
    #: The storage part last judged (its taken_at), and the tables behind at it.
    judged_at: float | None = None
    stalled: frozenset[str] = frozenset()
    stale_kv: frozenset[str] = frozenset()
    lake_behind: frozenset[str] = frozenset()


def detect_storage(
    state: StorageState, current: ClusterSnapshot, config: EventConfig
) -> tuple[list[Event], StorageState]:
    """Events for a storage part not judged before; nothing between storage polls."""
    part = current.storage
    if part is None or part.taken_at == state.judged_at:
        return [], state
    out = Emitter(current, config)
    found = trouble(part, StorageLimits.of(config.rules))
    for name in sorted(found.stalled.keys() - state.stalled):
        s = found.stalled[name]
        out.emit(
            EventKind.TIERING_STALLED,
            Severity.WARNING,
            Subject("table", name),
            f"table {name}: tiering stalled on {s.stalled_buckets} bucket(s), remote end "
            f"unchanged for {_age(s)} while the log grew ({_offsets(s.untiered)} not tiered)",
            _figures(s),
            count=s.stalled_buckets,
        )
    for name in sorted(state.stalled - found.stalled.keys()):
        out.emit(
            EventKind.TIERING_RESUMED,
            Severity.INFO,
            Subject("table", name),
            f"table {name}: tiering is moving again",
        )
    for name in sorted(found.stale_kv.keys() - state.stale_kv):
        s = found.stale_kv[name]
        out.emit(
            EventKind.KV_SNAPSHOT_STALE,
            Severity.WARNING,
            Subject("table", name),
            f"table {name}: no new KV snapshot for {_seconds(s.kv_age_s)} on "
            f"{s.stale_kv_buckets} bucket(s) taking writes",
            _figures(s),
            count=s.stale_kv_buckets,
        )
    for name in sorted(found.lake_behind.keys() - state.lake_behind):
        s = found.lake_behind[name]
        out.emit(
            EventKind.LAKE_LAG_HIGH,
            Severity.WARNING,
            Subject("table", name),
            f"table {name}: {_offsets(s.lake_lag)} not yet in the lake snapshot",
            _figures(s),
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


def _age(s: TableSummary) -> str:
    return _seconds(s.tiering_age_s)


def _seconds(value: float | None) -> str:
    return "an unknown time" if value is None else age_text(value)


def _offsets(value: int | None) -> str:
    return "an unknown number of offsets" if value is None else f"{value} offsets"

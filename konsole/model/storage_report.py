"""The storage part as one JSON-able report: ``konsole storage`` prints it, the console's
Storage screen shows the same rows (every figure is defined once, in konsole.model.storage).

Unknown is ``None`` (JSON ``null``), never 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fluss_proto.model import ClusterView
from konsole.model.health import HealthRules
from konsole.model.metrics import ServerMetrics
from konsole.model.placement import Placement
from konsole.model.storage import (
    BucketStorage,
    StoragePart,
    kv_age,
    kv_behind,
    lake_lag,
    server_load,
    summaries,
    tiering_age,
    untiered,
)

__all__ = ["bucket_dict", "storage_dict"]


def bucket_dict(b: BucketStorage, now: float) -> dict[str, Any]:
    return {
        "partition": b.partition_name,
        "bucket": b.bucket_id,
        "leader": b.leader_id,
        "log_start_offset": b.log_start,
        "log_end_offset": b.log_end,
        "remote_log_end_offset": b.remote_end,
        "untiered_offsets": untiered(b),
        "tiering_age_s": tiering_age(b, now),
        "tiering_age_is_lower_bound": not b.remote_changed,
        "kv_snapshot_id": b.kv_snapshot_id,
        "kv_snapshot_log_offset": b.kv_log_offset,
        "kv_snapshot_age_s": kv_age(b, now),
        "kv_snapshot_age_is_lower_bound": not b.kv_changed,
        "kv_offsets_behind": kv_behind(b),
        "lake_log_offset": b.lake_log_offset,
        "lake_lag": lake_lag(b),
        "row_count": b.row_count,
    }


def storage_dict(
    part: StoragePart | None,
    view: ClusterView | None,
    placement: Placement | None,
    rules: HealthRules | None = None,
    *,
    table: str | None = None,
    metrics: Sequence[ServerMetrics] = (),
) -> dict[str, Any]:
    """Every table (or ``table`` only) with its buckets, retention and the servers' load
    (``placement``: that of ``view``, derived as its poll was judged; bytes from the
    servers' scrapes in ``metrics``); ``rules`` None: the default limits."""
    load = server_load(view, metrics, placement=placement)
    servers = [s.as_dict() for s in load]
    if part is None:
        return {
            "taken_at": None,
            "capabilities": None,
            "tables": [],
            "servers": servers,
            "errors": ["no storage poll finished"],
        }
    now = part.taken_at
    rules = rules or HealthRules()
    rows = summaries(
        part, now, stall_after_s=rules.tiering_stall_s, kv_stale_after_s=rules.kv_snapshot_stale_s
    )
    tables = []
    for row in rows:
        if table is not None and row.name != table:
            continue
        info = part.table(row.name)
        item = row.as_dict()
        if info is not None:
            item["retention"] = dict(info.retention)
            item["lake_enabled"] = info.lake_enabled
            item["lake_snapshot_id"] = info.lake_snapshot_id
            item["lake_note"] = info.lake_note
        item["bucket_detail"] = [bucket_dict(b, now) for b in part.buckets_of(row.table_id)]
        tables.append(item)
    return {
        "taken_at": part.taken_at,
        "latency_s": part.latency_s,
        "capabilities": part.capabilities.as_dict(),
        "requests": part.requests,
        "deferred_tables": part.deferred,
        "tables": tables,
        "servers": servers,
        "errors": list(part.errors),
    }

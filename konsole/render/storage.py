"""The storage part as JSON and as text: ``konsole storage`` prints these, the console's
Storage screen shows the same rows (one definition of every figure: konsole.model.storage).

Unknown is ``null`` in JSON and ``-`` in text, never 0.
"""

from __future__ import annotations

from typing import Any

from fluss_proto.model import ClusterView
from konsole.model.health import HealthRules
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
from konsole.model.timefmt import age_text

__all__ = ["bucket_dict", "storage_dict", "storage_text"]


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
    rules: HealthRules,
    *,
    table: str | None = None,
) -> dict[str, Any]:
    """Every table (or ``table`` only) with its buckets, retention and the servers' load."""
    servers = [s.as_dict() for s in server_load(view)]
    if part is None:
        return {
            "taken_at": None,
            "capabilities": None,
            "tables": [],
            "servers": servers,
            "errors": ["no storage poll finished"],
        }
    now = part.taken_at
    rows = summaries(
        part, now, stall_after_s=rules.tiering_stall_s, kv_stale_after_s=rules.kv_snapshot_stale_s
    )
    tables = []
    for row in rows:
        if table is not None and row.name != table:
            continue
        facts = part.table(row.name)
        item = row.as_dict()
        if facts is not None:
            item["retention"] = dict(facts.retention)
            item["lake_enabled"] = facts.lake_enabled
            item["lake_snapshot_id"] = facts.lake_snapshot_id
            item["lake_note"] = facts.lake_note
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


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)


def storage_text(report: dict[str, Any]) -> str:
    """``storage_dict``'s answer for a person: one line per table, then the servers."""
    lines = [
        f"{'TABLE':<32} {'TIERS':<24} {'UNTIERED':>9} {'TIER AGE':>9} {'KV AGE':>8} "
        f"{'LAKE LAG':>9} {'ROWS':>9}  LOG TTL"
    ]
    for t in report["tables"]:
        flag = " STALLED" if t["stalled_buckets"] else ""
        flag += " KV-STALE" if t["stale_kv_buckets"] else ""
        lines.append(
            f"{t['table']:<32} {','.join(t['tiers']):<24} {_n(t['untiered_offsets']):>9} "
            f"{age_text(t['tiering_age_s']):>9} {age_text(t['kv_snapshot_age_s']):>8} "
            f"{_n(t['lake_lag']):>9} {_n(t['row_count']):>9}  {t['log_ttl'] or 'default'}{flag}"
        )
    lines.append("")
    lines.append(f"{'SERVER':<8} {'REPLICAS':>8} {'LEADERS':>8} {'TABLES':>7}  BYTES")
    for s in report["servers"]:
        held = "-" if s["bytes_held"] is None else str(s["bytes_held"])
        lines.append(
            f"{s['server']:<8} {s['replicas']:>8} {s['leaders']:>8} {s['tables']:>7}  {held}"
        )
    for error in report["errors"]:
        lines.append(f"not read: {error}")
    return "\n".join(lines)

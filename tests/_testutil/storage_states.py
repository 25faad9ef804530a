"""Console states with a storage part, for the Storage screen and tab tests.

The story's states (``tests/_testutil/console.py``) carry no storage part; these attach one
built from each state's own view, so the tables and buckets agree with what the other
screens show. Fixed times: the part is taken at the snapshot's time.
"""

from __future__ import annotations

from konsole.model.storage import (
    BucketStorage,
    StorageCapabilities,
    StoragePart,
    TableStorage,
)
from konsole.ui.state import ConsoleState
from tests._testutil.judging import health_of, showing

__all__ = ["FULL", "OLD", "with_storage"]

#: What a 1.0-line cluster advertises, and a 0.9.1 one (no remote log listing).
FULL = StorageCapabilities(remote_manifests=True, kv_snapshots=True, table_stats=True)
OLD = StorageCapabilities(kv_snapshots=True, table_stats=True)


def with_storage(
    state: ConsoleState,
    *,
    caps: StorageCapabilities = FULL,
    stalled: str | None = None,
) -> ConsoleState:
    """``state`` with a storage part over its view; ``stalled`` names a table whose remote
    end stood still for 20 minutes while its log grew."""
    snap = state.last_ok
    if snap is None or snap.view is None:
        return state
    t = snap.taken_at
    tables, buckets = [], []
    for table in snap.view.tables:
        info = table.info
        if info is None or table.table_id is None:
            continue
        name = str(table.path)
        tables.append(
            TableStorage(
                table.table_id,
                name,
                info.is_pk_table,
                bool(info.partition_keys),
                {"table.log.ttl": "3 d"} if name.endswith("orders") else {},
            )
        )
        for b in table.buckets:
            end = b.latest_offset
            remote = None
            if caps.remote_manifests and end is not None and not info.is_pk_table:
                remote = end - (end // 3 if name == stalled else min(end, 40))
            kv_id = 7 + b.bucket_id if info.is_pk_table else None
            buckets.append(
                BucketStorage(
                    table_id=b.table_id,
                    partition_id=b.partition_id,
                    partition_name=b.partition_name,
                    bucket_id=b.bucket_id,
                    leader_id=b.leader_id,
                    log_start=0 if end is not None else None,
                    log_end=end,
                    remote_end=remote,
                    remote_since=(t - 1200 if name == stalled else t - 25) if remote else None,
                    remote_changed=name != stalled,
                    log_end_at_remote=remote,
                    kv_snapshot_id=kv_id,
                    kv_log_offset=(end - 5) if kv_id is not None and end else None,
                    kv_since=t - 240 if kv_id is not None else None,
                    kv_changed=kv_id is not None,
                    log_end_at_kv=(end - 5) if kv_id is not None and end else None,
                    row_count=end if caps.table_stats else None,
                )
            )
    part = StoragePart(t, 0.02, caps, tuple(tables), tuple(buckets), requests=len(tables))
    last_ok = snap.with_storage(part)
    snapshot = state.snapshot.with_storage(part) if state.snapshot is not None else None
    # The health as the console evaluates it on the snapshot with its storage part.
    return showing(
        state,
        snapshot,
        last_ok=last_ok,
        previous_ok=state.previous_ok,
        health=health_of(last_ok),
    )

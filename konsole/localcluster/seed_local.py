"""The demo seed on a local cluster, with the one cure for a leaderless table that no
client request gives: a coordinator restart.

A 0.9.1 coordinator under load can miss a table's creation (its ZooKeeper watcher, see
konsole.localcluster.seed.LEADERS_WITHIN_S); the seed creates such a table anew. But a
partition created on a table the coordinator missed makes it fail while building its
request to the replicas (a NullPointerException, the table's path unknown) and leaves that
request half built: from then on every new bucket fails ("The NotifyLeaderAndIsr batch
request ... is not empty while creating a new one"), so no new table or partition gets a
leader until the coordinator starts again, which loads every table from ZooKeeper.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from konsole.localcluster.cluster import LocalCluster
from konsole.localcluster.seed import SeedError, SeedReport, seed_demo

__all__ = ["restart_coordinator", "seed_local", "seed_local_sync"]

#: A graceful stop first (a killed coordinator's ZooKeeper registration outlives it by the
#: session timeout, which the next one would wait out); both bounds fit a loaded machine.
_STOP_S = 60.0
_READY_S = 120.0


def restart_coordinator(lc: LocalCluster) -> int:
    """Stop the active coordinator and start it again (waits until it is ready); its id."""
    cid = lc.active_coordinator()
    cid = 0 if cid is None else cid
    lc.stop_server("coordinator", cid, timeout=_STOP_S)
    lc.start_server("coordinator", cid, ready_timeout=_READY_S)
    return cid


async def seed_local(
    lc: LocalCluster,
    bootstrap: str,
    *,
    say: Callable[[str], None] | None = None,
    **seed: Any,
) -> SeedReport:
    """:func:`~konsole.localcluster.seed.seed_demo` on ``lc`` (through ``bootstrap``, with
    ``seed``'s arguments); when a table's buckets got no leader even when created anew, the
    coordinator is restarted once and the seed run again (it completes what is missing)."""
    tell = say or (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        return await seed_demo(bootstrap, **seed)
    except SeedError as exc:
        if not exc.leaderless:
            raise
        tell(f"{exc}; restarting the coordinator and seeding again")
    cid = await asyncio.to_thread(restart_coordinator, lc)
    tell(f"coordinator {cid} restarted")
    return await seed_demo(bootstrap, **seed)


def seed_local_sync(lc: LocalCluster, bootstrap: str, **seed: Any) -> SeedReport:
    """Blocking :func:`seed_local` for CLI code (not from inside a running event loop)."""
    return asyncio.run(seed_local(lc, bootstrap, **seed))

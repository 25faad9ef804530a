"""Leaders and placement between two views: leaders_moved, bucket_offline, bucket_online,
replicas_offline.

Only buckets present in both views are compared:
- bucket_offline: a bucket that was online and is now offline by
  :mod:`konsole.model.placement`'s rule (no leader, or a leader that is not alive: its
  leader gone, or its server gone while metadata still names it), grouped by the leader
  it had;
- bucket_online: a bucket that was offline and is online now, grouped by its new leader;
- leaders_moved: one leader -> another, grouped by the leader it left (a bucket whose
  old leader was gone is also bucket_online: both are true).
So the buckets these events name are the ones placement counts: the overview, ``check``
and the events agree. replicas_offline comes once per server that newly holds replicas
while not alive, with placement's count for that server.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping

from fluss_proto.model import BucketView, ClusterView, TableView
from konsole.model.events.base import (
    Emitter,
    Event,
    EventConfig,
    EventKind,
    Severity,
    plural,
    server_subject,
)
from konsole.model.placement import Placement, alive_servers
from konsole.model.snapshot import ClusterSnapshot, bucket_name, table_names
from konsole.model.subjects import tablet_server

__all__ = ["detect_leaders"]


def detect_leaders(
    previous: ClusterSnapshot,
    current: ClusterSnapshot,
    config: EventConfig,
    *,
    now: Placement,
    before: Placement,
) -> list[Event]:
    """The leader and placement changes from ``previous`` to ``current``; stateless.

    ``now`` and ``before``: the placements of ``current`` and ``previous``, each derived
    once as its poll was judged.
    """
    out = Emitter(current, config)
    base, cur = previous.view, current.view
    if base is None or cur is None:
        return out.events
    names_now = table_names(cur)
    changed = list(_changed(base, cur))
    _moved(out, changed, cur, names_now)
    _offline_and_online(out, base, cur, now, names_now, bool(changed), before)
    _replicas_offline(out, cur, now, before)
    return out.events


def _moved(
    out: Emitter,
    changed: list[tuple[BucketView, BucketView]],
    cur: ClusterView,
    names_now: Mapping[int, str],
) -> None:
    moved: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for bucket, old in changed:
        was, now = old.leader_id, bucket.leader_id
        if was is not None and now is not None:
            moved[was].append((bucket_name(cur, bucket, names_now), now))
    for server, items in sorted(moved.items()):
        to = Counter(new for _, new in items)
        targets = ", ".join(f"{tablet_server(s)}: {n}" for s, n in sorted(to.items()))
        out.emit(
            EventKind.LEADERS_MOVED,
            Severity.INFO,
            server_subject(server),
            f"{plural(len(items), 'bucket leader')} moved off {tablet_server(server)} ({targets})",
            {"from": server, "to": {str(s): n for s, n in sorted(to.items())}},
            count=len(items),
            samples=(name for name, _ in items),
        )


def _offline_and_online(
    out: Emitter,
    base: ClusterView,
    cur: ClusterView,
    now: Placement,
    names_now: Mapping[int, str],
    leaders_changed: bool,
    earlier: Placement,
) -> None:
    """Buckets that crossed placement's offline line, either way, between the views."""
    if not leaders_changed and alive_servers(base) == now.alive:
        return  # same leaders on the same servers: nothing crossed (a steady poll)
    before = {_key(b): b for t in base.tables for b in t.buckets}
    was_offline = {_key(b) for b in earlier.offline}
    is_offline = {_key(b) for b in now.offline}
    offline: dict[int, list[str]] = defaultdict(list)
    online: dict[int, list[str]] = defaultdict(list)
    for bucket in cur.buckets:
        key = _key(bucket)
        old = before.get(key)
        if old is None or (key in was_offline) == (key in is_offline):
            continue
        if key in is_offline and old.leader_id is not None:
            offline[old.leader_id].append(bucket_name(cur, bucket, names_now))
        elif key not in is_offline and bucket.leader_id is not None:
            online[bucket.leader_id].append(bucket_name(cur, bucket, names_now))
    _by_server(
        out,
        EventKind.BUCKET_OFFLINE,
        Severity.CRITICAL,
        offline,
        "previous_leader",
        lambda n, s: f"{plural(n, 'bucket')} lost their leader (was {tablet_server(s)})",
    )
    _by_server(
        out,
        EventKind.BUCKET_ONLINE,
        Severity.INFO,
        online,
        "leader",
        lambda n, s: f"{plural(n, 'bucket')} have a leader again ({tablet_server(s)})",
    )


def _replicas_offline(out: Emitter, cur: ClusterView, now: Placement, earlier: Placement) -> None:
    """One event per server newly holding replicas while not alive."""
    if not now.replicas_offline:
        return
    gone_before = earlier.replicas_offline
    names_now = table_names(cur)
    gone = {
        server: [bucket_name(cur, b, names_now) for b in buckets]
        for server, buckets in now.replicas_offline.items()
        if not gone_before.get(server)
    }
    _by_server(
        out,
        EventKind.REPLICAS_OFFLINE,
        Severity.WARNING,
        gone,
        "server",
        lambda n, s: f"{plural(n, 'replica')} placed on {tablet_server(s)}, which is not alive",
    )


def _by_server(
    out: Emitter,
    kind: EventKind,
    severity: Severity,
    groups: Mapping[int, list[str]],
    key: str,
    message: Callable[[int, int], str],
) -> None:
    """One event per server: ``groups`` maps it to bucket names, ``key`` names it in details."""
    for server, names in sorted(groups.items()):
        out.emit(
            kind,
            severity,
            server_subject(server),
            message(len(names), server),
            {key: server, "tables": _per_table(names)},
            count=len(names),
            samples=names,
        )


def _key(bucket: BucketView) -> tuple[int, int | None, int]:
    return bucket.table_id, bucket.partition_id, bucket.bucket_id


def _leaders(table: TableView) -> list[tuple[int | None, int, int | None]]:
    return [(b.partition_id, b.bucket_id, b.leader_id) for b in table.buckets]


def _changed(base: ClusterView, cur: ClusterView) -> Iterator[tuple[BucketView, BucketView]]:
    """(current, previous) for each bucket present in both whose leader changed.

    Tables whose buckets kept their leaders are skipped in one comparison each: on a
    steady cluster this is the whole work of a poll.
    """
    before = {t.table_id: t for t in base.tables if t.table_id is not None}
    for table in cur.tables:
        old_table = before.get(table.table_id) if table.table_id is not None else None
        if old_table is None or _leaders(old_table) == _leaders(table):
            continue
        old = {_key(b): b for b in old_table.buckets}
        for bucket in table.buckets:
            previous = old.get(_key(bucket))
            if previous is not None and previous.leader_id != bucket.leader_id:
                yield bucket, previous


def _per_table(names: Iterable[str]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for name in names:
        counts[name.partition("[")[0].partition("#")[0]] += 1
    return dict(sorted(counts.items()))

"""The catalog between two views: tables created/dropped (grouped per database past a
bound), partitions created/dropped (grouped per table), schema changed.

A table recreated under the same name (a new table id) is dropped then created. Tables
of a database that could not be listed this poll are not reported dropped: they are
carried (:func:`unlisted_after`) and compared when the database is listed again, so that
they neither come back as "created" nor leave a drop in between unsaid.
"""

from __future__ import annotations

from collections import defaultdict

from fluss_proto.model import ClusterView, TableView
from konsole.model.events.base import (
    Emitter,
    Event,
    EventConfig,
    EventKind,
    Severity,
    Subject,
    plural,
)
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["detect_tables", "unlisted_after"]


def detect_tables(
    previous: ClusterSnapshot,
    current: ClusterSnapshot,
    config: EventConfig,
    unlisted: tuple[TableView, ...] = (),
) -> list[Event]:
    """The catalog changes from ``previous`` (and the tables ``unlisted`` since: see
    :func:`unlisted_after`) to ``current``."""
    out = Emitter(current, config)
    if previous.view is not None and current.view is not None:
        _tables(out, (*unlisted, *previous.view.tables), current.view, config)
    return out.events


def unlisted_after(
    previous: ClusterSnapshot | None, unlisted: tuple[TableView, ...], current: ClusterSnapshot
) -> tuple[TableView, ...]:
    """The tables of the databases ``current`` could not list, as last seen (in
    ``previous``, or ``unlisted`` before it when that poll could not list them either)."""
    unread = _unread(current.view) if current.view is not None else set()
    if not unread:
        return ()
    seen = previous.view.tables if previous is not None and previous.view is not None else ()
    last = {str(t.path): t for t in (*unlisted, *seen) if t.path.database in unread}
    return tuple(last.values())


def _unread(view: ClusterView) -> set[str]:
    return {e.subject for e in view.errors if e.scope == "database"}


def _tables(
    out: Emitter, base: tuple[TableView, ...], cur: ClusterView, config: EventConfig
) -> None:
    before = {str(t.path): t for t in base}
    now = {str(t.path): t for t in cur.tables}
    unread = _unread(cur)
    created = [n for n, t in now.items() if n not in before or _recreated(before[n], t)]
    dropped = [
        n
        for n, t in before.items()
        if (n not in now and t.path.database not in unread) or (n in now and _recreated(t, now[n]))
    ]
    group = config.group_tables_over
    _catalog(out, group, EventKind.TABLE_DROPPED, Severity.WARNING, "dropped", dropped)
    _catalog(out, group, EventKind.TABLE_CREATED, Severity.INFO, "created", created)
    for name, table in sorted(now.items()):
        old = before.get(name)
        if old is None or _recreated(old, table):
            continue
        _partitions(out, name, old, table)
        if (
            old.info is not None
            and table.info is not None
            and old.info.schema_id != table.info.schema_id
        ):
            out.emit(
                EventKind.SCHEMA_CHANGED,
                Severity.INFO,
                Subject("table", name),
                f"table {name}: schema {old.info.schema_id} -> {table.info.schema_id}",
                {
                    "old_schema_id": old.info.schema_id,
                    "new_schema_id": table.info.schema_id,
                },
            )


def _catalog(
    out: Emitter,
    group_over: int,
    kind: EventKind,
    severity: Severity,
    verb: str,
    names: list[str],
) -> None:
    by_db: dict[str, list[str]] = defaultdict(list)
    for name in names:
        by_db[name.partition(".")[0]].append(name)
    for db, items in sorted(by_db.items()):
        if len(items) > group_over:
            out.emit(
                kind,
                severity,
                Subject("table", f"{db}.*"),
                f"{plural(len(items), 'table')} {verb} in database {db}",
                {"database": db},
                count=len(items),
                samples=items,
            )
            continue
        for name in sorted(items):
            out.emit(kind, severity, Subject("table", name), f"table {name} {verb}", {})


def _partitions(out: Emitter, name: str, old: TableView, new: TableView) -> None:
    before = {p.partition_id: p.name for p in old.partitions}
    now = {p.partition_id: p.name for p in new.partitions}
    for kind, verb, ids, names in (
        (EventKind.PARTITION_DROPPED, "dropped", before.keys() - now.keys(), before),
        (EventKind.PARTITION_CREATED, "created", now.keys() - before.keys(), now),
    ):
        if not ids:
            continue
        items = sorted(names[i] for i in ids)
        subject = (
            Subject("partition", f"{name}[{items[0]}]")
            if len(items) == 1
            else Subject("table", name)
        )
        out.emit(
            kind,
            Severity.INFO,
            subject,
            f"table {name}: {plural(len(items), 'partition')} {verb}",
            {"table": name},
            count=len(items),
            samples=items,
        )


def _recreated(old: TableView, new: TableView) -> bool:
    return old.table_id is not None and new.table_id is not None and old.table_id != new.table_id

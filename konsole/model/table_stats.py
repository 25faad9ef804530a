"""Per-table and per-bucket figures the Tables and Table detail screens show (no Textual).

Bucket counts (offline, under-replicated) are :mod:`konsole.model.placement`'s, per table.
Rates come from two successful polls: the high watermarks of ``current`` minus those of
``previous`` over the time between them, summed over the buckets known in both (a
re-created table has a new id and so no rate yet). A bucket whose offset went down
(truncation, a new leader behind) gives no rate rather than a negative one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from fluss_proto.model import BucketView, TableView
from konsole.model.placement import Placement, TablePlacement, alive_servers
from konsole.model.snapshot import ClusterSnapshot

__all__ = [
    "BucketKey",
    "FiguresMemo",
    "TableFigures",
    "bucket_rates",
    "table_figures",
    "tables_bucket_rates",
]

#: (partition id, bucket id)
BucketKey = tuple[int | None, int]


@dataclass(frozen=True, slots=True)
class TableFigures:
    path: str
    database: str
    table: str
    #: True: primary-key table, False: log table, None: metadata unreadable.
    primary_key: bool | None
    buckets: int
    partitions: int
    #: Rows per second from offset deltas; None when unknown.
    rows_per_s: float | None
    #: Sum of (latest - earliest) over buckets where both are known; None if none is.
    offset_span: int | None
    #: Buckets with a replica on a server that is not alive (placement; no server reports
    #: replication per table).
    under_replicated: int
    #: Buckets without an alive leader (placement).
    offline: int
    error: str | None = None


def _id(table: TableView) -> int:
    # Table ids start at 0: ``table_id or -1`` would give the first table no rate.
    return -1 if table.table_id is None else table.table_id


def _latest_by_table(snapshot: ClusterSnapshot | None) -> dict[int, dict[BucketKey, int]]:
    out: dict[int, dict[BucketKey, int]] = {}
    if snapshot is None or snapshot.view is None:
        return out
    for t in snapshot.view.tables:
        if t.table_id is None:
            continue
        out[t.table_id] = _offsets(t)
    return out


def _offsets(table: TableView) -> dict[BucketKey, int]:
    """(partition, bucket) -> latest offset, for the buckets whose latest offset is known."""
    return {
        (b.partition_id, b.bucket_id): b.latest_offset
        for b in table.buckets
        if b.latest_offset is not None
    }


def _dt(current: ClusterSnapshot, previous: ClusterSnapshot | None) -> float | None:
    if previous is None or previous.view is None:
        return None
    dt = current.taken_at - previous.taken_at
    return dt if dt > 0 else None


def bucket_rates(
    table: TableView, current: ClusterSnapshot, previous: ClusterSnapshot | None
) -> dict[BucketKey, float | None]:
    """(partition, bucket) -> rows/s for one table's buckets (None: unknown)."""
    dt = _dt(current, previous)
    prior = _table_in(previous, table) if dt else None
    return _bucket_rates(table, {} if prior is None else _offsets(prior), dt)


def tables_bucket_rates(
    current: ClusterSnapshot, previous: ClusterSnapshot | None
) -> Iterator[tuple[TableView, dict[BucketKey, float | None]]]:
    """:func:`bucket_rates` of every table of ``current``, in the poll's order: the
    previous poll's offsets are read once, not once per table."""
    if current.view is None:
        return
    dt = _dt(current, previous)
    before = _latest_by_table(previous) if dt else {}
    for t in current.view.tables:
        yield t, _bucket_rates(t, before.get(_id(t), {}), dt)


def _table_in(snapshot: ClusterSnapshot | None, table: TableView) -> TableView | None:
    """``table`` (by id) in ``snapshot``'s view, if there."""
    if snapshot is None or snapshot.view is None or table.table_id is None:
        return None
    return next((t for t in snapshot.view.tables if t.table_id == table.table_id), None)


def _bucket_rates(
    table: TableView, before: dict[BucketKey, int], dt: float | None
) -> dict[BucketKey, float | None]:
    out: dict[BucketKey, float | None] = {}
    for b in table.buckets:
        key = (b.partition_id, b.bucket_id)
        old = before.get(key)
        if dt is None or old is None or b.latest_offset is None or b.latest_offset < old:
            out[key] = None
        else:
            out[key] = (b.latest_offset - old) / dt
    return out


def _table_rate(
    table: TableView, before: dict[BucketKey, int] | None, dt: float | None
) -> float | None:
    if dt is None or before is None:
        return None
    delta = 0
    known = 0
    for b in table.buckets:
        old = before.get((b.partition_id, b.bucket_id))
        if old is None or b.latest_offset is None:
            continue
        if b.latest_offset < old:
            return None
        delta += b.latest_offset - old
        known += 1
    return delta / dt if known else None


def _span(buckets: Iterable[BucketView]) -> int | None:
    total, known = 0, False
    for b in buckets:
        if b.latest_offset is not None and b.earliest_offset is not None:
            total += max(0, b.latest_offset - b.earliest_offset)
            known = True
    return total if known else None


def table_figures(
    current: ClusterSnapshot | None,
    previous: ClusterSnapshot | None,
    placement: Placement | None,
) -> list[TableFigures]:
    """One entry per table of ``current`` (a successful poll), in the poll's order;
    ``placement``: its placement, derived once as the poll was judged."""
    if current is None or current.view is None:
        return []
    view = current.view
    where = _given(placement)
    dt = _dt(current, previous)
    before = _latest_by_table(previous) if dt else {}
    return [_figures(t, before.get(_id(t)), dt, where.table(t.table_id)) for t in view.tables]


def _given(placement: Placement | None) -> Placement:
    if placement is None:
        raise ValueError("a good poll's figures need its placement (konsole.model.poll_facts)")
    return placement


def _figures(
    t: TableView, before: dict[BucketKey, int] | None, dt: float | None, counts: TablePlacement
) -> TableFigures:
    """One table's figures: ``before`` its offsets in the previous poll, ``counts`` its
    placement."""
    info = t.info
    return TableFigures(
        path=str(t.path),
        database=t.path.database,
        table=t.path.table,
        primary_key=None if info is None else info.is_pk_table,
        buckets=len(t.buckets),
        partitions=len(t.partitions),
        rows_per_s=_table_rate(t, before, dt),
        offset_span=_span(t.buckets),
        under_replicated=counts.under_replicated,
        offline=counts.offline,
        error=None if t.error is None else str(t.error),
    )


def _same(a: TableView | None, b: TableView | None) -> bool:
    """Whether two views of a table give it the same figures: the same value, or equal in
    all that the figures read (path, id, kind, partitions, every bucket's placement and
    offsets). A poll builds new values for unchanged tables; comparing their buckets costs
    a fraction of making their figures and rows again. Tables with an error: never."""
    if a is b:
        return True
    if a is None or b is None or a.error is not None or b.error is not None:
        return False
    return (
        a.table_id == b.table_id
        and a.buckets == b.buckets
        and a.path == b.path
        and len(a.partitions) == len(b.partitions)
        and _kind_of(a) == _kind_of(b)
    )


def _kind_of(t: TableView) -> bool | None:
    return None if t.info is None else t.info.is_pk_table


#: A placeholder in :meth:`FiguresMemo.figures`' list until a table's figures are made.
_UNMADE = TableFigures("", "", "", None, 0, 0, None, None, 0, 0)


class FiguresMemo:
    """:func:`table_figures` for a screen shown poll after poll, each table's figures kept
    between polls: made again only for a table whose view, or whose view in the previous
    poll, is not the very value it was made from (or when the alive servers changed, or the
    interval between the polls did and the table had a rate other than 0). Views are the
    same when they are one value or equal in what the figures read (:func:`_same`): a poll
    costs what moved plus a look-up and a comparison of buckets per table; the others are
    the same :class:`TableFigures` objects as last time, so a screen keeps their rows. The
    figures are :func:`table_figures`' own (``tests/unit/test_table_stats.py`` compares
    them)."""

    def __init__(self) -> None:
        #: id(view of a table) -> its index in the three lists below (the view, its
        #: previous view, its figures). Parallel lists and an int-valued dict rather than a
        #: tuple per table: a poll makes no tracked object per kept table, so the full
        #: collections a poll of 10,000 tables triggers walk less.
        self._index: dict[int, int] = {}
        self._views: Sequence[TableView] = ()
        self._prevs: list[TableView | None] = []
        self._made: list[TableFigures] = []
        self._alive: frozenset[int] | None = None
        self._dt: float | None = None

    def figures(
        self,
        current: ClusterSnapshot | None,
        previous: ClusterSnapshot | None,
        placement: Placement | None,
    ) -> list[TableFigures]:
        """:func:`table_figures` of ``current`` against ``previous``; ``placement``: that of
        ``current``, derived once as the poll was judged."""
        if current is None or current.view is None:
            self._index, self._views, self._prevs, self._made = {}, (), [], []
            return []
        view = current.view
        dt = _dt(current, previous)
        alive = alive_servers(view)
        index = self._index if alive == self._alive else {}
        views, prevs, made = self._views, self._prevs, self._made
        # A rate of 0 (or unknown) is one at any interval; other rates are per interval.
        any_dt = dt is not None and self._dt is not None
        same_dt = dt == self._dt
        prior_of: dict[int | None, TableView] = {}
        if previous is not None and previous.view is not None:
            prior_of = {t.table_id: t for t in previous.view.tables if t.table_id is not None}
        prior = prior_of if dt else {}  # no interval: no rates (table_figures' way)
        out: list[TableFigures] = []
        out_prevs: list[TableView | None] = []
        todo: list[int] = []
        for t in view.tables:
            prev = prior.get(t.table_id) if t.table_id is not None else None
            out_prevs.append(prev)
            at = index.get(id(t))
            if at is None and (last := prior_of.get(t.table_id)) is not None:
                at = index.get(id(last))  # a new value: what its last one made
            if at is not None:
                kept = made[at]
                if (
                    _same(views[at], t)
                    and _same(prevs[at], prev)
                    and (same_dt or (any_dt and kept.rows_per_s in (None, 0.0)))
                ):
                    out.append(kept)
                    continue
            todo.append(len(out))
            out.append(_UNMADE)
        if todo:
            tables = view.tables
            where = _given(placement)
            for i in todo:
                t, prev = tables[i], out_prevs[i]
                before = None if prev is None else _offsets(prev)
                out[i] = _figures(t, before, dt, where.table(t.table_id))
        self._index = {id(t): i for i, t in enumerate(view.tables)}
        self._views, self._prevs, self._made = tuple(view.tables), out_prevs, out
        self._alive, self._dt = alive, dt
        return list(out)

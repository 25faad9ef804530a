"""A preview run's filter: typed against the table, what FetchLog carries, the rows kept.

:func:`filter_chunk` applies a predicate (:mod:`fluss_proto.filter`, which knows nothing of
scans) to a chunk of the scan's rows: light :class:`~fluss_proto.scan.rows.Rows` or a
``pyarrow.Table``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.cluster import ServerApiVersions
from fluss_proto.filter import (
    Filter,
    Predicate,
    columns_of,
    matches,
    parse_filter,
    pushdown,
    to_pb,
)
from fluss_proto.records.kv_batch import ValueBatch
from fluss_proto.scan.constants import FILTERED_SCAN_ROWS
from fluss_proto.scan.rows import Rows, rows_from_arrow
from fluss_proto.scan.runner import Chunk, RawValues
from fluss_proto.types import LogFormat, TableInfo

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["ScanFilter", "filter_chunk"]

#: A chunk of decoded rows: light or Arrow, kept as the same kind.
Decoded = TypeVar("Decoded", "pa.Table", Rows)


def filter_chunk(p: Predicate, chunk: Decoded) -> Decoded:
    """The rows of ``chunk`` (light :class:`Rows` or a ``pyarrow.Table``) that ``p`` keeps,
    in order."""
    n = chunk.num_rows
    if not n:
        return chunk
    names = columns_of(p)
    if isinstance(chunk, Rows):
        index = {name: i for i, name in enumerate(chunk.schema.names)}
        keep = matches(p, {c: chunk.columns[index[c]] for c in names}, n)
        if all(keep):
            return chunk
        columns = [[v for v, k in zip(col, keep, strict=True) if k] for col in chunk.columns]
        return Rows(chunk.schema, columns, sum(keep))
    import pyarrow as pa  # an Arrow chunk: pyarrow is already loaded

    selected = chunk.select(sorted(names))
    values = dict(zip(selected.column_names, rows_from_arrow(selected), strict=True))
    keep = matches(p, values, n)
    if all(keep):
        return chunk
    return chunk.filter(pa.array(keep, pa.bool_()))


class ScanFilter:
    """The ``where`` of one run (text or parsed; None: no filter) and its checker."""

    def __init__(
        self,
        where: str | Filter | None,
        check: Callable[[Filter], None] | None = None,
        *,
        pushdown: bool = True,
    ) -> None:
        self._where = where
        self._check = check
        self._pushdown = pushdown
        #: The typed filter (set by :meth:`bind` for a text).
        self.filter: Filter | None = where if isinstance(where, Filter) else None
        #: The part FetchLog may carry (NOT-free, implied by the filter), or None.
        self.pushed: Predicate | None = None
        #: Why nothing was sent to the server (last reason seen).
        self.note: str | None = None
        #: FetchLog carried the filter at least once.
        self.sent = False
        self._pb: pb.PbPredicate | None = None

    @property
    def active(self) -> bool:
        return self._where is not None

    def bind(self, info: TableInfo) -> None:
        """Parse (or check) the filter against the table's latest schema and decide what
        part of it FetchLog may carry (batch statistics exist for ARROW logs only)."""
        if self._where is None:
            return
        if isinstance(self._where, str):
            self.filter = parse_filter(self._where, info.schema, schema_id=info.schema_id)
        assert self.filter is not None
        if self._check is not None:
            self._check(self.filter)
        if not self._pushdown:
            self.note = "pushdown turned off by the caller"
            return
        if info.log_format is not LogFormat.ARROW:
            self.note = f"the table's log format is {info.log_format} (statistics: ARROW only)"
            return
        self.pushed = pushdown(self.filter.predicate)
        if self.pushed is None:
            self.note = "no part of the filter can be checked against batch statistics"
        else:
            self._pb = to_pb(self.pushed)

    def for_server(self, versions: ServerApiVersions | None) -> pb.PbPredicate | None:
        """The ``filter_predicate`` for a server: one of the 1.0 line (it advertises a
        1.0-only API; a 0.9.1 server would skip the unknown field anyway) and a pushable
        filter; else None (the reason goes to :attr:`note`)."""
        if self._pb is None:
            return None
        if versions is None or not versions.fluss_1_0:
            self.note = "the server has no FetchLog filter (before the 1.0 line)"
            return None
        self.sent = True
        return self._pb

    def cap(self, limit: int) -> int:
        """Rows a key scan may read per bucket: ``limit``, or with a filter up to
        :data:`FILTERED_SCAN_ROWS` (of which ``limit`` must match)."""
        return FILTERED_SCAN_ROWS if self.active else limit

    def keep(self, chunk: Chunk, decode: Callable[[ValueBatch, int, int], Any]) -> Chunk:
        """The rows of a chunk the filter keeps (value records decoded with ``decode``
        first); the chunk itself without a filter."""
        if self.filter is None or not chunk.num_rows:
            return chunk
        if isinstance(chunk, RawValues):
            chunk = decode(chunk.batch, chunk.start, chunk.stop)
        return filter_chunk(self.filter.predicate, chunk)  # type: ignore[type-var,no-any-return]

"""Row filters: a small expression language, its typed tree, exact evaluation on decoded
rows, and the part the 1.0 line's FetchLog can test against batch statistics.

- :mod:`.parse`: the language (docs/preview.md, "Filters") -> :class:`Filter`;
- :mod:`.tree`: the typed predicate tree;
- :mod:`.evaluate`: which rows a predicate keeps (three-valued logic; applied to a scan's
  chunks by :func:`fluss_proto.scan.filtering.filter_chunk`);
- :mod:`.wire`: the ``PbPredicate`` sent with FetchLog (conservative: implied by the filter).
"""

from __future__ import annotations

from fluss_proto.filter.evaluate import matches, truth
from fluss_proto.filter.parse import MAX_FILTER_LENGTH, column_refs, parse_filter
from fluss_proto.filter.tree import (
    And,
    ColumnRef,
    Comparison,
    Filter,
    InList,
    Not,
    NullTest,
    Op,
    Or,
    Predicate,
    columns_of,
    render,
)
from fluss_proto.filter.wire import pushdown, to_pb

__all__ = [
    "MAX_FILTER_LENGTH",
    "And",
    "ColumnRef",
    "Comparison",
    "Filter",
    "InList",
    "Not",
    "NullTest",
    "Op",
    "Or",
    "Predicate",
    "column_refs",
    "columns_of",
    "matches",
    "parse_filter",
    "pushdown",
    "render",
    "to_pb",
    "truth",
]

"""Evaluating a predicate on decoded rows, exactly, column by column (SQL's three-valued logic).

Rows arrive as columns of *column values* (:mod:`fluss_proto.literals`): a light chunk's
lists, or a ``pyarrow.Table``'s columns converted the same way (temporal types as their
integers, decimals as ``Decimal``), for the columns the predicate reads only. Each node
gives one value per row: True, False or None (unknown: a NULL was compared); a row is kept
only when the whole predicate is True.

``NOT x`` is unknown when ``x`` is; ``a AND b`` is False when either is False, else unknown
when either is; ``a OR b`` is True when either is True, else unknown when either is.
``x IN (...)`` with a NULL ``x`` is unknown; ``x IS NULL`` is never unknown.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fluss_proto.filter.tree import (
    And,
    Comparison,
    InList,
    Not,
    NullTest,
    Op,
    Or,
    Predicate,
)

__all__ = ["matches", "truth"]

Truth = list[bool | None]
_COMPARE: dict[Op, Callable[[Any, Any], bool]] = {
    Op.EQ: operator.eq,
    Op.NE: operator.ne,
    Op.LT: operator.lt,
    Op.LE: operator.le,
    Op.GT: operator.gt,
    Op.GE: operator.ge,
}


def truth(p: Predicate, columns: Mapping[str, Sequence[Any]], n: int) -> Truth:
    """The predicate's value on each of ``n`` rows (True / False / None)."""
    if isinstance(p, Comparison):
        f, lit = _COMPARE[p.op], p.value
        return [None if v is None else f(v, lit) for v in columns[p.column.name]]
    if isinstance(p, NullTest):
        values = columns[p.column.name]
        return [v is not None for v in values] if p.negated else [v is None for v in values]
    if isinstance(p, InList):
        wanted = frozenset(p.values)
        if p.negated:
            return [None if v is None else v not in wanted for v in columns[p.column.name]]
        return [None if v is None else v in wanted for v in columns[p.column.name]]
    if isinstance(p, Not):
        return [None if t is None else not t for t in truth(p.child, columns, n)]
    parts = [truth(c, columns, n) for c in p.children]
    if isinstance(p, And):
        return [_and(row) for row in zip(*parts, strict=True)] if parts else [True] * n
    assert isinstance(p, Or)
    return [_or(row) for row in zip(*parts, strict=True)] if parts else [False] * n


def _and(values: tuple[bool | None, ...]) -> bool | None:
    if False in values:
        return False
    return None if None in values else True


def _or(values: tuple[bool | None, ...]) -> bool | None:
    if True in values:
        return True
    return None if None in values else False


def matches(p: Predicate, columns: Mapping[str, Sequence[Any]], n: int) -> list[bool]:
    """Which of ``n`` rows the predicate keeps (its value is True)."""
    return [t is True for t in truth(p, columns, n)]

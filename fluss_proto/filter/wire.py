"""A predicate as the 1.0 line's FetchLog ``filter_predicate`` (``PbPredicate``).

The server (Fluss 1.0 line, ``LogSegment.readWithFilter``) tests each ARROW log batch's
statistics (per column min, max, null count; written when the table sets
``table.statistics.columns``) against the predicate and leaves out a batch the statistics
rule out; every other batch is sent whole. So what is sent only has to be *implied by* the
filter: the rows are always filtered exactly on our side too (:mod:`.evaluate`).

Encoding (``PredicateMessageUtils`` at the 1.0 line): a leaf names the column by its schema
column id and carries literals typed by the column's type root; ``filter_schema_id`` (set
beside it) is the schema the ids belong to. Leaf functions: EQUAL 0, NOT_EQUAL 1,
LESS_THAN 2, LESS_OR_EQUAL 3, GREATER_THAN 4, GREATER_OR_EQUAL 5, IS_NULL 6, IS_NOT_NULL 7,
IN 11, NOT_IN 12; compound: AND 0, OR 1. There is no NOT: it is pushed inwards (De Morgan;
``NOT a < 5`` is ``a >= 5``), which keeps the set of TRUE rows the same under three-valued
logic.

What is left out, conservatively: a leaf on a column without a column id or of a type the
statistics do not cover (BINARY, BYTES); inside an AND such a child is dropped (the rest
still implies the filter), an OR with such a child is dropped whole. :func:`pushdown` says
None when nothing is left.
"""

from __future__ import annotations

from typing import Any, Final

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.filter.tree import And, Comparison, InList, Not, NullTest, Op, Or, Predicate
from fluss_proto.literals import internal_value, unscaled_bytes

__all__ = ["LITERAL_TYPES", "pushdown", "to_pb"]

_LEAF: Final = {
    Op.EQ: 0,
    Op.NE: 1,
    Op.LT: 2,
    Op.LE: 3,
    Op.GT: 4,
    Op.GE: 5,
}
_IS_NULL, _IS_NOT_NULL, _IN, _NOT_IN = 6, 7, 11, 12
_AND, _OR = 0, 1
_LEAF_TYPE, _COMPOUND_TYPE = 0, 1
#: ``PbLiteralValue.literal_type`` per Fluss type root (the columns the statistics cover).
LITERAL_TYPES: Final = {
    "BOOLEAN": 0,
    "TINYINT": 1,
    "SMALLINT": 2,
    "INTEGER": 3,
    "BIGINT": 4,
    "FLOAT": 5,
    "DOUBLE": 6,
    "CHAR": 7,
    "STRING": 8,
    "DECIMAL": 9,
    "DATE": 10,
    "TIME_WITHOUT_TIME_ZONE": 11,
    "TIMESTAMP_WITHOUT_TIME_ZONE": 12,
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": 13,
}


def pushdown(p: Predicate) -> Predicate | None:
    """The part of ``p`` the server can test (implied by ``p``), NOTs pushed inwards; None
    when no part can be sent."""
    return _push(p, negate=False)


def _push(p: Predicate, *, negate: bool) -> Predicate | None:
    if isinstance(p, Not):
        return _push(p.child, negate=not negate)
    if isinstance(p, And | Or):
        conjunction = isinstance(p, And) != negate  # De Morgan swaps AND and OR
        children = [_push(c, negate=negate) for c in p.children]
        if conjunction:
            kept = tuple(c for c in children if c is not None)
            if not kept:
                return None
            return kept[0] if len(kept) == 1 else And(kept)
        if any(c is None for c in children):
            return None
        kept = tuple(c for c in children if c is not None)
        return kept[0] if len(kept) == 1 else Or(kept)
    if p.column.column_id is None or p.column.type.root not in LITERAL_TYPES:
        return None
    if not negate:
        return p
    if isinstance(p, Comparison):
        return Comparison(p.column, p.op.negated, p.value)
    if isinstance(p, NullTest):
        return NullTest(p.column, not p.negated)
    return InList(p.column, p.values, not p.negated)


def to_pb(p: Predicate) -> pb.PbPredicate:
    """A NOT-free predicate (as :func:`pushdown` gives) as a ``PbPredicate``."""
    if isinstance(p, And | Or):
        compound = pb.PbCompoundPredicate(
            function=_AND if isinstance(p, And) else _OR, children=[to_pb(c) for c in p.children]
        )
        return pb.PbPredicate(type=_COMPOUND_TYPE, compound=compound)
    if isinstance(p, Not):
        raise ValueError("NOT cannot be sent; push it inwards first (pushdown)")
    column = p.column
    assert column.column_id is not None
    if isinstance(p, Comparison):
        function, values = _LEAF[p.op], [p.value]
    elif isinstance(p, NullTest):
        function, values = (_IS_NOT_NULL if p.negated else _IS_NULL), []
    else:
        function, values = (_NOT_IN if p.negated else _IN), list(p.values)
    leaf = pb.PbLeafPredicate(
        function=function,
        field_id=column.column_id,
        literals=[_literal(v, column.type) for v in values],
    )
    return pb.PbPredicate(type=_LEAF_TYPE, leaf=leaf)


def _literal(value: Any, dt: Any) -> pb.PbLiteralValue:
    root = dt.root
    lit = pb.PbLiteralValue(literal_type=LITERAL_TYPES[root], is_null=value is None)
    if value is None:
        return lit
    raw = internal_value(value, dt)
    if root == "BOOLEAN":
        lit.boolean_value = bool(raw)
    elif root in ("TINYINT", "SMALLINT", "INTEGER", "TIME_WITHOUT_TIME_ZONE"):
        lit.int_value = int(raw)
    elif root in ("BIGINT", "DATE"):
        lit.bigint_value = int(raw)
    elif root == "FLOAT":
        lit.float_value = float(raw)
    elif root == "DOUBLE":
        lit.double_value = float(raw)
    elif root in ("STRING", "CHAR"):
        lit.string_value = str(raw)
    elif root == "DECIMAL":
        unscaled = int(raw)
        if (dt.precision or 10) <= 18:
            lit.decimal_value = unscaled
        else:
            lit.decimal_bytes = unscaled_bytes(unscaled)
    else:  # timestamps
        millis, nanos = raw
        lit.timestamp_millis_value = millis
        lit.timestamp_nano_of_millis_value = nanos
    return lit

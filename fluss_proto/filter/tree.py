"""The typed predicate tree a filter expression parses into.

Every leaf names one top-level column of the table (:class:`ColumnRef`: its name, position,
schema column id and type) and holds its literals as *column values* of that type
(:mod:`fluss_proto.literals`), so evaluating a leaf is comparing like with like, and
sending it to the server is writing the same value in Fluss's literal form.

Nodes: :class:`Comparison` (``= != < <= > >=``), :class:`NullTest` (``IS [NOT] NULL``),
:class:`InList` (``[NOT] IN (...)``), :class:`And`, :class:`Or`, :class:`Not`. Frozen and
hashable; :func:`render` writes a tree back as text (the canonical form the report shows).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum
from typing import Any, TypeAlias

from fluss_proto.filter.names import KEYWORDS, is_identifier
from fluss_proto.records.rowtype import DataType

__all__ = [
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
    "columns_of",
    "render",
]


class Op(StrEnum):
    EQ = "="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="

    @property
    def negated(self) -> Op:
        """The operator whose TRUE rows are exactly this one's FALSE rows (NULLs aside)."""
        return _NEGATED[self]


_NEGATED = {
    Op.EQ: Op.NE,
    Op.NE: Op.EQ,
    Op.LT: Op.GE,
    Op.GE: Op.LT,
    Op.LE: Op.GT,
    Op.GT: Op.LE,
}


@dataclass(frozen=True, slots=True)
class ColumnRef:
    name: str
    #: Position in the table's (latest) schema.
    index: int
    #: The schema's column id (None when the server sends none).
    column_id: int | None
    type: DataType


@dataclass(frozen=True, slots=True)
class Comparison:
    column: ColumnRef
    op: Op
    value: Any


@dataclass(frozen=True, slots=True)
class NullTest:
    column: ColumnRef
    negated: bool = False


@dataclass(frozen=True, slots=True)
class InList:
    column: ColumnRef
    values: tuple[Any, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class And:
    children: tuple[Predicate, ...]


@dataclass(frozen=True, slots=True)
class Or:
    children: tuple[Predicate, ...]


@dataclass(frozen=True, slots=True)
class Not:
    child: Predicate


Predicate: TypeAlias = Comparison | NullTest | InList | And | Or | Not


@dataclass(frozen=True, slots=True)
class Filter:
    """A parsed filter: the text as given, its tree, and the schema it was typed against."""

    text: str
    predicate: Predicate
    schema_id: int

    def __str__(self) -> str:
        return render(self.predicate)


def columns_of(p: Predicate) -> frozenset[str]:
    """The names of every column the predicate reads."""
    if isinstance(p, And | Or):
        return frozenset().union(*(columns_of(c) for c in p.children))
    if isinstance(p, Not):
        return columns_of(p.child)
    return frozenset({p.column.name})


def render(p: Predicate) -> str:
    """The predicate as text (columns quoted when needed, literals as typed)."""
    if isinstance(p, Comparison):
        return f"{_name(p.column.name)} {p.op} {_literal(p.value, p.column.type)}"
    if isinstance(p, NullTest):
        return f"{_name(p.column.name)} IS {'NOT ' if p.negated else ''}NULL"
    if isinstance(p, InList):
        values = ", ".join(_literal(v, p.column.type) for v in p.values)
        return f"{_name(p.column.name)} {'NOT ' if p.negated else ''}IN ({values})"
    if isinstance(p, Not):
        return f"NOT ({render(p.child)})"
    word = " AND " if isinstance(p, And) else " OR "
    return word.join(
        f"({render(c)})" if isinstance(c, And | Or) and type(c) is not type(p) else render(c)
        for c in p.children
    )


def _name(name: str) -> str:
    if is_identifier(name) and name.upper() not in KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


def _literal(value: Any, dt: DataType) -> str:
    root = dt.root
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if root == "DATE":
        return f"DATE '{_EPOCH + timedelta(days=value)}'"
    if root == "TIME_WITHOUT_TIME_ZONE":
        text = _clock(_nanos(value, dt) % _DAY_NANOS)
        return f"TIME '{text}'"
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        days, rest = divmod(_nanos(value, dt), _DAY_NANOS)
        zone = "Z" if root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE" else ""
        return f"TIMESTAMP '{_EPOCH + timedelta(days=days)} {_clock(rest)}{zone}'"
    return str(value)


_EPOCH = date(1970, 1, 1)
_DAY_NANOS = 86_400 * 10**9


def _nanos(value: int, dt: DataType) -> int:
    precision = dt.precision if dt.precision is not None else 6
    unit = 10**9 if precision == 0 else 10**6 if precision <= 3 else 10**3 if precision <= 6 else 1
    return int(value) * unit


def _clock(nanos: int) -> str:
    seconds, fraction = divmod(nanos, 10**9)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    text = f"{hour:02d}:{minute:02d}:{second:02d}"
    return f"{text}.{fraction:09d}".rstrip("0") if fraction else text

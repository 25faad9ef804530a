"""The filter language: text -> typed predicate tree (pure).

Grammar (keywords in any case; ``a``/``b`` are columns, ``x``/``y`` literals)::

    expr       := or
    or         := and ( OR and )*
    and        := not ( AND not )*
    not        := NOT not | '(' expr ')' | predicate
    predicate  := column op literal                     op: = == != <> < <= > >=
                | column IS [NOT] NULL
                | column [NOT] IN ( literal [, literal]* )
    column     := name | "quoted name" | `quoted name`   ("" / `` escape a quote)
    literal    := number | 'text' | TRUE | FALSE
                | DATE 'YYYY-MM-DD' | TIME 'HH:MM:SS[.fff]'
                | TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.fffffffff][Z|+HH:MM]'
                | X'hex'

Literals take the type of the column they are compared with: ``amount > 1000`` on a
DECIMAL(10, 2) column compares with 1000.00, ``day = '2024-06-01'`` on a DATE column with
that day, ``ts >= '2024-06-01 10:00'`` on a TIMESTAMP column with that instant (a
TIMESTAMP_LTZ literal without an offset is UTC). Texts are read by
:func:`fluss_proto.literals.column_value`; a value finer than its column (a third decimal
place for DECIMAL(10, 2)) is an error rather than a rounding. Comparing with NULL is an
error (use ``IS NULL``); NULL is not allowed in an IN list. Only top-level columns of the
plain types can be filtered on (not ARRAY, MAP or ROW).

Semantics are SQL's three-valued logic: a comparison with a NULL column value is unknown,
and only rows for which the whole expression is TRUE are kept (:mod:`.evaluate`).

Errors: :class:`~fluss_proto.errors.FilterError`, one line, with the 0-based ``position``
of the offending character (the message says it 1-based).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from fluss_proto.errors import FilterError, LiteralError
from fluss_proto.filter.names import IDENTIFIER, KEYWORDS
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
)
from fluss_proto.literals import column_value, read_quoted, type_text
from fluss_proto.records.rowtype import ROOTS, DataType, as_row_type
from fluss_proto.types import Schema

__all__ = [
    "MAX_FILTER_LENGTH",
    "check_syntax",
    "column_refs",
    "parse_filter",
]

#: Longer texts are refused (a filter is typed by a person; this bounds the parser's work).
MAX_FILTER_LENGTH: Final = 10_000
#: Deepest nesting of parentheses and NOTs.
MAX_DEPTH: Final = 64
_FILTERABLE: Final = ROOTS - {"ARRAY", "MAP", "ROW"}
_OPS: Final = {
    "=": Op.EQ,
    "==": Op.EQ,
    "!=": Op.NE,
    "<>": Op.NE,
    "<": Op.LT,
    "<=": Op.LE,
    ">": Op.GT,
    ">=": Op.GE,
}
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_OP = re.compile(r"==|!=|<>|<=|>=|=|<|>")
_TYPED_PREFIX: Final = {
    "DATE": frozenset({"DATE"}),
    "TIME": frozenset({"TIME_WITHOUT_TIME_ZONE"}),
    "TIMESTAMP": frozenset({"TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"}),
}


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "name", "quoted", "number", "string", "hex", "op", "(", ")", ",", "end"
    text: str
    pos: int

    @property
    def word(self) -> str | None:
        """The keyword this token is (upper case), if it is a bare name."""
        return self.text.upper() if self.kind == "name" else None


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c in "(),":
            out.append(_Token(c, c, i))
            i += 1
        elif c in "'\"`":
            body, end = _quoted(text, i)
            kind = "string" if c == "'" else "quoted"
            out.append(_Token(kind, body, i))
            i = end
        elif (c in "xX") and i + 1 < n and text[i + 1] == "'":
            body, end = _quoted(text, i + 1)
            if not re.fullmatch(r"(?:[0-9a-fA-F]{2})*", body):
                raise FilterError("X'...' must hold pairs of hexadecimal digits", i)
            out.append(_Token("hex", body, i))
            i = end
        elif (m := _NUMBER.match(text, i)) is not None and (
            c.isdigit() or c == "." or (c in "+-" and _after_operand(out) is False)
        ):
            out.append(_Token("number", m.group(), i))
            i = m.end()
        elif (m := _OP.match(text, i)) is not None:
            out.append(_Token("op", m.group(), i))
            i = m.end()
        elif (m := IDENTIFIER.match(text, i)) is not None:
            out.append(_Token("name", m.group(), i))
            i = m.end()
        else:
            raise FilterError(f"unexpected character {c!r}", i)
    out.append(_Token("end", "", n))
    return out


def _after_operand(tokens: Sequence[_Token]) -> bool:
    """Whether a sign here would follow an operand (then it is not part of a number)."""
    return bool(tokens) and tokens[-1].kind in ("number", "string", "hex", ")", "quoted")


def _quoted(text: str, start: int) -> tuple[str, int]:
    try:
        return read_quoted(text, start)
    except ValueError as exc:
        raise FilterError(str(exc), start) from None


class _Parser:
    def __init__(self, text: str, columns: dict[str, ColumnRef]) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.i = 0
        self.columns = columns
        self.depth = 0

    # -- tokens
    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def take(self) -> _Token:
        t = self.tokens[self.i]
        self.i += 1
        return t

    def expect(self, kind: str, what: str) -> _Token:
        if self.tok.kind != kind:
            raise FilterError(f"expected {what}, found {self._shown(self.tok)}", self.tok.pos)
        return self.take()

    def at_word(self, *words: str) -> bool:
        return self.tok.word in words

    @staticmethod
    def _shown(t: _Token) -> str:
        if t.kind == "end":
            return "the end of the filter"
        text = t.text if len(t.text) <= 30 else t.text[:27] + "..."
        if t.kind == "string":
            return f"'{text}'"
        return repr(text) if t.kind != "name" else text

    # -- grammar
    def parse(self) -> Predicate:
        if self.tok.kind == "end":
            raise FilterError("the filter is empty", 0)
        p = self.disjunction()
        if self.tok.kind != "end":
            raise FilterError(
                f"expected AND, OR or the end, found {self._shown(self.tok)}", self.tok.pos
            )
        return p

    def _nest(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise FilterError(f"nested deeper than {MAX_DEPTH} levels", pos)

    def disjunction(self) -> Predicate:
        parts = [self.conjunction()]
        while self.at_word("OR"):
            self.take()
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def conjunction(self) -> Predicate:
        parts = [self.negation()]
        while self.at_word("AND"):
            self.take()
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def negation(self) -> Predicate:
        t = self.tok
        if self.at_word("NOT"):
            self.take()
            self._nest(t.pos)
            inner = self.negation()
            self.depth -= 1
            return Not(inner)
        if t.kind == "(":
            self.take()
            self._nest(t.pos)
            inner = self.disjunction()
            self.expect(")", "')'")
            self.depth -= 1
            return inner
        return self.predicate()

    def predicate(self) -> Predicate:
        col = self.column()
        t = self.tok
        if t.kind == "op":
            self.take()
            op = _OPS[t.text]
            if self.at_word("NULL"):
                raise FilterError(
                    f"comparing with NULL is never true; write {col.name} IS "
                    f"{'NOT ' if op is Op.NE else ''}NULL",
                    self.tok.pos,
                )
            return Comparison(col, op, self.literal(col))
        if self.at_word("IS"):
            self.take()
            negated = False
            if self.at_word("NOT"):
                self.take()
                negated = True
            if not self.at_word("NULL"):
                raise FilterError(f"expected NULL, found {self._shown(self.tok)}", self.tok.pos)
            self.take()
            return NullTest(col, negated)
        negated = False
        if self.at_word("NOT"):
            self.take()
            negated = True
        if self.at_word("IN"):
            self.take()
            self.expect("(", "'(' after IN")
            values = [self.literal(col)]
            while self.tok.kind == ",":
                self.take()
                values.append(self.literal(col))
            self.expect(")", "',' or ')'")
            return InList(col, tuple(dict.fromkeys(values)), negated)
        expected = "IN" if negated else "a comparison (= != < <= > >=), IS [NOT] NULL or IN"
        t = self.tok
        raise FilterError(f"expected {expected} after {col.name}, found {self._shown(t)}", t.pos)

    def column(self) -> ColumnRef:
        t = self.tok
        if t.kind == "name" and t.word in KEYWORDS:
            raise FilterError(
                f"expected a column, found the keyword {t.text} (quote a column of that name:"
                f' "{t.text}")',
                t.pos,
            )
        if t.kind not in ("name", "quoted"):
            raise FilterError(f"expected a column, found {self._shown(t)}", t.pos)
        self.take()
        col = self.columns.get(t.text)
        if col is None:
            known = ", ".join(list(self.columns)[:12])
            more = ", ..." if len(self.columns) > 12 else ""
            raise FilterError(f"no column {t.text!r} (columns: {known}{more})", t.pos)
        if col.type.root not in _FILTERABLE:
            raise FilterError(
                f"column {col.name!r} is {type_text(col.type)}: only plain types can be filtered",
                t.pos,
            )
        return col

    def literal(self, col: ColumnRef) -> Any:
        t = self.take()
        root = col.type.root
        word = t.word
        if word in ("TRUE", "FALSE"):
            if root != "BOOLEAN":
                raise self._mismatch(col, t, "a boolean")
            return word == "TRUE"
        if word in _TYPED_PREFIX:
            if root not in _TYPED_PREFIX[word]:
                raise self._mismatch(col, t, f"a {word}")
            inner = self.take()
            if inner.kind != "string":
                raise FilterError(f"expected '...' after {word}", inner.pos)
            return self._value(col, inner.text, inner.pos)
        if t.kind == "hex":
            if root not in ("BYTES", "BINARY"):
                raise self._mismatch(col, t, "bytes")
            return self._value(col, bytes.fromhex(t.text), t.pos)
        if t.kind == "number":
            if root in ("STRING", "CHAR"):
                raise FilterError(
                    f"column {col.name!r} is {type_text(col.type)}: quote the value ('{t.text}')",
                    t.pos,
                )
            if root not in _NUMERIC:
                raise self._mismatch(col, t, "a number")
            return self._value(col, t.text, t.pos)
        if t.kind == "string":
            if root == "BOOLEAN":
                raise self._mismatch(col, t, "a text")
            return self._value(col, t.text, t.pos)
        raise FilterError(f"expected a value for {col.name}, found {self._shown(t)}", t.pos)

    def _value(self, col: ColumnRef, raw: object, pos: int) -> Any:
        try:
            return column_value(raw, col.type, col.name)
        except LiteralError as exc:
            raise FilterError(str(exc), pos) from None

    def _mismatch(self, col: ColumnRef, t: _Token, what: str) -> FilterError:
        return FilterError(
            f"column {col.name!r} is {type_text(col.type)}; {self._shown(t)} is {what}", t.pos
        )


_NUMERIC: Final = frozenset(
    {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"}
)


def column_refs(schema: Schema) -> dict[str, ColumnRef]:
    """The table's columns by name, as filter leaves refer to them."""
    row = as_row_type(schema)
    return {
        f.name: ColumnRef(f.name, i, c.column_id, f.type)
        for i, (f, c) in enumerate(zip(row.fields, schema.columns, strict=True))
    }


#: The type a column has in a syntax check (any: no literal is judged against it).
_ANY_TYPE: Final = DataType("STRING")


class _SyntaxOnly(_Parser):
    """The grammar without a table: any column name, any literal of a literal's shape.
    What needs the schema (the column exists, the literal fits its type) is left to
    :func:`parse_filter` once the table is read."""

    def __init__(self, text: str) -> None:
        super().__init__(text, {})

    def column(self) -> ColumnRef:
        t = self.tok
        if t.kind == "name" and t.word in KEYWORDS:
            return super().column()  # the keyword's own message
        if t.kind not in ("name", "quoted"):
            raise FilterError(f"expected a column, found {self._shown(t)}", t.pos)
        self.take()
        return ColumnRef(t.text, 0, None, _ANY_TYPE)

    def literal(self, col: ColumnRef) -> Any:
        t = self.take()
        if t.word in ("TRUE", "FALSE") or t.kind in ("hex", "number", "string"):
            return (t.kind, t.text)
        if t.word in _TYPED_PREFIX:
            inner = self.take()
            if inner.kind != "string":
                raise FilterError(f"expected '...' after {t.word}", inner.pos)
            return (t.word, inner.text)
        raise FilterError(f"expected a value for {col.name}, found {self._shown(t)}", t.pos)


def check_syntax(text: str) -> None:
    """Raise :class:`~fluss_proto.errors.FilterError` when ``text`` is no filter whatever
    the table (a syntax error, an empty filter, too long): said before connecting."""
    if len(text) > MAX_FILTER_LENGTH:
        raise FilterError(f"longer than {MAX_FILTER_LENGTH} characters")
    _SyntaxOnly(text).parse()


def parse_filter(text: str, schema: Schema, *, schema_id: int = 0) -> Filter:
    """Parse ``text`` against ``schema`` (the table's latest, whose id is ``schema_id``).

    Raises :class:`~fluss_proto.errors.FilterError` (one line, with the position).
    """
    if not isinstance(text, str):
        raise FilterError(f"a filter is a text, not {type(text).__name__}")
    if len(text) > MAX_FILTER_LENGTH:
        raise FilterError(f"longer than {MAX_FILTER_LENGTH} characters")
    predicate = _Parser(text, column_refs(schema)).parse()
    return Filter(text=text, predicate=predicate, schema_id=schema_id)

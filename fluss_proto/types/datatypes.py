"""Fluss data types (``DataType`` and one class per type root) and ``FrozenDict``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, ClassVar

#: Deepest nesting of ARRAY / MAP / ROW accepted; deeper documents are rejected, not recursed.
MAX_TYPE_DEPTH = 64

_INT32_MIN = -(2**31)
_INT32_MAX = 2**31 - 1
_MAX_COMPACT_DECIMAL_PRECISION = 18  # Fluss Decimal.isCompact


# ============================================================================ frozen mapping


class FrozenDict(Mapping[str, str]):
    """An immutable, hashable str -> str mapping that keeps insertion order."""

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, str] | None = None) -> None:
        self._data: dict[str, str] = dict(data or {})
        self._hash: int | None = None

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"

    def to_dict(self) -> dict[str, str]:
        return dict(self._data)


# ============================================================================ data types


class TypeRoot(StrEnum):
    """Fluss ``DataTypeRoot``: the ``type`` value in the JSON (same set at 0.9.1 and main)."""

    CHAR = "CHAR"
    STRING = "STRING"
    BOOLEAN = "BOOLEAN"
    BINARY = "BINARY"
    BYTES = "BYTES"
    DECIMAL = "DECIMAL"
    TINYINT = "TINYINT"
    SMALLINT = "SMALLINT"
    INTEGER = "INTEGER"
    BIGINT = "BIGINT"
    FLOAT = "FLOAT"
    DOUBLE = "DOUBLE"
    DATE = "DATE"
    TIME_WITHOUT_TIME_ZONE = "TIME_WITHOUT_TIME_ZONE"
    TIMESTAMP_WITHOUT_TIME_ZONE = "TIMESTAMP_WITHOUT_TIME_ZONE"
    TIMESTAMP_WITH_LOCAL_TIME_ZONE = "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
    ARRAY = "ARRAY"
    MAP = "MAP"
    ROW = "ROW"


def _escape_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _escape_quotes(text: str) -> str:
    return text.replace("'", "''")


@dataclass(frozen=True)
class DataType:
    """Base of all Fluss data types. ``nullable`` defaults to True, as in Fluss.

    ``sql()`` is Fluss's ``asSerializableString`` (full detail), ``summary()`` its
    ``asSummaryString`` (what ``toString`` prints; also ``str(type)``).
    """

    root: ClassVar[TypeRoot]
    nullable: bool = field(default=True, kw_only=True)

    # -- rendering
    def _body(self, summary: bool) -> str:
        raise NotImplementedError

    def sql(self) -> str:
        """The type as Fluss writes it in full, e.g. ``DECIMAL(15, 2) NOT NULL``."""
        return self._with_nullability(self._body(False))

    def summary(self) -> str:
        """Fluss's short form: TIMESTAMP_LTZ(p), and ROW field descriptions shown as '...'."""
        return self._with_nullability(self._body(True))

    def _with_nullability(self, text: str) -> str:
        return text if self.nullable else f"{text} NOT NULL"

    def __str__(self) -> str:
        return self.summary()

    # -- structure
    def children(self) -> tuple[DataType, ...]:
        return ()

    def with_nullable(self, nullable: bool) -> DataType:
        """A copy with the given nullability (Fluss ``copy(boolean)``)."""
        return replace(self, nullable=nullable)

    def is_variable_length(self) -> bool:
        """Whether a value's encoded size depends on the value (Fluss IndexedRow's rule).

        STRING, BYTES, ARRAY, MAP, ROW and DECIMALs wider than 18 digits are variable;
        CHAR(n) and BINARY(n) count as fixed, as in Fluss.
        """
        return False

    # -- JSON
    def to_json(self) -> dict[str, Any]:
        """The type as Fluss serialises it (same keys, same order)."""
        out: dict[str, Any] = {"type": self.root.value}
        if not self.nullable:
            out["nullable"] = False
        out.update(self._params_json())
        return out

    def _params_json(self) -> dict[str, Any]:
        return {}


def _check_range(what: str, value: int, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, got {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{what} must be between {lo} and {hi} (both inclusive), got {value}")


@dataclass(frozen=True)
class _SimpleType(DataType):
    name: ClassVar[str]

    def _body(self, summary: bool) -> str:
        return self.name


@dataclass(frozen=True)
class BooleanType(_SimpleType):
    root = TypeRoot.BOOLEAN
    name = "BOOLEAN"


@dataclass(frozen=True)
class TinyIntType(_SimpleType):
    root = TypeRoot.TINYINT
    name = "TINYINT"


@dataclass(frozen=True)
class SmallIntType(_SimpleType):
    root = TypeRoot.SMALLINT
    name = "SMALLINT"


@dataclass(frozen=True)
class IntType(_SimpleType):
    root = TypeRoot.INTEGER
    name = "INT"


@dataclass(frozen=True)
class BigIntType(_SimpleType):
    root = TypeRoot.BIGINT
    name = "BIGINT"


@dataclass(frozen=True)
class FloatType(_SimpleType):
    root = TypeRoot.FLOAT
    name = "FLOAT"


@dataclass(frozen=True)
class DoubleType(_SimpleType):
    root = TypeRoot.DOUBLE
    name = "DOUBLE"


@dataclass(frozen=True)
class StringType(_SimpleType):
    root = TypeRoot.STRING
    name = "STRING"

    def is_variable_length(self) -> bool:
        return True


@dataclass(frozen=True)
class BytesType(_SimpleType):
    root = TypeRoot.BYTES
    name = "BYTES"

    def is_variable_length(self) -> bool:
        return True


@dataclass(frozen=True)
class DateType(_SimpleType):
    root = TypeRoot.DATE
    name = "DATE"


@dataclass(frozen=True)
class DecimalType(DataType):
    """DECIMAL(p, s): 1 <= p <= 38, 0 <= s <= p."""

    root = TypeRoot.DECIMAL
    MIN_PRECISION: ClassVar[int] = 1
    MAX_PRECISION: ClassVar[int] = 38

    precision: int = 10
    scale: int = 0

    def __post_init__(self) -> None:
        _check_range("DECIMAL precision", self.precision, self.MIN_PRECISION, self.MAX_PRECISION)
        _check_range("DECIMAL scale", self.scale, 0, self.precision)

    def _body(self, summary: bool) -> str:
        return f"DECIMAL({self.precision}, {self.scale})"

    def is_variable_length(self) -> bool:
        return self.precision > _MAX_COMPACT_DECIMAL_PRECISION

    def _params_json(self) -> dict[str, Any]:
        return {"precision": self.precision, "scale": self.scale}


@dataclass(frozen=True)
class _LengthType(DataType):
    name: ClassVar[str]
    length: int = 1

    def __post_init__(self) -> None:
        _check_range(f"{self.name} length", self.length, 1, _INT32_MAX)

    def _body(self, summary: bool) -> str:
        return f"{self.name}({self.length})"

    def _params_json(self) -> dict[str, Any]:
        return {"length": self.length}


@dataclass(frozen=True)
class CharType(_LengthType):
    """CHAR(n), n >= 1."""

    root = TypeRoot.CHAR
    name = "CHAR"


@dataclass(frozen=True)
class BinaryType(_LengthType):
    """BINARY(n), n >= 1."""

    root = TypeRoot.BINARY
    name = "BINARY"


@dataclass(frozen=True)
class _PrecisionType(DataType):
    name: ClassVar[str]
    precision: int = 0

    def __post_init__(self) -> None:
        _check_range(f"{self.name} precision", self.precision, 0, 9)

    def _params_json(self) -> dict[str, Any]:
        return {"precision": self.precision}


@dataclass(frozen=True)
class TimeType(_PrecisionType):
    """TIME(p), 0 <= p <= 9 (JSON root TIME_WITHOUT_TIME_ZONE)."""

    root = TypeRoot.TIME_WITHOUT_TIME_ZONE
    name = "TIME"
    precision: int = 0

    def _body(self, summary: bool) -> str:
        return f"TIME({self.precision})"


@dataclass(frozen=True)
class TimestampType(_PrecisionType):
    """TIMESTAMP(p), 0 <= p <= 9 (JSON root TIMESTAMP_WITHOUT_TIME_ZONE)."""

    root = TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE
    name = "TIMESTAMP"
    precision: int = 6

    def _body(self, summary: bool) -> str:
        return f"TIMESTAMP({self.precision})"


@dataclass(frozen=True)
class LocalZonedTimestampType(_PrecisionType):
    """TIMESTAMP(p) WITH LOCAL TIME ZONE, summary TIMESTAMP_LTZ(p); 0 <= p <= 9."""

    root = TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE
    name = "TIMESTAMP_LTZ"
    precision: int = 6

    def _body(self, summary: bool) -> str:
        if summary:
            return f"TIMESTAMP_LTZ({self.precision})"
        return f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"


@dataclass(frozen=True)
class ArrayType(DataType):
    root = TypeRoot.ARRAY
    element_type: DataType

    def _body(self, summary: bool) -> str:
        inner = self.element_type.summary() if summary else self.element_type.sql()
        return f"ARRAY<{inner}>"

    def children(self) -> tuple[DataType, ...]:
        return (self.element_type,)

    def is_variable_length(self) -> bool:
        return True

    def _params_json(self) -> dict[str, Any]:
        return {"element_type": self.element_type.to_json()}


@dataclass(frozen=True)
class MapType(DataType):
    """MAP<K, V>. Map keys are always NOT NULL; a nullable key type is made NOT NULL."""

    root = TypeRoot.MAP
    key_type: DataType
    value_type: DataType

    def __post_init__(self) -> None:
        if self.key_type.nullable:
            object.__setattr__(self, "key_type", self.key_type.with_nullable(False))

    def _body(self, summary: bool) -> str:
        if summary:
            return f"MAP<{self.key_type.summary()}, {self.value_type.summary()}>"
        return f"MAP<{self.key_type.sql()}, {self.value_type.sql()}>"

    def children(self) -> tuple[DataType, ...]:
        return (self.key_type, self.value_type)

    def is_variable_length(self) -> bool:
        return True

    def _params_json(self) -> dict[str, Any]:
        return {"key_type": self.key_type.to_json(), "value_type": self.value_type.to_json()}


@dataclass(frozen=True)
class DataField:
    """One field of a ROW: name, type, optional description and field id."""

    name: str
    type: DataType
    description: str | None = None
    field_id: int | None = None

    def sql(self) -> str:
        return self._render(self.type.sql(), summary=False)

    def summary(self) -> str:
        return self._render(self.type.summary(), summary=True)

    def _render(self, type_text: str, *, summary: bool) -> str:
        head = f"{_escape_identifier(self.name)} {type_text}"
        if self.description is None:
            return head
        return f"{head} '{'...' if summary else _escape_quotes(self.description)}'"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "field_type": self.type.to_json()}
        if self.description is not None:
            out["description"] = self.description
        if self.field_id is not None:
            out["field_id"] = self.field_id
        return out


@dataclass(frozen=True)
class RowType(DataType):
    """ROW<fields>; field names are unique and not blank."""

    root = TypeRoot.ROW
    fields: tuple[DataField, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        seen: set[str] = set()
        for f in self.fields:
            if not f.name.strip():
                raise ValueError("ROW field names must contain a non-whitespace character")
            if f.name in seen:
                raise ValueError(f"duplicate ROW field name {f.name!r}")
            seen.add(f.name)

    def _body(self, summary: bool) -> str:
        parts = (f.summary() if summary else f.sql() for f in self.fields)
        return f"ROW<{', '.join(parts)}>"

    def children(self) -> tuple[DataType, ...]:
        return tuple(f.type for f in self.fields)

    def is_variable_length(self) -> bool:
        return True

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def _params_json(self) -> dict[str, Any]:
        return {"fields": [f.to_json() for f in self.fields]}

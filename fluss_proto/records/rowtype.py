"""The small type description the record decoders need.

This is deliberately tiny and private to ``fluss_proto.records``: a frozen tree of
:class:`DataType` (root name, precision/scale/length, nullability, children) and
:class:`Field`. Type roots use Fluss's ``DataTypeRoot`` names (``INTEGER``, ``STRING``,
``TIMESTAMP_WITHOUT_TIME_ZONE``...); a few short aliases (``INT``, ``TIMESTAMP``,
``TIMESTAMP_LTZ``, ``TIME``) are accepted and normalised.

:func:`as_row_type` is the single adapter point: it accepts one of our own types, a Fluss JSON
``data_type`` / schema / table document (``DataTypeJsonSerde`` / ``SchemaJsonSerde`` /
``TableDescriptorJsonSerde`` shape) or any object with a ``to_json()`` / ``to_dict()`` method
returning one of those, and returns a ROW :class:`DataType`. So ``fluss_proto.types`` objects
(``RowType``, ``Schema``, ``TableDescriptor``, which render with ``to_json()``) go straight in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ROOTS",
    "DataType",
    "Field",
    "as_data_type",
    "as_row_type",
    "is_compact_decimal",
    "is_compact_timestamp",
    "row_type",
]

#: Every Fluss DataTypeRoot the decoders understand.
ROOTS = frozenset(
    {
        "CHAR",
        "STRING",
        "BOOLEAN",
        "BINARY",
        "BYTES",
        "DECIMAL",
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "FLOAT",
        "DOUBLE",
        "DATE",
        "TIME_WITHOUT_TIME_ZONE",
        "TIMESTAMP_WITHOUT_TIME_ZONE",
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
        "ARRAY",
        "MAP",
        "ROW",
    }
)

_ALIASES = {
    "INT": "INTEGER",
    "VARCHAR": "STRING",
    "VARBINARY": "BYTES",
    "TIME": "TIME_WITHOUT_TIME_ZONE",
    "TIMESTAMP": "TIMESTAMP_WITHOUT_TIME_ZONE",
    "TIMESTAMP_NTZ": "TIMESTAMP_WITHOUT_TIME_ZONE",
    "TIMESTAMP_LTZ": "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
}

# Defaults of the Java type constructors, used when a field is left out.
_DEFAULT_PRECISION = {
    "DECIMAL": 10,
    "TIME_WITHOUT_TIME_ZONE": 0,
    "TIMESTAMP_WITHOUT_TIME_ZONE": 6,
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": 6,
}


@dataclass(frozen=True, slots=True)
class Field:
    """A named field of a ROW type."""

    name: str
    type: DataType


@dataclass(frozen=True, slots=True)
class DataType:
    """One Fluss data type.

    ``length`` is set for CHAR/BINARY, ``precision`` for DECIMAL/TIME/TIMESTAMP*, ``scale`` for
    DECIMAL; ``element`` for ARRAY, ``key``/``value`` for MAP, ``fields`` for ROW.
    """

    root: str
    nullable: bool = True
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    element: DataType | None = None
    key: DataType | None = None
    value: DataType | None = None
    fields: tuple[Field, ...] = field(default=())

    def __post_init__(self) -> None:
        root = _ALIASES.get(self.root.upper(), self.root.upper())
        if root not in ROOTS:
            raise ValueError(f"unknown Fluss type root {self.root!r}")
        object.__setattr__(self, "root", root)
        if root in ("CHAR", "BINARY") and self.length is None:
            object.__setattr__(self, "length", 1)
        if root in _DEFAULT_PRECISION and self.precision is None:
            object.__setattr__(self, "precision", _DEFAULT_PRECISION[root])
        if root == "DECIMAL" and self.scale is None:
            object.__setattr__(self, "scale", 0)
        if root == "ARRAY" and self.element is None:
            raise ValueError("ARRAY needs an element type")
        if root == "MAP" and (self.key is None or self.value is None):
            raise ValueError("MAP needs a key and a value type")
        if not isinstance(self.fields, tuple):
            object.__setattr__(self, "fields", tuple(self.fields))

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    @property
    def field_types(self) -> list[DataType]:
        return [f.type for f in self.fields]

    def __str__(self) -> str:
        if self.root == "ROW":
            inner = ", ".join(f"{f.name} {f.type}" for f in self.fields)
            text = f"ROW<{inner}>"
        elif self.root == "ARRAY":
            text = f"ARRAY<{self.element}>"
        elif self.root == "MAP":
            text = f"MAP<{self.key}, {self.value}>"
        elif self.root == "DECIMAL":
            text = f"DECIMAL({self.precision}, {self.scale})"
        elif self.root in ("CHAR", "BINARY"):
            text = f"{self.root}({self.length})"
        elif self.precision is not None:
            text = f"{self.root}({self.precision})"
        else:
            text = self.root
        return text if self.nullable else f"{text} NOT NULL"


def row_type(fields: Iterable[tuple[str, DataType] | Field], *, nullable: bool = True) -> DataType:
    """A ROW type from ``(name, type)`` pairs or :class:`Field` objects."""
    out = tuple(f if isinstance(f, Field) else Field(f[0], f[1]) for f in fields)
    return DataType("ROW", nullable=nullable, fields=out)


def is_compact_decimal(precision: int) -> bool:
    """Java ``Decimal.isCompact``: the unscaled value fits a long (precision <= 18)."""
    return precision <= 18


def is_compact_timestamp(precision: int) -> bool:
    """Java ``TimestampNtz/Ltz.isCompact``: only milliseconds are stored (precision <= 3)."""
    return precision <= 3


# ------------------------------------------------------------------ the adapter point


def as_data_type(obj: Any) -> DataType:
    """Convert a Fluss JSON ``data_type`` (or an object that renders to one) to DataType."""
    if isinstance(obj, DataType):
        return obj
    if not isinstance(obj, Mapping):
        for attr in ("to_json", "to_dict"):
            render = getattr(obj, attr, None)
            if callable(render):
                rendered = render()
                if isinstance(rendered, str):
                    import json

                    rendered = json.loads(rendered)
                return as_data_type(rendered)
        raise TypeError(f"cannot build a Fluss data type from {type(obj).__name__}")
    if "columns" in obj:  # a whole schema_json
        return _schema_to_row(obj)
    if isinstance(obj.get("schema"), Mapping):  # a table_json / table descriptor
        return as_data_type(obj["schema"])
    root = str(obj["type"])
    kwargs: dict[str, Any] = {"nullable": bool(obj.get("nullable", True))}
    for key in ("length", "precision", "scale"):
        if key in obj:
            kwargs[key] = int(obj[key])
    if "element_type" in obj:
        kwargs["element"] = as_data_type(obj["element_type"])
    if "key_type" in obj:
        kwargs["key"] = as_data_type(obj["key_type"])
    if "value_type" in obj:
        kwargs["value"] = as_data_type(obj["value_type"])
    if "fields" in obj:
        kwargs["fields"] = tuple(
            Field(str(f["name"]), as_data_type(f["field_type"])) for f in obj["fields"]
        )
    return DataType(root, **kwargs)


def _schema_to_row(schema: Mapping[str, Any]) -> DataType:
    pk = set(schema.get("primary_key") or ())
    fields = []
    for col in schema["columns"]:
        dt = as_data_type(col["data_type"])
        if col["name"] in pk and dt.nullable:  # primary-key columns are forced NOT NULL
            dt = _with_nullable(dt, False)
        fields.append(Field(str(col["name"]), dt))
    return DataType("ROW", nullable=False, fields=tuple(fields))


def _with_nullable(dt: DataType, nullable: bool) -> DataType:
    return DataType(
        dt.root,
        nullable=nullable,
        length=dt.length,
        precision=dt.precision,
        scale=dt.scale,
        element=dt.element,
        key=dt.key,
        value=dt.value,
        fields=dt.fields,
    )


def as_row_type(obj: Any) -> DataType:
    """The single adapter point: anything describing a row (see module doc) -> ROW DataType.

    Also accepts a sequence of ``(name, type)`` pairs whose types are themselves adaptable.
    """
    if isinstance(obj, (list, tuple)):
        return row_type((name, as_data_type(t)) for name, t in obj)
    dt = as_data_type(obj)
    if dt.root != "ROW":
        raise TypeError(f"expected a ROW type, got {dt}")
    return dt

"""Schemas, columns and table / database descriptors (the documents, as parsed)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fluss_proto.types.datatypes import DataField, DataType, FrozenDict, RowType

# ============================================================================ schema & tables


@dataclass(frozen=True)
class AggFunction:
    """A column's aggregate function (aggregation merge engine), kept as written.

    ``type`` is Fluss's lower-case name (``sum``, ``listagg``, ``last_value_ignore_nulls``...);
    names this module does not know are kept too (Fluss itself silently drops them).
    """

    type: str
    parameters: FrozenDict | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.parameters is not None:
            out["parameters"] = self.parameters.to_dict()
        return out


@dataclass(frozen=True)
class Column:
    name: str
    type: DataType
    comment: str | None = None
    column_id: int | None = None
    agg_function: AggFunction | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "data_type": self.type.to_json()}
        if self.comment is not None:
            out["comment"] = self.comment
        if self.agg_function is not None:
            out["agg_function"] = self.agg_function.to_json()
        if self.column_id is not None:
            out["id"] = self.column_id
        return out


@dataclass(frozen=True)
class Schema:
    """Columns in order; ``primary_key`` is empty for log tables."""

    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    auto_increment_columns: tuple[str, ...] = ()
    highest_field_id: int | None = None

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def row_type(self) -> RowType:
        """The columns as a ROW (names, types, column ids; no comments), like Fluss."""
        return RowType(
            fields=tuple(DataField(c.name, c.type, None, c.column_id) for c in self.columns),
            nullable=True,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": 1, "columns": [c.to_json() for c in self.columns]}
        if self.primary_key:
            out["primary_key"] = list(self.primary_key)
        if self.auto_increment_columns:
            out["auto_increment_column"] = list(self.auto_increment_columns)
        if self.highest_field_id is not None:
            out["highest_field_id"] = self.highest_field_id
        return out

    def to_json_bytes(self) -> bytes:
        """Compact UTF-8 JSON, the way the Fluss server writes it."""
        return _dump(self.to_json())


@dataclass(frozen=True)
class TableDescriptor:
    schema: Schema
    comment: str | None = None
    partition_keys: tuple[str, ...] = ()
    bucket_keys: tuple[str, ...] = ()
    bucket_count: int | None = None
    properties: FrozenDict = field(default_factory=FrozenDict)
    custom_properties: FrozenDict = field(default_factory=FrozenDict)
    #: Whether the JSON carried a distribution (``bucket_key`` or ``bucket_count``).
    has_distribution: bool = True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": 1, "schema": self.schema.to_json()}
        if self.comment is not None:
            out["comment"] = self.comment
        out["partition_key"] = list(self.partition_keys)
        if self.has_distribution:
            out["bucket_key"] = list(self.bucket_keys)
            if self.bucket_count is not None:
                out["bucket_count"] = self.bucket_count
        out["properties"] = self.properties.to_dict()
        out["custom_properties"] = self.custom_properties.to_dict()
        return out

    def to_json_bytes(self) -> bytes:
        """Compact UTF-8 JSON, the way the Fluss server writes it."""
        return _dump(self.to_json())


@dataclass(frozen=True)
class DatabaseDescriptor:
    comment: str | None = None
    custom_properties: FrozenDict = field(default_factory=FrozenDict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": 1}
        if self.comment is not None:
            out["comment"] = self.comment
        out["custom_properties"] = self.custom_properties.to_dict()
        return out

    def to_json_bytes(self) -> bytes:
        return _dump(self.to_json())


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()

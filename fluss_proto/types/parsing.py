"""Parsing of the server's JSON documents: strict about shapes, lenient about what is
missing; every problem is a ``TableJsonError`` naming where it is."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, NoReturn

from fluss_proto.errors import TableJsonError
from fluss_proto.types.datatypes import (
    _INT32_MAX,
    _INT32_MIN,
    MAX_TYPE_DEPTH,
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    BytesType,
    CharType,
    DataField,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    FrozenDict,
    IntType,
    LocalZonedTimestampType,
    MapType,
    RowType,
    SmallIntType,
    StringType,
    TimestampType,
    TimeType,
    TinyIntType,
    TypeRoot,
    _LengthType,
    _PrecisionType,
    _SimpleType,
)
from fluss_proto.types.schema import (
    AggFunction,
    Column,
    DatabaseDescriptor,
    Schema,
    TableDescriptor,
)

# ============================================================================ parsing


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


class _Ctx:
    """Where we are in the document, for error messages."""

    __slots__ = ("column",)

    def __init__(self) -> None:
        self.column: str | None = None

    def fail(self, path: str, reason: str) -> NoReturn:
        raise TableJsonError(path, reason, column=self.column)

    def obj(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(path, f"expected an object, got {_describe(value)}")
        return value

    def required(self, obj: Mapping[str, Any], key: str, path: str) -> Any:
        if key not in obj:
            self.fail(_join(path, key), "missing")
        return obj[key]

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {_describe(value)}")
        return value

    def opt_string(self, obj: Mapping[str, Any], key: str, path: str) -> str | None:
        value = obj.get(key)
        return None if value is None else self.string(value, _join(path, key))

    def integer(self, value: Any, path: str, lo: int = _INT32_MIN, hi: int = _INT32_MAX) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, f"expected an integer, got {_describe(value)}")
        if not lo <= value <= hi:
            self.fail(path, f"{value} is out of range [{lo}, {hi}]")
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            self.fail(path, f"expected true or false, got {_describe(value)}")
        return value

    def column_names(
        self, obj: Mapping[str, Any], key: str, path: str, known: set[str]
    ) -> tuple[str, ...]:
        """The names under ``key``, each one of the ``known`` columns."""
        kpath = _join(path, key)
        out = self.names(obj.get(key), kpath)
        for i, n in enumerate(out):
            if n not in known:
                self.fail(f"{kpath}[{i}]", f"unknown column {n!r}")
        return out

    def names(self, value: Any, path: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list | tuple):
            self.fail(path, f"expected a list of names, got {_describe(value)}")
        out = tuple(self.string(v, f"{path}[{i}]") for i, v in enumerate(value))
        if len(set(out)) != len(out):
            dup = next(n for n in out if out.count(n) > 1)
            self.fail(path, f"{dup!r} is listed twice")
        return out

    def str_map(self, value: Any, path: str) -> FrozenDict:
        if value is None:
            return FrozenDict()
        obj = self.obj(value, path)
        out: dict[str, str] = {}
        for k, v in obj.items():
            key = self.string(k, path)
            out[key] = self.string(v, f"{path}[{key!r}]")
        return FrozenDict(out)


def _load(doc: Any, what: str) -> Any:
    """JSON text (bytes / str) -> Python value; already-parsed values pass through."""
    if isinstance(doc, bytes | bytearray | memoryview):
        try:
            doc = bytes(doc).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TableJsonError("", f"{what} is not valid UTF-8: {exc.reason}") from None
    if isinstance(doc, str):
        try:
            return json.loads(doc)
        except RecursionError:
            raise TableJsonError("", f"{what} is nested too deeply") from None
        except ValueError as exc:
            raise TableJsonError("", f"{what} is not valid JSON: {exc}") from None
    return doc


def _guard(fn: Callable[[], Any]) -> Any:
    """Run a parse; a bug-class exception is still reported as TableJsonError."""
    try:
        return fn()
    except TableJsonError:
        raise
    except RecursionError:
        raise TableJsonError("", "nested too deeply") from None


_LENGTH_TYPES: dict[TypeRoot, type[_LengthType]] = {
    TypeRoot.CHAR: CharType,
    TypeRoot.BINARY: BinaryType,
}
_PRECISION_TYPES: dict[TypeRoot, type[_PrecisionType]] = {
    TypeRoot.TIME_WITHOUT_TIME_ZONE: TimeType,
    TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE: TimestampType,
    TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE: LocalZonedTimestampType,
}
_SIMPLE_TYPES: dict[TypeRoot, type[_SimpleType]] = {
    t.root: t
    for t in (
        BooleanType,
        TinyIntType,
        SmallIntType,
        IntType,
        BigIntType,
        FloatType,
        DoubleType,
        StringType,
        BytesType,
        DateType,
    )
}
_ROOTS = {r.value: r for r in TypeRoot}


def _parse_type(ctx: _Ctx, value: Any, path: str, depth: int) -> DataType:
    if depth > MAX_TYPE_DEPTH:
        ctx.fail(path, f"types nested deeper than {MAX_TYPE_DEPTH} levels")
    obj = ctx.obj(value, path)
    name = ctx.string(ctx.required(obj, "type", path), _join(path, "type"))
    root = _ROOTS.get(name)
    if root is None:
        ctx.fail(path, f"unknown type {name!r}")
    nullable = True
    if "nullable" in obj:
        nullable = ctx.boolean(obj["nullable"], _join(path, "nullable"))

    def num(key: str) -> int:
        return ctx.integer(ctx.required(obj, key, path), _join(path, key))

    try:
        if root in _SIMPLE_TYPES:
            return _SIMPLE_TYPES[root](nullable=nullable)
        if root in _LENGTH_TYPES:
            return _LENGTH_TYPES[root](num("length"), nullable=nullable)
        if root in _PRECISION_TYPES:
            return _PRECISION_TYPES[root](num("precision"), nullable=nullable)
        if root is TypeRoot.DECIMAL:
            return DecimalType(num("precision"), num("scale"), nullable=nullable)
        if root is TypeRoot.ARRAY:
            element = _parse_type(
                ctx, ctx.required(obj, "element_type", path), _join(path, "element_type"), depth + 1
            )
            return ArrayType(element, nullable=nullable)
        if root is TypeRoot.MAP:
            key = _parse_type(
                ctx, ctx.required(obj, "key_type", path), _join(path, "key_type"), depth + 1
            )
            val = _parse_type(
                ctx, ctx.required(obj, "value_type", path), _join(path, "value_type"), depth + 1
            )
            return MapType(key, val, nullable=nullable)
        # ROW
        return RowType(_parse_fields(ctx, obj, path, depth), nullable=nullable)
    except ValueError as exc:  # a range check in a type's constructor
        ctx.fail(path, str(exc))


def _parse_fields(
    ctx: _Ctx, obj: Mapping[str, Any], path: str, depth: int
) -> tuple[DataField, ...]:
    fpath = _join(path, "fields")
    raw = ctx.required(obj, "fields", path)
    if not isinstance(raw, list | tuple):
        ctx.fail(fpath, f"expected a list of fields, got {_describe(raw)}")
    fields: list[DataField] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        ipath = f"{fpath}[{i}]"
        fobj = ctx.obj(item, ipath)
        name = ctx.string(ctx.required(fobj, "name", ipath), _join(ipath, "name"))
        if not name.strip():
            ctx.fail(_join(ipath, "name"), "field name is blank")
        if name in seen:
            ctx.fail(_join(ipath, "name"), f"duplicate field name {name!r}")
        seen.add(name)
        ftype = _parse_type(
            ctx, ctx.required(fobj, "field_type", ipath), _join(ipath, "field_type"), depth + 1
        )
        description = ctx.opt_string(fobj, "description", ipath)
        field_id = _opt_id(ctx, fobj, "field_id", ipath)
        fields.append(DataField(name, ftype, description, field_id))
    return tuple(fields)


def _opt_id(ctx: _Ctx, obj: Mapping[str, Any], key: str, path: str) -> int | None:
    """An optional non-negative id; absent, null or Fluss's -1 ("unknown") read as None."""
    value = obj.get(key)
    if value is None:
        return None
    n = ctx.integer(value, _join(path, key), -1)
    return None if n == -1 else n


def _parse_column(ctx: _Ctx, value: Any, path: str) -> Column:
    obj = ctx.obj(value, path)
    name = ctx.string(ctx.required(obj, "name", path), _join(path, "name"))
    ctx.column = name
    dtype = _parse_type(ctx, ctx.required(obj, "data_type", path), _join(path, "data_type"), 1)
    comment = ctx.opt_string(obj, "comment", path)
    column_id = _opt_id(ctx, obj, "id", path)
    agg: AggFunction | None = None
    if obj.get("agg_function") is not None:
        apath = _join(path, "agg_function")
        aobj = ctx.obj(obj["agg_function"], apath)
        atype = ctx.string(ctx.required(aobj, "type", apath), _join(apath, "type"))
        params = None
        if aobj.get("parameters") is not None:
            params = ctx.str_map(aobj["parameters"], _join(apath, "parameters"))
        agg = AggFunction(atype, params)
    ctx.column = None
    return Column(name, dtype, comment, column_id, agg)


def _parse_schema(ctx: _Ctx, value: Any, path: str) -> Schema:
    obj = ctx.obj(value, path)
    cpath = _join(path, "columns")
    raw = ctx.required(obj, "columns", path)
    if not isinstance(raw, list | tuple):
        ctx.fail(cpath, f"expected a list of columns, got {_describe(raw)}")
    columns = [_parse_column(ctx, c, f"{cpath}[{i}]") for i, c in enumerate(raw)]
    names = [c.name for c in columns]
    for i, n in enumerate(names):
        if n in names[:i]:
            ctx.fail(f"{cpath}[{i}].name", f"duplicate column name {n!r}")
    known = set(names)

    primary_key = ctx.column_names(obj, "primary_key", path, known)
    auto_inc = ctx.column_names(obj, "auto_increment_column", path, known)
    highest = None
    if obj.get("highest_field_id") is not None:
        highest = ctx.integer(obj["highest_field_id"], _join(path, "highest_field_id"), -1)
    # Like Fluss: primary-key columns are NOT NULL whatever the JSON says.
    pk = set(primary_key)
    columns = [
        replace(c, type=c.type.with_nullable(False)) if c.name in pk and c.type.nullable else c
        for c in columns
    ]
    return Schema(tuple(columns), primary_key, auto_inc, highest)


def _parse_table(ctx: _Ctx, value: Any) -> TableDescriptor:
    obj = ctx.obj(value, "")
    schema = _parse_schema(ctx, ctx.required(obj, "schema", ""), "schema")
    comment = ctx.opt_string(obj, "comment", "")
    known = set(schema.column_names)

    partition_keys = ctx.column_names(obj, "partition_key", "", known)
    bucket_keys = ctx.column_names(obj, "bucket_key", "", known)
    has_distribution = "bucket_key" in obj or "bucket_count" in obj
    bucket_count = None
    if obj.get("bucket_count") is not None:
        bucket_count = ctx.integer(obj["bucket_count"], "bucket_count", 1)
    if schema.primary_key and not bucket_keys:
        # Like Fluss: a PK table is bucketed by its primary key minus the partition keys.
        bucket_keys = tuple(k for k in schema.primary_key if k not in partition_keys)
        has_distribution = True
    return TableDescriptor(
        schema=schema,
        comment=comment,
        partition_keys=partition_keys,
        bucket_keys=bucket_keys,
        bucket_count=bucket_count,
        properties=ctx.str_map(obj.get("properties"), "properties"),
        custom_properties=ctx.str_map(obj.get("custom_properties"), "custom_properties"),
        has_distribution=has_distribution,
    )


def _parse_database(ctx: _Ctx, value: Any) -> DatabaseDescriptor:
    obj = ctx.obj(value, "")
    return DatabaseDescriptor(
        comment=ctx.opt_string(obj, "comment", ""),
        custom_properties=ctx.str_map(obj.get("custom_properties"), "custom_properties"),
    )


def parse_data_type(obj: Any) -> DataType:
    """One type node (already-parsed JSON, or JSON text), e.g. ``{"type": "INTEGER"}``."""
    return _guard(lambda: _parse_type(_Ctx(), _load(obj, "type JSON"), "", 1))


def parse_schema(doc: Any) -> Schema:
    """A schema document (``GetTableSchemaResponse.schema_json``): bytes, str or parsed."""
    return _guard(lambda: _parse_schema(_Ctx(), _load(doc, "schema JSON"), ""))


def parse_table_descriptor(doc: Any) -> TableDescriptor:
    """A table document (``GetTableInfoResponse.table_json``): bytes, str or parsed."""
    return _guard(lambda: _parse_table(_Ctx(), _load(doc, "table JSON")))


def parse_database_descriptor(doc: Any) -> DatabaseDescriptor:
    """A database document (``GetDatabaseInfoResponse.database_json``): bytes, str or parsed."""
    return _guard(lambda: _parse_database(_Ctx(), _load(doc, "database JSON")))

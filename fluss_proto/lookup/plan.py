"""Which columns a lookup key names, and each key typed, encoded and placed (pure).

A **primary-key lookup** names every primary-key column (partition keys included). A
**prefix lookup** names the bucket-key columns and, on a partitioned table, the partition
keys; Fluss allows it only when the bucket key is a *proper* prefix of the physical primary
key (the primary key without the partition keys): ``PrefixKeyLookuper.validatePrefixLookup``.

Each key is typed column by column from the table's schema
(:func:`fluss_proto.literals.column_value`), encoded (:mod:`.keys`) over the physical
primary key (or the bucket key, for a prefix), hashed to its bucket, and, on a partitioned
table, given the partition name its partition-key values make (``$``-joined, each value as
Fluss's ``PartitionUtils.convertValueOfType`` writes it).

Tables konsole does not look up, with a typed reason (:class:`UnsupportedTableError`):
tables with a lake format other than LANCE (their keys use the lake's encoder), and tables
whose KV values carry a row-TTL header (``table.kv.format-version`` 3, only in an open
upstream change: it needs LOOKUP v2, which no Fluss release defines yet).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Final

from fluss_proto.errors import LiteralError, LookupKeyError, UnsupportedTableError
from fluss_proto.literals import column_value, internal_value, type_text
from fluss_proto.lookup.keys import bucket_candidates, encode_key
from fluss_proto.records.rowtype import DataType, as_row_type
from fluss_proto.types import TableInfo

__all__ = ["KeyPlan", "LookupSpec", "lookup_spec", "partition_text", "plan_keys"]

PARTITION_SEPARATOR: Final = "$"
#: Lake formats whose tables' keys are Fluss's own compacted encoding.
_COMPACTED_LAKES: Final = frozenset({None, "lance"})
_NOT_KEY_TYPES: Final = frozenset({"ARRAY", "MAP", "ROW"})
_EPOCH: Final = date(1970, 1, 1)


@dataclass(frozen=True, slots=True)
class LookupSpec:
    """How one table is looked up."""

    table: str
    prefix: bool
    #: The columns every key must name, in order.
    columns: tuple[str, ...]
    #: The columns encoded into the bytes sent (physical primary key, or the bucket key).
    encoded: tuple[str, ...]
    #: The columns the bucket is computed from (None: the encoded bytes themselves).
    bucket_columns: tuple[str, ...] | None
    partition_keys: tuple[str, ...]
    bucket_count: int
    types: Mapping[str, DataType]


@dataclass(frozen=True, slots=True)
class KeyPlan:
    """One key: its position among the keys asked, its typed values, where it lives."""

    index: int
    #: Column values (see :mod:`fluss_proto.literals`), in :attr:`LookupSpec.columns` order.
    values: tuple[Any, ...]
    key: bytes
    #: Where the key lives: the Java client's bucket, then the Rust client's when it
    #: differs (fluss_proto.lookup.keys: the two hashes in the wild).
    buckets: tuple[int, ...]
    #: The partition name (partitioned tables), e.g. ``2024-06-01$eu``.
    partition: str | None


def lookup_spec(info: TableInfo, *, prefix: bool = False) -> LookupSpec:
    """The key columns of ``info`` for a lookup (or a prefix lookup); raises
    :class:`LookupKeyError` for a log table or a prefix the table does not allow, and
    :class:`UnsupportedTableError` for a key encoding konsole does not implement."""
    path = info.table_path
    if not info.is_pk_table:
        raise LookupKeyError(f"{path} is a log table: lookups need a primary key")
    lake = info.datalake_format
    if lake not in _COMPACTED_LAKES:
        raise UnsupportedTableError(
            f"{path} uses the {lake} lake format, whose key encoding konsole does not implement"
        )
    version = info.kv_format_version
    if version is not None and version > 2:
        raise UnsupportedTableError(
            f"{path} has table.kv.format-version {version} (row TTL): its values carry a "
            "header that needs LOOKUP version 2, which no Fluss release defines yet"
        )
    row = as_row_type(info.schema)
    types = {f.name: f.type for f in row.fields}
    physical, bucket_keys = info.physical_primary_key, info.bucket_keys or info.physical_primary_key
    partition_keys = info.partition_keys
    if prefix:
        if tuple(physical[: len(bucket_keys)]) != tuple(bucket_keys):
            raise LookupKeyError(
                f"{path} allows no prefix lookup: its bucket key ({', '.join(bucket_keys)}) is "
                f"not a prefix of its primary key ({', '.join(physical)}, without partition keys)"
            )
        if tuple(bucket_keys) == tuple(physical):
            raise LookupKeyError(
                f"{path} allows no prefix lookup: its bucket key is its whole primary key "
                f"({', '.join(physical)}); look the rows up by key instead"
            )
        columns = (*bucket_keys, *partition_keys)
        encoded, bucket_columns = tuple(bucket_keys), None
    else:
        columns = tuple(info.primary_key)
        encoded = tuple(physical)
        bucket_columns = None if tuple(bucket_keys) == tuple(physical) else tuple(bucket_keys)
    for name in columns:
        if types[name].root in _NOT_KEY_TYPES:  # pragma: no cover - Fluss refuses such keys
            raise UnsupportedTableError(f"{path}: key column {name!r} is {types[name].root}")
    return LookupSpec(
        table=path,
        prefix=prefix,
        columns=columns,
        encoded=encoded,
        bucket_columns=bucket_columns,
        partition_keys=tuple(partition_keys),
        bucket_count=info.bucket_count,
        types=types,
    )


def plan_keys(spec: LookupSpec, keys: Sequence[Mapping[str, object]]) -> list[KeyPlan]:
    """Every key typed, encoded, bucketed and given its partition; raises
    :class:`LookupKeyError` (a column missing, unknown or given twice) or
    :class:`~fluss_proto.errors.LiteralError` (a value that does not fit its type), naming
    the key by its position (1-based) when there are several."""
    if not keys:
        raise LookupKeyError("no key given")
    return [_plan(spec, i, key, len(keys)) for i, key in enumerate(keys)]


def _plan(spec: LookupSpec, index: int, key: Mapping[str, object], count: int) -> KeyPlan:
    which = f"key {index + 1}: " if count > 1 else ""
    what = "prefix lookup" if spec.prefix else "lookup"
    unknown = [name for name in key if name not in spec.columns]
    if unknown:
        raise LookupKeyError(
            f"{which}{', '.join(map(repr, unknown))} {'is' if len(unknown) == 1 else 'are'} "
            f"not a {what} column of {spec.table} (it takes {', '.join(spec.columns)})"
        )
    missing = [name for name in spec.columns if name not in key]
    if missing:
        raise LookupKeyError(
            f"{which}missing {what} column(s) {', '.join(missing)} of {spec.table} "
            f"(it takes {', '.join(spec.columns)})"
        )
    typed: dict[str, Any] = {}
    for name in spec.columns:
        raw = key[name]
        if raw is None:
            raise LookupKeyError(f"{which}key column {name!r} cannot be NULL")
        try:
            typed[name] = column_value(raw, spec.types[name], name)
        except LiteralError as exc:
            raise LiteralError(exc.column, exc.type_text, f"{which}{exc.reason}") from None
    key_bytes = _encode(spec, typed, spec.encoded)
    bucket_bytes = (
        key_bytes if spec.bucket_columns is None else _encode(spec, typed, spec.bucket_columns)
    )
    partition = None
    if spec.partition_keys:
        partition = PARTITION_SEPARATOR.join(
            partition_text(typed[k], spec.types[k], k) for k in spec.partition_keys
        )
    return KeyPlan(
        index=index,
        values=tuple(typed[name] for name in spec.columns),
        key=key_bytes,
        buckets=bucket_candidates(bucket_bytes, spec.bucket_count),
        partition=partition,
    )


def _encode(spec: LookupSpec, typed: Mapping[str, Any], columns: Sequence[str]) -> bytes:
    types = [spec.types[c] for c in columns]
    return encode_key(
        [internal_value(typed[c], t) for c, t in zip(columns, types, strict=True)], types
    )


def partition_text(value: Any, dt: DataType, column: str) -> str:
    """A partition-key column value as it appears in the partition's name (Fluss
    ``PartitionUtils.convertValueOfType``); raises :class:`UnsupportedTableError` for the
    types konsole does not name partitions of (FLOAT, DOUBLE, timestamps)."""
    root = dt.root
    if root in ("STRING", "CHAR"):
        return str(value)
    if root == "BOOLEAN":
        return "true" if value else "false"
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
        return str(value)
    if root == "DATE":
        day = _EPOCH + timedelta(days=value)
        return f"{day.year:04d}-{day.month:02d}-{day.day:02d}"
    if root == "TIME_WITHOUT_TIME_ZONE":
        ms = internal_value(value, dt)
        hours, rest = divmod(ms, 3_600_000)
        minutes, rest = divmod(rest, 60_000)
        seconds, millis = divmod(rest, 1000)
        return f"{hours:02d}-{minutes:02d}-{seconds:02d}_{millis:03d}"
    if root in ("BYTES", "BINARY"):
        return bytes(value).hex()
    raise UnsupportedTableError(
        f"partition key {column!r} is {type_text(dt)}: konsole does not name partitions of "
        "that type; look the rows up with preview --partition instead"
    )

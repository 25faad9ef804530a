"""Masking applied to rows on their way out: the one place every writer passes.

:func:`konsole.export.stream.make_writer` takes the set of masked column names; the writer's
schema then has those columns as non-null strings and every chunk written has each of
their values (NULL included) replaced by :data:`~konsole.model.masking.MASK_TEXT` before
any format sees it (:func:`mask_chunk`). Which columns are masked comes from a profile's
rules (:class:`~konsole.model.masking.MaskRules`) and the table (:func:`masked_columns`):
when a partition key is masked, so is ``_partition`` (its name holds the key's values), and
the report's partition names are hidden too (:func:`hide_partitions`).

Light rows (:class:`~fluss_proto.scan.rows.Rows`) are masked without pyarrow; Arrow tables
with it (imported only for them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from konsole.model.masking import MASK_TEXT, MaskRules

if TYPE_CHECKING:
    from fluss_proto.scan import ScanReport

__all__ = [
    "MASKED_TYPE_LABEL",
    "PARTITION_COLUMN",
    "hide_partitions",
    "mask_chunk",
    "mask_schema",
    "masked_columns",
]

#: The ``fluss.type`` metadata of a masked Arrow column.
MASKED_TYPE_LABEL = b"STRING (masked)"
PARTITION_COLUMN = "_partition"  # fluss_proto.scan.constants.PARTITION_COLUMN (no import)
R = TypeVar("R")


def masked_columns(
    rules: MaskRules | None,
    table: str,
    names: Iterable[str],
    partition_keys: Collection[str] = (),
) -> frozenset[str]:
    """The columns among ``names`` that ``rules`` mask in ``table``; ``_partition`` too when
    a partition key is masked."""
    if not rules:
        return frozenset()
    names = list(names)
    masked = set(rules.columns(table, names))
    if PARTITION_COLUMN in names and any(rules.masked(table, k) for k in partition_keys):
        masked.add(PARTITION_COLUMN)
    return frozenset(masked)


def mask_schema(schema: Any, masked: Collection[str]) -> Any:
    """``schema`` (a ``RowsSchema`` or a ``pyarrow.Schema``) with the masked columns as
    non-null strings."""
    if not masked:
        return schema
    from fluss_proto.scan.rows import RowsSchema

    if isinstance(schema, RowsSchema):
        from fluss_proto.records.rowtype import DataType

        text = DataType("STRING", nullable=False)
        types = tuple(
            text if n in masked else t for n, t in zip(schema.names, schema.types, strict=True)
        )
        return RowsSchema(schema.names, types)
    import pyarrow as pa

    fields = [
        pa.field(f.name, pa.string(), False, metadata={b"fluss.type": MASKED_TYPE_LABEL})
        if f.name in masked
        else f
        for f in schema
    ]
    return pa.schema(fields, metadata=schema.metadata)


def mask_chunk(chunk: R, masked: Collection[str], schema: Any) -> R:
    """``chunk`` (light ``Rows`` or a ``pyarrow.Table``) with every value of the masked
    columns replaced, under ``schema`` (:func:`mask_schema` of the chunk's)."""
    if not masked:
        return chunk
    from fluss_proto.scan.rows import Rows

    if isinstance(chunk, Rows):
        n = chunk.num_rows
        columns = [
            [MASK_TEXT] * n if name in masked else values
            for name, values in zip(chunk.schema.names, chunk.columns, strict=True)
        ]
        return Rows(schema, columns, n)  # type: ignore[return-value]
    import pyarrow as pa

    table: pa.Table = chunk  # type: ignore[assignment]
    n = table.num_rows
    arrays = [
        pa.array([MASK_TEXT] * n, pa.string()) if name in masked else table.column(name)
        for name in table.column_names
    ]
    return pa.Table.from_arrays(arrays, schema=schema)  # type: ignore[return-value]


def hide_partitions(report: ScanReport) -> ScanReport:
    """The report without partition names (a masked partition key's values are in them)."""
    buckets = tuple(dataclasses.replace(b, partition_name=None) for b in report.buckets)
    return dataclasses.replace(
        report,
        buckets=buckets,
        partitions=tuple(MASK_TEXT for _ in report.partitions),
        partitions_skipped=tuple(MASK_TEXT for _ in report.partitions_skipped),
    )

"""Streaming a preview into a writer, and the one writer factory (no pyarrow here).

:func:`export_stream` writes a :class:`~fluss_proto.scan.PreviewStream`'s chunks as they
arrive: an Arrow stream through :mod:`konsole.export.writers`, a light stream (Python values,
:mod:`fluss_proto.scan.rows`) through :mod:`konsole.export.plain`, which writes the same bytes
without pyarrow. :func:`finish_export` ends the format and commits the output.

:func:`make_writer` is the one writer factory: it picks the table of writer classes by the
schema's kind (a light ``RowsSchema``: :mod:`konsole.export.plain`, never importing pyarrow;
a ``pyarrow.Schema``: :mod:`konsole.export.writers`). The writers' base class is in
:mod:`konsole.export.rowwriter` (re-exported here), so that no writer imports this module.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from konsole.export import FORMATS, ExportFormatError, Output, io_error
from konsole.export.rowwriter import Report, RowWriter

if TYPE_CHECKING:
    from fluss_proto.scan import PreviewStream
    from fluss_proto.types import DataType
    from konsole.model.masking import MaskRules


__all__ = [
    "PAUSE_ENV",
    "PAUSE_SECONDS_ENV",
    "Report",
    "RowWriter",
    "export_stream",
    "finish_export",
    "make_writer",
]

PAUSE_ENV: Final = "KONSOLE_EXPORT_TEST_PAUSE"
PAUSE_SECONDS_ENV: Final = "KONSOLE_EXPORT_TEST_PAUSE_S"


def make_writer(
    fmt: str,
    sink: BinaryIO,
    schema: Any,
    *,
    table: str = "",
    types: Mapping[str, DataType] | None = None,
    masked: Collection[str] = (),
) -> RowWriter:
    """A writer of ``fmt`` onto ``sink`` for rows of ``schema`` (its header, if any, is
    written now): light rows for a ``RowsSchema`` (the text formats only), Arrow tables for
    a ``pyarrow.Schema``. ``masked`` columns are written as the mask text whatever they
    hold (:mod:`konsole.export.mask`). Raises :class:`ExportFormatError` for a format the
    kind has no writer for, ``TypeError`` for any other schema."""
    writers, kind = _writers_for(schema)
    try:
        cls = writers[fmt]
    except KeyError:
        known = ", ".join(f for f in FORMATS if f in writers)
        raise ExportFormatError(f"unknown format {fmt!r} for {kind}; known: {known}") from None
    hidden = frozenset(masked)
    if hidden:
        from konsole.export.mask import mask_schema

        schema = mask_schema(schema, hidden)
        types = {k: v for k, v in (types or {}).items() if k not in hidden}
    writer = cls(sink, schema, table=table, types=types)
    writer.masked = hidden
    return writer


def _writers_for(schema: Any) -> tuple[Mapping[str, type[RowWriter]], str]:
    """The writer classes by format for ``schema``'s kind, and the kind's name. Light rows
    are checked first so that their path never imports pyarrow."""
    from fluss_proto.scan.rows import RowsSchema

    if isinstance(schema, RowsSchema):
        from konsole.export.plain import WRITERS as plain

        return plain, "light rows"
    import pyarrow as pa

    if isinstance(schema, pa.Schema):
        from konsole.export.writers import WRITERS as arrow

        return arrow, "Arrow tables"
    raise TypeError(f"a writer needs a RowsSchema or a pyarrow.Schema, not {type(schema).__name__}")


async def export_stream(
    stream: PreviewStream,
    out: Output,
    fmt: str,
    *,
    on_rows: Callable[[int], None] | None = None,
    masks: MaskRules | None = None,
) -> RowWriter:
    """Write a :class:`~fluss_proto.scan.PreviewStream`'s chunks onto an open
    :class:`Output` as they arrive. Then, once the stream's ``async with`` has closed (the
    report is final), :func:`finish_export` ends the format and commits the output.
    ``masks``: the profile's masking rules (the columns they name are masked).
    Raises :class:`ExportIOError`."""
    types = {c.name: c.type for c in stream.info.schema.columns}
    pause = os.environ.get(PAUSE_ENV)
    masked = _masked(masks, stream.table_path, stream.schema, stream.info.partition_keys)
    try:
        writer = make_writer(
            fmt, out.sink, stream.schema, table=stream.table_path, types=types, masked=masked
        )
    except OSError as exc:
        raise io_error(out.path, exc) from None
    try:
        async for data in stream:
            if pause == "first-row" and not writer.rows:
                await _pause(pause)
            writer.write(data)
            if on_rows is not None:
                on_rows(writer.rows)
            if pause == "mid" and writer.rows:
                pause = None
                await _pause("mid")
    except OSError as exc:
        writer.abort()
        raise io_error(out.path, exc) from None
    except BaseException:  # cancelled (a signal), or the scan failed
        writer.abort()
        raise
    return writer


def _masked(
    masks: MaskRules | None, table: str, schema: Any, partition_keys: Collection[str]
) -> frozenset[str]:
    if not masks:
        return frozenset()
    from konsole.export.mask import masked_columns

    return masked_columns(masks, table, schema.names, partition_keys)


async def finish_export(writer: RowWriter, out: Output, report: Report | None) -> None:
    """End the format (the JSON document takes the report) and commit the output."""
    try:
        if os.environ.get(PAUSE_ENV) == "finish":
            await _pause("finish")
        writer.finish(report)
    except OSError as exc:
        writer.abort()
        raise io_error(out.path, exc) from None
    except BaseException:
        writer.abort()
        raise
    out.commit()


async def _pause(point: str) -> None:
    import asyncio

    sys.stderr.write(f"konsole-export-pause {point}\n")
    sys.stderr.flush()
    await asyncio.sleep(float(os.environ.get(PAUSE_SECONDS_ENV, "5")))

"""Streaming a preview into a writer, and the writers' common base (no pyarrow here).

:func:`export_stream` writes a :class:`~fluss_proto.scan.PreviewStream`'s chunks as they
arrive: an Arrow stream through :mod:`konsole.export.writers`, a light stream (Python values,
:mod:`fluss_proto.scan.rows`) through :mod:`konsole.export.plain`, which writes the same bytes
without pyarrow. :func:`finish_export` ends the format and commits the output.

:func:`make_writer` is the one writer factory: it picks the table of writer classes by the
schema's kind (a light ``RowsSchema``: :mod:`konsole.export.plain`, never importing pyarrow;
a ``pyarrow.Schema``: :mod:`konsole.export.writers`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO, Final, Protocol, TypeVar

from konsole.export import FORMATS, ExportFormatError, Output, io_error

if TYPE_CHECKING:
    from fluss_proto.scan import PreviewStream
    from fluss_proto.types import DataType
    from konsole.model.masking import MaskRules


class Report(Protocol):
    """What the JSON document writes last: a scan's or a lookup's report."""

    def to_dict(self) -> dict[str, Any]: ...


R = TypeVar("R", bound="Report | None")

__all__ = [
    "PAUSE_ENV",
    "PAUSE_SECONDS_ENV",
    "RowWriter",
    "export_stream",
    "finish_export",
    "make_writer",
]

PAUSE_ENV: Final = "KONSOLE_EXPORT_TEST_PAUSE"
PAUSE_SECONDS_ENV: Final = "KONSOLE_EXPORT_TEST_PAUSE_S"


class RowWriter:
    """Writes chunks of rows of one schema in one format; subclasses per format.

    ``masked``: columns whose values are replaced before any format sees them (set by
    :func:`make_writer`, which also gives the writer the masked schema).
    """

    #: Masked column names (konsole.export.mask).
    masked: frozenset[str] = frozenset()

    def __init__(
        self,
        sink: BinaryIO,
        schema: Any,
        *,
        table: str = "",
        types: Mapping[str, DataType] | None = None,
    ) -> None:
        self.sink = sink
        self.schema = schema
        self.table = table
        self.types: Mapping[str, DataType] = types or {}
        self.rows = 0

    def write(self, data: Any) -> None:
        if data.num_rows:
            if self.masked:
                from konsole.export.mask import mask_chunk

                data = mask_chunk(data, self.masked, self.schema)
            self._write(data)
            self.rows += data.num_rows
            self.sink.flush()

    def finish(self, report: Report | None = None) -> None:
        self._finish(self.public_report(report))
        self.sink.flush()

    def public_report(self, report: R) -> R:
        """``report`` as it may be shown beside these rows: without partition names when
        ``_partition`` is masked."""
        from konsole.export.mask import PARTITION_COLUMN, hide_partitions

        if report is None or PARTITION_COLUMN not in self.masked:
            return report
        return hide_partitions(report)  # type: ignore[arg-type,return-value]

    def abort(self) -> None:
        """Release the format writer after a failure or an interruption (its output is
        about to be discarded): nothing is left for a finaliser to write later."""
        with contextlib.suppress(Exception):
            self._close()

    def _close(self) -> None:
        return None

    def _write(self, data: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _finish(self, report: Report | None) -> None:
        return None


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

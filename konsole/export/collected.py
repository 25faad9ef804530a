"""Writing a collected :class:`~fluss_proto.scan.Preview` in one call (pyarrow).

The rows are already in memory (the console's preview screen): they are cut into chunks and
written through the same writer a stream would get (:func:`konsole.export.stream.make_writer`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from konsole.export import io_error, open_output, resolve_format
from konsole.export.mask import masked_columns
from konsole.export.rowwriter import RowWriter
from konsole.export.stream import make_writer

if TYPE_CHECKING:
    from fluss_proto.scan import Preview
    from konsole.model.masking import MaskRules

__all__ = ["ExportResult", "export_preview"]


@dataclass(frozen=True)
class ExportResult:
    rows: int
    path: Path | None


def export_preview(
    preview: Preview,
    path: Path | str | None,
    fmt: str | None = None,
    *,
    masks: MaskRules | None = None,
) -> ExportResult:
    """Write a collected preview to ``path`` (None: stdout) in ``fmt`` (None: from the
    suffix), the columns ``masks`` name masked. Raises :class:`ExportFormatError` /
    :class:`ExportIOError`."""
    chosen = resolve_format(fmt, path)
    types = {c.name: c.type for c in preview.info.schema.columns}
    table = preview.report.table_path
    masked = masked_columns(masks, table, preview.table.schema.names, preview.info.partition_keys)
    with open_output(path) as out:
        writer: RowWriter | None = None
        try:
            writer = make_writer(
                chosen, out.sink, preview.table.schema, table=table, types=types, masked=masked
            )
            for batch in preview.table.to_batches(max_chunksize=65_536):
                writer.write(pa.Table.from_batches([batch], schema=preview.table.schema))
            writer.finish(preview.report)
        except OSError as exc:
            if writer is not None:
                writer.abort()
            raise io_error(out.path, exc) from None
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        out.commit()
        return ExportResult(writer.rows, out.path)

"""The writers' common base (no pyarrow here): every format's writer is a :class:`RowWriter`.

It sits below everything else in :mod:`konsole.export`: the shared frames
(:mod:`konsole.export.frames`), the light writers (:mod:`konsole.export.plain`), the Arrow
writers (:mod:`konsole.export.writers`) and the factory that picks among them
(:func:`konsole.export.stream.make_writer`) all import it, and it imports none of them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol, TypeVar

if TYPE_CHECKING:
    from fluss_proto.types import DataType

__all__ = ["Report", "RowWriter"]


class Report(Protocol):
    """What the JSON document writes last: a scan's or a lookup's report."""

    def to_dict(self) -> dict[str, Any]: ...


R = TypeVar("R", bound="Report | None")


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

"""What the Arrow writers and the light writers share: the JSON document's frame and the
text table's layout (held rows, widths, headers). No pyarrow here.

A subclass says only how its chunks become text: :class:`JsonDocument` takes each chunk's
rows as ``,\\n`` + row, back to back; :class:`TextTable` takes per-column cell texts, their
widths, and how to join and pad them into lines.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from konsole.export.rowwriter import RowWriter

if TYPE_CHECKING:
    from konsole.export.rowwriter import Report

__all__ = ["JsonDocument", "TextTable"]


class JsonDocument(RowWriter):
    """``{"table": ..., "columns": [...], "rows": [`` rows ``], "report": {...}}``."""

    def __init__(self, sink: BinaryIO, schema: Any, *, labels: list[str], **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        names = list(schema.names)
        columns = [{"name": n, "type": t} for n, t in zip(names, labels, strict=True)]
        head = (
            f'{{"table": {json.dumps(self.table, ensure_ascii=False)}, '
            f'"columns": {json.dumps(columns, ensure_ascii=False)}, "rows": ['
        )
        self.sink.write(head.encode())

    def _rows_text(self, data: Any) -> bytes | memoryview:  # pragma: no cover - abstract
        """Each row of ``data`` as ``,\\n`` followed by its JSON object, back to back."""
        raise NotImplementedError

    def _write(self, data: Any) -> None:
        text = self._rows_text(data)
        if not self.rows:  # the document's first row follows "[" on a new line
            self.sink.write(b"\n")
            text = text[2:]
        self.sink.write(text)

    def _finish(self, report: Report | None) -> None:
        tail = "\n]" if self.rows else "]"
        if report is not None:
            tail += f', "report": {json.dumps(report.to_dict(), ensure_ascii=False)}'
        self.sink.write((tail + "}\n").encode())


class TextTable(RowWriter):
    """The aligned text table. The first ``block_rows`` rows (or all, if fewer) are held
    back to size the columns, so a small preview looks as it always did; later chunks
    use those widths, and one that needs wider columns grows them and repeats the header
    (after a blank line) above itself."""

    block_rows: int = 1_000

    def __init__(self, sink: BinaryIO, schema: Any, *, right: Sequence[bool], **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        self._names: list[str] = list(schema.names)
        self._right = list(right)
        self._widths: list[int] | None = None
        self._held: list[Any] = []
        self._held_rows = 0

    # what a subclass says
    def _join(self, held: list[Any]) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _cells(self, data: Any) -> tuple[list[Any], list[int]]:  # pragma: no cover - abstract
        """Each column's cell texts, and each column's widest cell."""
        raise NotImplementedError

    def _padded(
        self, cells: list[Any], widths: list[int]
    ) -> bytes | memoryview:  # pragma: no cover
        """The rows' lines, padded to ``widths``, right-trimmed, each ending in a newline."""
        raise NotImplementedError

    # the layout
    def _write(self, data: Any) -> None:
        if self._widths is None:
            self._held.append(data)
            self._held_rows += data.num_rows
            if self._held_rows >= self.block_rows:
                self._release()
            return
        self._lines(data)

    def _release(self) -> None:
        held, self._held, self._held_rows = self._held, [], 0
        if held:
            self._lines(held[0] if len(held) == 1 else self._join(held))

    def _lines(self, data: Any) -> None:
        cells, widest = self._cells(data)
        needed = [max(len(n), w) for n, w in zip(self._names, widest, strict=True)]
        head: list[str] = []
        if self._widths is None or any(n > w for n, w in zip(needed, self._widths, strict=True)):
            if self._widths is not None:
                needed = [max(a, b) for a, b in zip(needed, self._widths, strict=True)]
                head.append("")
            self._widths = needed
            head += self._header()
        if head:
            self.sink.write(("\n".join(head) + "\n").encode())
        self.sink.write(self._padded(cells, self._widths))

    def _header(self) -> list[str]:
        assert self._widths is not None
        title = "  ".join(
            n.rjust(w) if right else n.ljust(w)
            for n, w, right in zip(self._names, self._widths, self._right, strict=True)
        )
        return [title.rstrip(), "  ".join("-" * w for w in self._widths)]

    def _finish(self, report: Report | None) -> None:
        self._release()
        if self._widths is None:  # no rows: the header alone
            self._widths = [len(n) for n in self._names]
            self.sink.write(("\n".join(self._header()) + "\n").encode())

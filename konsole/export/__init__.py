"""Writing preview rows out: CSV, JSON lines, JSON, a text table, Parquet and Arrow IPC.

Shared by ``konsole preview`` and the terminal UI's preview screen (no click, no Textual
here). This module (formats, paths, the output file) imports no pyarrow, so the CLI
starts fast; the writers are in :mod:`konsole.export.writers`. Rows arrive as
``pyarrow.Table`` chunks (:func:`fluss_proto.scan.stream_preview`) or as one collected
:class:`~fluss_proto.scan.Preview`; every format is written chunk by chunk, so memory stays
bounded by a chunk (the text table: by its first 1,000 rows). The text formats
(``LIGHT_FORMATS``) are also written from a light stream's Python values, without pyarrow,
to the same bytes (:mod:`konsole.export.plain`).

API (``resolve_format``, ``open_output`` here; the rest in :mod:`konsole.export.writers`)::

    fmt = resolve_format(fmt_or_None, path_or_None)      # ExportFormatError (usage)
    with open_output(path_or_None) as out:               # ExportIOError on a bad path
        writer = make_writer(fmt, out.sink, schema, table="db.t", types=fluss_types)
        for table in chunks:
            writer.write(table)                          # ExportIOError (full disk, ...)
        writer.finish(report)                            # json: the report goes last
        out.commit()                                     # file: fsync, rename to PATH
    # left without commit(): the temporary file is removed, PATH is untouched

    export_preview(preview, path, fmt)                   # a collected Preview in one call
    async with stream_preview(client, "db.t", limit=n) as stream:
        writer = await export_stream(stream, out, fmt)   # chunks as they are read
    await finish_export(writer, out, stream.report)      # report, then commit

Formats (``FORMATS``) and the file suffixes that choose them (``SUFFIXES``):

- ``csv`` (``.csv``): header line, then rows through ``pyarrow.csv`` (``needed`` quoting:
  strings and the values rendered as text, i.e. floats, decimals, timestamps, base64 and
  nested values, are quoted; integers, booleans, dates and times are not; NULL is an
  empty field, so an empty string ``""`` and NULL differ); values as
  :func:`konsole.render.arrow.plain_text`;
- ``jsonl`` (``.jsonl``, ``.ndjson``): one compact JSON object per row;
- ``json`` (``.json``): one document ``{"table", "columns", "rows": [...], "report"}``,
  one row per line, the scan report last;
- ``table``: an aligned text table (stdout's default). The first 1,000 rows are held back
  to size the columns (a small preview looks as it always did); when a later chunk needs
  wider columns, the widths grow and the header and rule are printed again before it, so
  every row stays aligned with the header above it and nothing waits for the last row;
- ``parquet`` (``.parquet``, ``.pq``) and ``arrow`` (``.arrow``, ``.feather``, ``.ipc``:
  the Arrow IPC file format, which Feather v2 is): the preview's own Arrow types; each
  field keeps its Fluss type in the field metadata key ``fluss.type`` and the schema
  carries ``fluss.table``. Binary formats need a file (``PATH``), not stdout.

A file is written under a temporary name in its own directory (``.NAME.*.partial``) and
renamed to ``NAME`` only once complete (flushed and fsynced), so an interrupted or failed
export never leaves a complete-looking file; an existing ``NAME`` is replaced only then,
and only when it is a regular file (a link, a device node or a FIFO is refused, as is a
missing directory: ``store.file_kinds``).
The file gets the usual permissions (0666 less the umask).

Errors: :class:`ExportFormatError` (unknown format or suffix, a binary format without a
file; exit code ``UNKNOWN``), :class:`ExportIOError` (missing or read-only directory, full
disk, any write failure; exit code ``IO_ERROR``, 74). Both are :class:`KonsoleError` with a
one-line message.

Test hook: with ``KONSOLE_EXPORT_TEST_PAUSE=<point>`` (``first-row``, ``mid`` or
``finish``), :func:`export_stream` writes ``konsole-export-pause <point>`` to stderr and
waits ``KONSOLE_EXPORT_TEST_PAUSE_S`` seconds (default 5) at that point, so that live tests
can deliver a signal exactly there.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, Final

from konsole.errors import ExitCode, KonsoleError

__all__ = [
    "BINARY_FORMATS",
    "FORMATS",
    "LIGHT_FORMATS",
    "SUFFIXES",
    "ExportFormatError",
    "ExportIOError",
    "Output",
    "io_error",
    "open_output",
    "resolve_format",
]

FORMATS: Final = ("table", "json", "jsonl", "csv", "parquet", "arrow")
BINARY_FORMATS: Final = frozenset({"parquet", "arrow"})
#: Formats written from light rows (no pyarrow), see konsole.export.plain.
LIGHT_FORMATS: Final = frozenset({"table", "json", "jsonl", "csv"})
SUFFIXES: Final[Mapping[str, str]] = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
}


class ExportFormatError(KonsoleError, ValueError):
    """A format or file suffix that cannot be written (refused before connecting)."""

    exit_code = ExitCode.UNKNOWN


class ExportIOError(KonsoleError, OSError):
    """The output could not be written; nothing is left under the final name."""

    exit_code = ExitCode.IO_ERROR


def resolve_format(fmt: str | None, path: Path | str | None) -> str:
    """The format to write: ``fmt`` if given, else the suffix of ``path``, else ``table``.

    A known suffix that contradicts ``fmt`` (``--format csv -o x.parquet``) is refused, as
    is an unknown suffix without ``fmt`` and a binary format without a file.
    """
    if fmt is not None and fmt not in FORMATS:
        raise ExportFormatError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    suffix = Path(path).suffix.lower() if path is not None else ""
    by_suffix = SUFFIXES.get(suffix)
    if fmt is None:
        if path is None:
            return "table"
        if by_suffix is None:
            known = ", ".join(sorted(SUFFIXES))
            raise ExportFormatError(
                f"cannot tell the format of {str(path)!r} from its suffix {suffix or '(none)'!r}"
                f" (known: {known}); give --format"
            )
        return by_suffix
    if by_suffix is not None and by_suffix != fmt:
        raise ExportFormatError(
            f"--format {fmt} contradicts the suffix of {str(path)!r} (a {by_suffix} suffix)"
        )
    if fmt in BINARY_FORMATS and path is None:
        raise ExportFormatError(f"{fmt} output needs a file: give --output PATH")
    return fmt


# =========================================================================== output


def io_error(path: Path | None, exc: OSError) -> ExportIOError:
    where = str(path) if path is not None else "stdout"
    reason = exc.strerror or str(exc) or type(exc).__name__
    err = ExportIOError(f"cannot write {where}: {reason}")
    err.errno = exc.errno
    return err


class Output:
    """Where an export goes: stdout, or a file written under a temporary name.

    ``sink`` is a binary file object (the writers flush it after every chunk, so stdout
    shows rows as they come). :meth:`commit` makes a file final; :meth:`discard` (or
    leaving :func:`open_output` with an exception) removes the temporary file.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.temp: Path | None = None
        self.committed = False
        self._file: BinaryIO | None = None
        if path is None:
            self.sink: BinaryIO = sys.stdout.buffer
            return
        directory = path.parent if str(path.parent) else Path(".")
        # Only a regular file is replaced: a rename onto a link or a device node would
        # destroy it, and a missing directory is not made (store.file_kinds).
        from store.file_kinds import output_refusal  # here: the CLI starts without store

        if (why := output_refusal(path)) is not None:
            raise ExportIOError(f"cannot write {path}: {why}")
        try:
            fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=directory)
        except OSError as exc:
            raise io_error(path, exc) from None
        self.temp = Path(name)
        self._file = os.fdopen(fd, "wb", buffering=1024 * 1024)
        self.sink = self._file

    @property
    def is_file(self) -> bool:
        return self.path is not None

    def commit(self) -> None:
        """Flush, fsync and rename the temporary file to its final name."""
        if self.path is None:
            try:
                self.sink.flush()
            except OSError as exc:
                raise io_error(None, exc) from None
            self.committed = True
            return
        assert self._file is not None and self.temp is not None
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.chmod(self.temp, 0o666 & ~_umask())
            os.replace(self.temp, self.path)
        except OSError as exc:
            raise io_error(self.path, exc) from None
        self.committed = True
        self.temp = None

    def discard(self) -> None:
        """Remove the temporary file (nothing is renamed); safe to call twice."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
        if self.temp is not None:
            with contextlib.suppress(FileNotFoundError):
                self.temp.unlink()
            self.temp = None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def open_output(path: Path | str | None) -> Iterator[Output]:
    """An :class:`Output` for ``path`` (None: stdout); uncommitted, it is discarded."""
    out = Output(Path(path) if path is not None else None)
    try:
        yield out
    finally:
        if not out.committed:
            out.discard()

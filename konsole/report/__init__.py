"""Incident reports: a window of the history as a shareable document with plots.

:func:`write_report` reads the window from a :class:`store.HistoryReader` (read-only,
:mod:`konsole.report.data`), draws the plots with matplotlib (:mod:`konsole.report.plots`,
imported only here: start-up never pays for it) and writes one self-contained HTML file
or a Markdown file with its plots beside it (:mod:`konsole.report.documents`). A window
with no poll gives a report that says so.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from konsole.errors import ExitCode, KonsoleError
from konsole.model.timefmt import file_stamp_text, iso_seconds_text
from store.file_kinds import output_refusal

if TYPE_CHECKING:
    from store import HistoryReader

__all__ = [
    "DEFAULT_WINDOW_S",
    "FORMATS",
    "ReportError",
    "Written",
    "report_command",
    "write_report",
]

#: ``--window``: the span around ``--around`` (half before, half after).
DEFAULT_WINDOW_S: Final = 30 * 60.0
FORMATS: Final = ("html", "md")


class ReportError(KonsoleError):
    """The report could not be written (the message says where and why)."""

    exit_code = ExitCode.IO_ERROR


@dataclass(frozen=True, slots=True)
class Written:
    path: Path
    #: What the window holds, in a line or two (the CLI prints it).
    summary: tuple[str, ...]
    empty: bool


def write_report(
    reader: HistoryReader,
    out: Path,
    *,
    since_ms: int,
    until_ms: int,
    around_ms: int | None = None,
    fmt: Literal["html", "md"] = "html",
) -> Written:
    from konsole.report.data import gather
    from konsole.report.documents import html_document, markdown_document, summary_lines
    from konsole.report.plots import draw_all

    # Refused before any work: only a regular file is replaced (never a link or a device
    # node), and a missing directory is the caller's mistake, not made here.
    if (why := output_refusal(out)) is not None:
        raise ReportError(f"{out}: cannot write the report: {why}")
    data = gather(reader, since_ms, until_ms, around_ms)
    plots = [] if data.empty else draw_all(data)
    try:
        text = html_document(data, plots) if fmt == "html" else markdown_document(data, plots, out)
        _write_beside(out, text)
    except OSError as exc:
        raise ReportError(f"{out}: cannot write the report: {exc.strerror or exc}") from None
    return Written(out, tuple(summary_lines(data)), data.empty)


def _write_beside(out: Path, text: str) -> None:
    """``text`` into a new file of its own beside ``out`` (never an existing name, which
    could be a link), then renamed onto ``out``: a reader never sees half a report."""
    fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(name, 0o644)
        os.replace(name, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


def report_command(at: float, history: Path) -> str:
    """The command that writes the report of the moment ``at`` from ``history`` (what
    ``check --record`` and ``watch`` print)."""
    out = f"konsole-report-{file_stamp_text(at)}.html"
    return shlex.join(
        [
            "konsole",
            "history",
            "report",
            "--history",
            str(history),
            "--around",
            iso_seconds_text(at),
            "-o",
            out,
        ]
    )

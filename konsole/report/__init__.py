"""Incident reports: a window of the history as a shareable document with plots.

:func:`write_report` reads the window from a :class:`store.HistoryReader` (read-only,
:mod:`konsole.report.data`), draws the plots with matplotlib (:mod:`konsole.report.plots`,
imported only here: start-up never pays for it) and writes one self-contained HTML file
or a Markdown file with its plots beside it (:mod:`konsole.report.documents`). A window
with no poll gives a report that says so.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from konsole.errors import ExitCode, KonsoleError
from konsole.model.timefmt import file_stamp_text, iso_seconds_text

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

    data = gather(reader, since_ms, until_ms, around_ms)
    plots = [] if data.empty else draw_all(data)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        text = html_document(data, plots) if fmt == "html" else markdown_document(data, plots, out)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)  # a reader never sees half a report
    except OSError as exc:
        raise ReportError(f"{out}: cannot write the report: {exc.strerror or exc}") from None
    return Written(out, tuple(summary_lines(data)), data.empty)


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

"""The report as a document: one self-contained HTML file, or Markdown with plot files.

The HTML needs no network and runs no script: the plots are inline SVG, the style is in
the file. The Markdown variant writes each plot as ``<stem>.plots/<name>.svg`` beside the
document and links it. Both hold the same sections: the window, a summary, the plots, the
events (numbered as on the plots), the operator notes and the servers' log excerpts
(warnings and errors marked). Every text from the history is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from konsole.model.logs import parse_line
from konsole.model.timefmt import day_time_text, time_of_day_text
from konsole.report.data import ReportData
from konsole.report.plots import Plot
from store.rows import LogExcerptRow

__all__ = ["html_document", "markdown_document", "summary_lines"]

_STYLE: Final = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.9em; } td, th { padding: 2px 8px;
  border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
.critical { color: #d62728; font-weight: bold; } .warning { color: #c45f00; }
pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; font-size: 0.8em; }
pre .flag { background: #fff0c0; } pre .error { background: #ffd6d6; }
.empty { font-size: 1.1em; padding: 1em; background: #fff7e0; }
figure { margin: 1em 0; } figcaption { font-weight: bold; }
"""


def _window(data: ReportData) -> str:
    return f"{day_time_text(data.since)} to {day_time_text(data.until)}"


def _clock(at_ms: int) -> str:
    return time_of_day_text(at_ms / 1000)


def summary_lines(data: ReportData) -> list[str]:
    """A few lines saying what the window holds (also what the CLI prints)."""
    if data.empty:
        return [
            f"No history in this window ({_window(data)}): "
            "no poll was recorded then, so there is nothing to plot."
        ]
    failed = sum(1 for _, ok in data.polls if not ok)
    severe = sum(1 for e in data.events if e.severity in ("warning", "critical"))
    out = [
        f"{len(data.polls)} polls ({failed} failed), {len(data.events)} events "
        f"({severe} warning or critical), {len(data.notes)} notes, "
        f"{len(data.excerpts)} log excerpts.",
    ]
    if data.other_tables:
        out.append(f"Tables not drawn (quieter): {', '.join(data.other_tables)}.")
    return out


def _excerpt_html(row: LogExcerptRow) -> str:
    head = (
        f"<h3>{html.escape(row.subject)} · {html.escape(row.kind)} at {_clock(row.at_ms)}</h3>"
        f"<p>{_clock(row.from_ms)} to {_clock(row.to_ms)} from <code>"
        f"{html.escape(row.source)}</code></p>"
    )
    if row.error:
        return head + f'<p class="warning">log not read: {html.escape(row.error)}</p>'
    if not row.lines:
        return head + "<p>no log line in this window</p>"
    lines = []
    for raw in row.lines:
        level = parse_line(raw).level
        cls = {"WARN": "flag", "ERROR": "error", "FATAL": "error"}.get(level or "", "")
        text = html.escape(raw)
        lines.append(f'<span class="{cls}">{text}</span>' if cls else text)
    return head + "<pre>" + "\n".join(lines) + "</pre>"


def html_document(data: ReportData, plots: Sequence[Plot]) -> str:
    title = f"konsole incident report · {_window(data)}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>History: <code>{html.escape(data.source)}</code>"
        + (
            f"; the moment asked about: {day_time_text(data.around)}"
            if data.around is not None
            else ""
        )
        + "</p>",
    ]
    cls = ' class="empty"' if data.empty else ""
    parts += [f"<p{cls}>{html.escape(line)}</p>" for line in summary_lines(data)]
    for plot in plots:
        parts.append(
            f'<figure id="{plot.name}"><figcaption>{html.escape(plot.title)}</figcaption>'
            f"{plot.svg}</figure>"
        )
    parts.append("<h2>Events</h2>")
    if data.events:
        parts.append("<table><tr><th>#</th><th>time</th><th>severity</th><th>kind</th>")
        parts.append("<th>subject</th><th>message</th></tr>")
        for number, e in enumerate(data.events, start=1):
            parts.append(
                f'<tr class="{html.escape(e.severity)}"><td>{number}</td><td>{_clock(e.at_ms)}'
                f"</td><td>{html.escape(e.severity)}</td><td>{html.escape(e.kind)}</td>"
                f"<td>{html.escape(e.subject)}</td><td>{html.escape(e.message)}</td></tr>"
            )
        parts.append("</table>")
    else:
        parts.append("<p>No event in this window.</p>")
    parts.append("<h2>Operator notes</h2>")
    parts.append(
        "<ul>"
        + "".join(
            f"<li>{_clock(n.at_ms)} {html.escape(n.subject)}: {html.escape(n.text)}</li>"
            for n in data.notes
        )
        + "</ul>"
        if data.notes
        else "<p>No note in this window.</p>"
    )
    parts.append("<h2>Log excerpts</h2>")
    if data.excerpts:
        parts += [_excerpt_html(row) for row in data.excerpts]
    else:
        parts.append("<p>No log excerpt was recorded in this window.</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def markdown_document(data: ReportData, plots: Sequence[Plot], out: Path) -> str:
    """The Markdown text; writes each plot as an SVG file under ``<out stem>.plots/``."""
    folder = out.with_name(out.stem + ".plots")
    if plots:
        folder.mkdir(parents=True, exist_ok=True)
    lines = [f"# konsole incident report: {_window(data)}", ""]
    lines += [f"History: `{data.source}`", ""]
    lines += [*summary_lines(data), ""]
    for plot in plots:
        (folder / f"{plot.name}.svg").write_text(plot.svg, encoding="utf-8")
        lines += [f"## {plot.title}", "", f"![{plot.title}]({folder.name}/{plot.name}.svg)", ""]
    lines += ["## Events", ""]
    if data.events:
        lines += ["| # | time | severity | kind | subject | message |", "|---|---|---|---|---|---|"]
        for number, e in enumerate(data.events, start=1):
            cells = (e.severity, e.kind, e.subject, e.message)
            lines.append(
                f"| {number} | {_clock(e.at_ms)} | "
                + " | ".join(c.replace("|", "\\|") for c in cells)
                + " |"
            )
    else:
        lines.append("No event in this window.")
    lines += ["", "## Operator notes", ""]
    lines += [f"- {_clock(n.at_ms)} {n.subject}: {n.text}" for n in data.notes] or [
        "No note in this window."
    ]
    lines += ["", "## Log excerpts", ""]
    for row in data.excerpts:
        lines += [f"### {row.subject} · {row.kind} at {_clock(row.at_ms)}", ""]
        lines += [f"{_clock(row.from_ms)} to {_clock(row.to_ms)} from `{row.source}`", ""]
        if row.error:
            lines += [f"log not read: {row.error}", ""]
            continue
        fence = "~~~~" if any("```" in line for line in row.lines) else "```"
        lines += [fence, *row.lines, fence, ""]
    if not data.excerpts:
        lines.append("No log excerpt was recorded in this window.")
    return "\n".join(lines) + "\n"

"""The report's plots, drawn by matplotlib with the Agg backend into SVG text.

matplotlib is imported here, when a report is written, never at start-up (it costs about
half a second): ``konsole check`` and the console do not load it. Every plot shares the
window's time axis (UTC) and marks each event with a vertical line coloured by severity
and numbered as in the report's event table, so a dip lines up with what caused it.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Sequence
from datetime import UTC
from typing import TYPE_CHECKING, Any, Final

from konsole.report.data import ReportData, Series

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["Plot", "draw_all"]

SEVERITY_COLOURS: Final = {"critical": "#d62728", "warning": "#ff7f0e", "info": "#7f7f7f"}
HEALTH_COLOURS: Final = {"GREEN": "#2ca02c", "YELLOW": "#e6c229", "RED": "#d62728"}
UNKNOWN_COLOUR: Final = "#bbbbbb"
WIDTH_IN: Final = 10.0


class Plot:
    """One figure: its title, its SVG text, and a file name for the Markdown variant."""

    __slots__ = ("name", "svg", "title")

    def __init__(self, name: str, title: str, svg: str) -> None:
        self.name, self.title, self.svg = name, title, svg


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # no display, no GUI toolkit: files only
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "svg.hashsalt": "konsole"})
    return plt


def _dt(at: float) -> float:
    """matplotlib's date number (days since its default epoch, 1970-01-01 UTC)."""
    return at / 86400.0


def _figure(plt: Any, name: str, rows: int = 1) -> tuple[Figure, list[Axes]]:
    fig, axes = plt.subplots(rows, 1, figsize=(WIDTH_IN, 2.2 * rows), sharex=True, squeeze=False)
    for i, (ax,) in enumerate(axes):
        ax.set_gid(f"{name}-{i}")
    return fig, [a for (a,) in axes]


def _frame(ax: Axes, data: ReportData, *, label_events: bool) -> None:
    import matplotlib.dates as mdates

    lo, hi = data.shown
    ax.set_xlim(_dt(lo), _dt(hi))
    shape = "%H:%M:%S" if hi - lo <= 86400 else "%m-%d %H:%M"
    ax.xaxis.set_major_formatter(mdates.DateFormatter(shape, tz=UTC))
    ax.grid(True, alpha=0.3)
    for number, event in enumerate(data.events, start=1):
        at = _dt(event.at_ms / 1000)
        colour = SEVERITY_COLOURS.get(event.severity, SEVERITY_COLOURS["info"])
        # The id lets a reader (and the tests) find event N's line in the SVG.
        gid = f"{ax.get_gid() or 'plot'}-event-{number}-{event.kind}"
        ax.axvline(at, color=colour, linewidth=1, linestyle="--", alpha=0.8, gid=gid)
        if label_events:
            ax.annotate(
                str(number),
                (at, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(2, -10),
                textcoords="offset points",
                color=colour,
                fontsize=8,
            )
    if data.around is not None:
        ax.axvline(_dt(data.around), color="#1f77b4", linewidth=1.5, alpha=0.6)


def _lines(ax: Axes, series: Sequence[Series], ylabel: str) -> None:
    if not series:
        ax.text(0.5, 0.5, "not recorded", transform=ax.transAxes, ha="center", color="#888888")
    for s in series:
        xs, ys = _gapped(s.points)
        ax.plot(xs, ys, label=s.label, linewidth=1.2)
    ax.set_ylabel(ylabel)
    if series:
        ax.legend(loc="upper left", fontsize=7, ncol=min(4, len(series)), framealpha=0.7)


def _gapped(points: Sequence[tuple[float, float | None]]) -> tuple[list[float], list[float]]:
    """x and y with a break (NaN) where a value is unknown or polls are missing (a server
    that was down has no points: a line across its absence would invent values)."""
    steps = sorted(b[0] - a[0] for a, b in itertools.pairwise(points))
    gap = 3 * steps[len(steps) // 2] if steps else float("inf")
    xs: list[float] = []
    ys: list[float] = []
    for i, (at, value) in enumerate(points):
        if i and at - points[i - 1][0] > gap:
            xs.append(_dt(at))
            ys.append(float("nan"))
        xs.append(_dt(at))
        ys.append(float("nan") if value is None else value)
    return xs, ys


def _svg(plt: Any, fig: Figure) -> str:
    fig.tight_layout()
    out = io.StringIO()
    # No metadata block: no date (two reports of one window are the same bytes), no links.
    fig.savefig(out, format="svg", metadata=dict.fromkeys(("Date", "Creator", "Format", "Type")))
    plt.close(fig)
    text = out.getvalue()
    return text[text.index("<svg") :]  # inline: no XML prolog or doctype


def _health(plt: Any, data: ReportData) -> Plot:
    fig, (ax,) = _figure(plt, "health")
    fig.set_figheight(1.6)
    changes = list(data.health)
    lo, hi = data.shown
    # Before the first poll nothing is known; the status holds until the next change.
    starts = [lo] + [max(t, data.polls[0][0]) for t, _ in changes]
    statuses = ["UNKNOWN"] + [s for _, s in changes]
    ends = [*starts[1:], hi]
    for start, end, status in zip(starts, ends, statuses, strict=True):
        if end > start:
            colour = HEALTH_COLOURS.get(status, UNKNOWN_COLOUR)
            ax.axvspan(_dt(start), _dt(end), color=colour, alpha=0.5, label=status)
    failed = [_dt(t) for t, ok in data.polls if not ok]
    ax.plot(failed, [0.5] * len(failed), "x", color="#d62728", label="failed poll")
    ax.set_yticks([])
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    ax.legend(unique.values(), unique.keys(), loc="upper left", fontsize=7, ncol=5)
    _frame(ax, data, label_events=True)
    return Plot("health", "Health and polls", _svg(plt, fig))


def _throughput(plt: Any, data: ReportData) -> Plot:
    fig, (ax,) = _figure(plt, "throughput")
    _lines(ax, data.throughput, "rows/s")
    ax.set_ylim(bottom=0)  # a dip reads against zero, not against the quietest poll
    _frame(ax, data, label_events=True)
    return Plot("throughput", "Throughput per table (rows/s)", _svg(plt, fig))


def _servers(
    plt: Any, data: ReportData, name: str, title: str, panels: Sequence[tuple[str, str]]
) -> Plot:
    fig, axes = _figure(plt, name, len(panels))
    for ax, (metric, label) in zip(axes, panels, strict=True):
        _lines(ax, data.servers.get(metric, ()), label)
        _frame(ax, data, label_events=ax is axes[0])
    return Plot(name, title, _svg(plt, fig))


def draw_all(data: ReportData) -> list[Plot]:
    """Every plot of the report, in its order."""
    plt = _pyplot()
    return [
        _health(plt, data),
        _throughput(plt, data),
        _servers(
            plt,
            data,
            "placement",
            "Leaders and replicas per server",
            (("leader_count", "leaders"), ("replica_count", "replicas")),
        ),
        _servers(
            plt,
            data,
            "disk",
            "Disk usage and write lock",
            (("disk_usage_ratio", "disk used"), ("disk_write_locked", "write locked")),
        ),
        _servers(plt, data, "kv", "KV pressure", (("kv_rejections", "KV rejections/s"),)),
    ]

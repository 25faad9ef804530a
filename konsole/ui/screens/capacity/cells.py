"""The Capacity screen's rows and texts: a row per tablet server (its own ``diskUsageRatio``)
and per data dir, a row of requests per server, and the words that say where a figure
comes from. Every figure is :mod:`konsole.model.headroom`'s or :mod:`konsole.model.requests`'s
(the same ``konsole capacity`` prints); this module only lays them out. Unknown is ``-``
in a cell and ``unknown`` in the state column, never 0 and never a quiet "ok".
"""

from __future__ import annotations

from typing import Final

from rich.text import Text

from konsole.model.forecast import Forecast
from konsole.model.headroom import Headroom, ServerHeadroom, headroom_level, lock_outlook
from konsole.model.requests import WRITE_REQUESTS, ServerRequests
from konsole.model.thresholds import HealthThresholds
from konsole.model.timefmt import age_text
from konsole.render.sizes import bytes_text
from konsole.ui.widgets.grid_cells import Cell, Right

__all__ = [
    "HEADROOM_COLUMNS",
    "REQUEST_COLUMNS",
    "eta_text",
    "figure_cells",
    "headroom_rows",
    "pct",
    "request_cells",
    "room_cell",
    "server_lines",
    "state_cell",
]

HEADROOM_COLUMNS: Final = (
    ("server", "ts", True),
    ("disk", "disk", False),
    ("free", "free", True),
    ("usage", "usage", True),
    ("limit", "lock at", True),
    ("recover", "recover", True),
    ("room", "room", True),
    ("to_lock", "to lock", True),
    ("state", "state", False),
)
REQUEST_COLUMNS: Final = (
    ("server", "ts", True),
    ("rate", "req/s", True),
    ("errors", "errors/s", True),
    ("failing", "failing", False),
    ("write_p99", "write p99", True),
    ("slowest", "slowest p99", False),
    ("queue", "queue", True),
    ("kv_pressure", "kv press", True),
    ("kv_rejections", "kv rej", True),
)
_SERVER_DISK: Final = "(server)"


def pct(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value * 100:.{digits}f}%"


def _num(value: float | None, fmt: str = "g") -> str:
    return "-" if value is None else format(value, fmt)


def eta_text(f: Forecast | None, now: float) -> str:
    """``40m00s`` (confident), ``~3h10m?`` (rising, interval includes flat), ``-``."""
    eta = None if f is None else f.eta_from(now)
    if eta is None:
        return "-"
    assert f is not None
    return age_text(round(eta)) if f.confident else f"~{age_text(round(eta))}?"


def state_cell(
    server: ServerHeadroom, figure: Headroom, rules: HealthThresholds, now: float, stale: bool
) -> Text:
    """What this figure means now, worst first: locked, lock soon, little room, ok."""

    def styled(text: str, style: str) -> Text:
        return Text(text, style="" if stale else style)

    if figure.used_ratio is None or figure.limit_ratio is None:
        return styled("unknown", "dim")
    if server.locked and figure.dir is None:
        return styled("LOCKED", "bold red")
    if figure.headroom_ratio is not None and figure.headroom_ratio <= 0:
        return styled("AT LIMIT", "bold red")
    f = figure.forecast
    eta = None if f is None or not f.confident or server.locked is not False else f.eta_from(now)
    if eta is not None and eta <= rules.write_lock_warn_s:
        critical = eta <= rules.write_lock_critical_s
        return styled(f"lock in {age_text(round(eta))}", "bold red" if critical else "bold yellow")
    room = figure.headroom_ratio
    if room is not None and room < rules.disk_headroom_critical:
        return styled("LOW ROOM", "bold red")
    if room is not None and room < rules.disk_headroom_warn:
        return styled("low room", "bold yellow")
    return Text("ok")


def figure_cells(
    server: ServerHeadroom, figure: Headroom, rules: HealthThresholds, now: float, stale: bool
) -> list[Cell]:
    own = figure.dir is None
    return [
        Right(server.server_id if own else ""),
        _SERVER_DISK if own else figure.dir or "",
        Right(bytes_text(figure.free_bytes)),
        Right(pct(figure.used_ratio)),
        Right(pct(figure.limit_ratio, 0)),
        Right(pct(figure.recover_ratio, 0)),
        Right(pct(figure.headroom_ratio)),
        Right(eta_text(figure.forecast, now)),
        state_cell(server, figure, rules, now, stale),
    ]


def headroom_rows(
    servers: tuple[ServerHeadroom, ...], rules: HealthThresholds, now: float, stale: bool
) -> list[tuple[str, list[Cell]]]:
    """(key, cells): ``s:ID`` for a server's own figure, ``d:ID:PATH`` for each data dir."""
    rows = []
    for s in servers:
        rows.append((f"s:{s.server_id}", figure_cells(s, s.disk, rules, now, stale)))
        for d in s.dirs:
            rows.append((f"d:{s.server_id}:{d.dir}", figure_cells(s, d, rules, now, stale)))
    return rows


def _pressure(value: float | None, rules: HealthThresholds, stale: bool) -> Text:
    high = value is not None and value >= rules.kv_pressure_warn and not stale
    return Text(_num(value, ".2f"), style="bold yellow" if high else "", justify="right")


def request_cells(
    r: ServerRequests | None, server: ServerHeadroom, rules: HealthThresholds, stale: bool
) -> list[Cell]:
    """A server's requests beside what refuses its writes (``r`` None: not scraped)."""
    if r is None:
        figures: tuple = ()
        rate = errors = write_p99 = None
        queue = None
    else:
        figures = r.requests
        rates = [f.ok_per_s for f in figures if f.ok_per_s is not None]
        errs = [f.errors_per_s for f in figures if f.errors_per_s is not None]
        rate = sum(rates) if rates else None
        errors = sum(errs) if errs else None
        writes = [f.p99_ms for f in figures if f.request in WRITE_REQUESTS and f.p99_ms is not None]
        write_p99 = max(writes) if writes else None
        queue = r.queue_size
    failing: Cell = "-" if r is None else ""
    if r is not None and r.failing:
        more = f" +{len(r.failing) - 1}" if len(r.failing) > 1 else ""
        failing = Text(r.failing[0].request + more, style="" if stale else "bold red")
    slowest = None if r is None else r.slowest
    slow = "-" if slowest is None else f"{slowest.request} {slowest.p99_ms:.1f} ms"
    return [
        Right(server.server_id),
        Right(_num(rate, ".1f")),
        Right(_num(errors, ".1f")),
        failing,
        Right("-" if write_p99 is None else f"{write_p99:.1f} ms"),
        slow,
        Right(_num(queue)),
        _pressure(server.kv_pressure_max, rules, stale),
        Right(_num(server.kv_rejections, ".0f")),
    ]


def _forecast_line(figure: Headroom, now: float) -> str:
    f = figure.forecast
    name = figure.dir or "(server)"
    if f is None:
        return f"{name}: no forecast"
    if f.eta_s is None:
        return f"{name}: no forecast: {f.why or 'unknown'}"
    soon, late = f.eta_soonest_s, f.eta_latest_s
    interval = ""
    if soon is not None or late is not None:
        interval = (
            f" [{age_text(round(soon)) if soon is not None else '-'}-"
            f"{age_text(round(late)) if late is not None else 'never'}]"
        )
    sure = "" if f.confident else ", not confident"
    span = f", {f.points} samples over {age_text(round(f.span_s))}" if f.points else ""
    return f"{name}: lock in {age_text(round(f.eta_from(now) or 0.0))}{interval}{span}{sure}"


def server_lines(server: ServerHeadroom, r: ServerRequests | None, now: float) -> Text:
    """The highlighted server's detail: limits and their sources, each figure's forecast,
    what drives the growth, why writes fail."""
    t = Text()
    t.append(f"{server.subject}: ", style="bold")
    limits = server.limits
    if limits is None:
        t.append(f"write limits unknown: {server.limits_why or 'not read'}", style="dim")
    else:
        check = (
            ""
            if limits.check_interval_s is None
            else f", checked every {limits.check_interval_s:g}s"
        )
        t.append(
            f"locks at {pct(limits.limit_ratio, 0)} ({limits.limit_source.value}), "
            f"recovers at {pct(limits.recover_ratio, 0)} ({limits.recover_source.value}){check}"
        )
    why = server.disk.why
    if why:
        t.append(f"\n  usage unknown: {why}", style="dim")
    for figure in server.figures:
        if figure.forecast is not None or (figure.dir is None and limits is not None):
            t.append(f"\n  {_forecast_line(figure, now)}")
        elif figure.why and figure.dir is not None:
            t.append(f"\n  {figure.dir}: {figure.why}", style="dim")
    if server.drivers:
        drivers = ", ".join(f"{d.table} {d.rows_per_s:.1f} rows/s" for d in server.drivers)
        t.append(f"\n  growth: {drivers}")
    if server.drivers and server.bytes_in_per_s is not None:
        t.append(f"; takes in {bytes_text(server.bytes_in_per_s)}/s")
    reason = None if r is None else r.why_writes_fail()
    if reason:
        t.append(f"\n  why writes fail: {reason}", style="bold red")
    return t


def level_of(server: ServerHeadroom, rules: HealthThresholds, now: float) -> int:
    """The worst of the server's headroom and lock-forecast levels (2 when locked)."""
    if server.locked:
        return 2
    return max(headroom_level(server, rules)[0], lock_outlook(server, rules, now).level)


def room_cell(
    server: ServerHeadroom | None, rules: HealthThresholds, now: float, stale: bool
) -> Text:
    """The Servers screen's capacity column: the least room of the server and its data dirs,
    and the forecast lock when it is within the profile's warning time; ``-`` unknown."""
    tight = None if server is None else server.tightest
    if server is None or tight is None or tight.headroom_ratio is None:
        return Text("-", justify="right")
    text = pct(tight.headroom_ratio, 0)
    outlook = lock_outlook(server, rules, now)
    if outlook.level and outlook.eta_s is not None:
        text += f" in {age_text(round(outlook.eta_s))}"
    level = level_of(server, rules, now)
    style = {0: "", 1: "bold yellow", 2: "bold red"}[level]
    return Text(text, style="" if stale else style, justify="right")

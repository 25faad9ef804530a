"""A snapshot's capacity part to and from the history's metric rows.

The part rides on each tablet server's metric row (``tablet-server N``) as extra names, so
no schema change is needed and a konsole that does not know them reads the row as before
(it keeps the ``ServerMetrics`` fields it knows and ignores the rest):

- ``write_limit_ratio``, ``write_recover_ratio``, ``write_limit_source`` and
  ``write_recover_source`` (0 dynamic, 1 initial, 2 default), ``check_interval_s``;
- the server's forecast, ETAs counted from the poll: ``lock_eta_s``, ``lock_eta_soonest_s``,
  ``lock_eta_latest_s``, ``lock_confident`` (1/0), ``lock_points``, ``lock_span_s``,
  ``forecast_window_s`` (a forecast without an ETA keeps its points and span alone);
- per visible data dir ``PATH``: ``dir_total_bytes@PATH``, ``dir_free_bytes@PATH``,
  ``dir_used_ratio@PATH`` (the series the forecast fits, read back to seed it), and its
  forecast's ``dir_lock_eta_s@PATH``, ``dir_lock_confident@PATH``.

A dir konsole could not see, and why, is not kept: it reads unknown when the history is
read back. Numbers only: the store keeps float32, so bytes read back to 7 significant
digits (a terabyte to within ~100 KB), ratios to within 1e-7.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from konsole.model.capacity import (
    CapacityPart,
    ConfigSource,
    DirUsage,
    ServerCapacity,
    WriteLimits,
)
from konsole.model.forecast import Forecast

if TYPE_CHECKING:
    from konsole.collect.cluster.capacity import CapacityCollector

__all__ = [
    "DIR_USED",
    "capacity_from_values",
    "capacity_values",
    "dir_name",
    "seed_from_history",
]

DIR_USED: Final = "dir_used_ratio"
_SOURCE_CODE: Final = {
    ConfigSource.DYNAMIC: 0.0,
    ConfigSource.INITIAL: 1.0,
    ConfigSource.DEFAULT: 2.0,
}
_CODE_SOURCE: Final = {v: k for k, v in _SOURCE_CODE.items()}
_DIR_NAMES: Final = (
    "dir_total_bytes",
    "dir_free_bytes",
    DIR_USED,
    "dir_lock_eta_s",
    "dir_lock_confident",
)

Values = list[tuple[str, float]]


def dir_name(name: str, prefix: str) -> str | None:
    """The dir of ``prefix@PATH`` (None for another name)."""
    head, at, path = name.partition("@")
    return path if at and head == prefix and path else None


def _forecast_values(f: Forecast | None, at: float) -> Values:
    if f is None:
        return []
    out: Values = [("lock_points", float(f.points)), ("lock_span_s", f.span_s)]
    out.append(("forecast_window_s", f.window_s))
    if f.eta_s is not None:
        out.append(("lock_eta_s", f.eta_from(at) or 0.0))
        out.append(("lock_confident", 1.0 if f.confident else 0.0))
        if f.eta_soonest_s is not None:
            out.append(("lock_eta_soonest_s", max(0.0, f.eta_soonest_s - (at - f.at))))
        if f.eta_latest_s is not None:
            out.append(("lock_eta_latest_s", max(0.0, f.eta_latest_s - (at - f.at))))
    return out


def capacity_values(part: CapacityPart | None, at: float) -> dict[str, Values]:
    """tablet server id -> the names and values its metric row gains."""
    if part is None:
        return {}
    out: dict[str, Values] = {}
    for sid, s in part.servers.items():
        values: Values = []
        if s.limits is not None:
            values += [
                ("write_limit_ratio", s.limits.limit_ratio),
                ("write_recover_ratio", s.limits.recover_ratio),
                ("write_limit_source", _SOURCE_CODE[s.limits.limit_source]),
                ("write_recover_source", _SOURCE_CODE[s.limits.recover_source]),
            ]
            if s.limits.check_interval_s is not None:
                values.append(("check_interval_s", s.limits.check_interval_s))
        values += _forecast_values(s.forecast, at)
        for d in s.dirs:
            if d.total_bytes is None or d.free_bytes is None:
                continue
            values += [
                (f"dir_total_bytes@{d.path}", float(d.total_bytes)),
                (f"dir_free_bytes@{d.path}", float(d.free_bytes)),
            ]
            if d.used_ratio is not None:
                values.append((f"{DIR_USED}@{d.path}", d.used_ratio))
            f = d.forecast
            if f is not None and f.eta_s is not None:
                values += [
                    (f"dir_lock_eta_s@{d.path}", f.eta_from(at) or 0.0),
                    (f"dir_lock_confident@{d.path}", 1.0 if f.confident else 0.0),
                ]
        if values:
            out[sid] = values
    return out


def _forecast(values: Mapping[str, float | None], level: float, at: float) -> Forecast | None:
    points = values.get("lock_points")
    if points is None:
        return None
    eta = values.get("lock_eta_s")
    return Forecast(
        level,
        None,
        at,
        values.get("forecast_window_s") or 0.0,
        eta_s=eta,
        eta_soonest_s=values.get("lock_eta_soonest_s"),
        eta_latest_s=values.get("lock_eta_latest_s"),
        points=int(points),
        span_s=values.get("lock_span_s") or 0.0,
        why=None if eta is not None else "not recorded",
        confident=bool(values.get("lock_confident")),
    )


def _dirs(values: Mapping[str, float | None], level: float | None, at: float) -> list[DirUsage]:
    paths = dict.fromkeys(p for name in values for p in [_any_dir(name)] if p)
    out = []
    for path in paths:
        total = values.get(f"dir_total_bytes@{path}")
        free = values.get(f"dir_free_bytes@{path}")
        eta = values.get(f"dir_lock_eta_s@{path}")
        forecast = None
        if eta is not None and level is not None:
            confident = bool(values.get(f"dir_lock_confident@{path}"))
            forecast = Forecast(level, None, at, 0.0, eta_s=eta, confident=confident)
        out.append(
            DirUsage(
                path,
                None if total is None else round(total),
                None if free is None else round(free),
                forecast=forecast,
            )
        )
    return out


def _source(code: float | None) -> ConfigSource:
    return _CODE_SOURCE.get(code if code is not None else 1.0, ConfigSource.INITIAL)


def _any_dir(name: str) -> str | None:
    return next((p for prefix in _DIR_NAMES if (p := dir_name(name, prefix))), None)


def capacity_from_values(
    rows: Iterable[tuple[str, Mapping[str, float | None]]], at: float
) -> CapacityPart | None:
    """The capacity part of a recorded poll from its tablet servers' rows ((server id,
    name -> value)); None when the poll recorded none (older files, no collector)."""
    servers: dict[str, ServerCapacity] = {}
    window = 0.0
    for sid, values in rows:
        limit, recover = values.get("write_limit_ratio"), values.get("write_recover_ratio")
        limits = None
        if limit is not None and recover is not None:
            limits = WriteLimits(
                limit,
                recover,
                _source(values.get("write_limit_source")),
                _source(values.get("write_recover_source")),
                values.get("check_interval_s"),
            )
        level = None if limits is None else limits.limit_ratio
        forecast = _forecast(values, level, at) if level is not None else None
        dirs = _dirs(values, level, at)
        if limits is None and forecast is None and not dirs:
            continue
        window = max(window, values.get("forecast_window_s") or 0.0)
        servers[sid] = ServerCapacity(
            sid,
            limits,
            None if limits else "not recorded",
            tuple(dirs),
            forecast,
        )
    if not servers:
        return None
    return CapacityPart(at, MappingProxyType(servers), window)


def seed_from_history(
    collector: CapacityCollector, reader: Any, now: float, window_s: float
) -> int:
    """Seeds ``collector`` with the last ``window_s`` of the recorded usage series of every
    tablet server (``disk_usage_ratio``) and visible data dir; returns the samples read."""
    since = round((now - window_s) * 1000)
    series: dict[tuple[str, str | None], list[tuple[float, float]]] = {}
    for subject, names in reader.metric_names().items():
        if not subject.startswith("tablet-server "):
            continue
        sid = subject.removeprefix("tablet-server ")
        wanted: list[tuple[str, str | None]] = [("disk_usage_ratio", None)]
        wanted += [(n, dir_name(n, DIR_USED)) for n in names if dir_name(n, DIR_USED)]
        for name, directory in wanted:
            points = reader.metric_series(subject, name, since=since)
            series[(sid, directory)] = [
                (p.at_ms / 1000, p.value) for p in points if p.value is not None
            ]
    collector.seed(series)
    return sum(len(v) for v in series.values())

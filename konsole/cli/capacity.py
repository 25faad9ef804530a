"""`konsole capacity`: how much room each tablet server and data dir has left before its
write lock, when the trend reaches it, and what slows down or fails meanwhile.

One bounded poll. The forecast fits the recorded trend: the cluster's history file (the one
``konsole record``, ``serve`` or the console keep; ``--history PATH`` for another) is read
for the forecast window's usage samples, and the history's last poll gives the growth
drivers' rates. Without a history the forecast says it needs one. Printed as text or JSON
(``konsole.model.capacity_report``). Exit 0 with an answer, 2 when the cluster did not
answer, 3 for bad arguments or configuration (docs/cli.md). ``konsole check`` is the command
that judges.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from konsole.cli.exits import fail
from konsole.cli.options import DOCUMENT_FORMATS, ConnectionArgs, cluster_options
from konsole.collect.profiles import Profile, ProfileError
from konsole.errors import ExitCode
from konsole.model.timefmt import age_text
from konsole.render.sizes import bytes_text

__all__ = ["capacity", "capacity_text"]


def _history(path: Path, collector: Any, now: float, window_s: float) -> tuple[int, Any]:
    """Seeds ``collector`` from the history at ``path``; (samples read, its last snapshot)."""
    from konsole.collect.history.capacity_rows import seed_from_history
    from konsole.collect.history.files import HistoryError, open_reader
    from konsole.collect.history.rows import snapshot_at

    try:
        with open_reader(path) as reader:
            n = seed_from_history(collector, reader, now, window_s)
            last = snapshot_at(reader, now)
    except HistoryError:
        return 0, None
    previous = last.snapshot if last is not None and last.snapshot.ok else None
    return n, previous


async def _look(profile: Profile, history: Path) -> tuple[dict[str, Any], str | None]:
    from konsole.collect.cluster.connect import assemble_poller
    from konsole.collect.cluster.poller import PollerConfig
    from konsole.model.capacity_report import capacity_dict
    from konsole.model.poll import judge_recorded

    live = assemble_poller(
        profile,
        PollerConfig.from_profile(profile),
        connect_timeout=profile.connect_timeout,
        request_timeout=profile.request_timeout,
        scrape_timeout=profile.metrics_timeout,
    )
    rules = profile.health
    try:
        samples, previous = (0, None)
        if live.capacity is not None:
            samples, previous = _history(
                history, live.capacity, time.time(), rules.forecast_window_s
            )
        snapshot = await live.poller.poll()
    finally:
        await live.aclose()
    if not snapshot.ok:
        return {}, snapshot.error or "no answer"
    # One look judged after the last good poll the history holds (growth needs two).
    judged = judge_recorded(snapshot, (), rules, last_ok=previous, previous_ok=None, facts=None)
    return capacity_dict(judged, rules, history_samples=samples), None


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _n(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _eta(row: dict[str, Any]) -> str:
    f = row.get("forecast")
    if f is None:
        return "-"
    if f["eta_s"] is None:
        return f["why"] or "-"
    latest = "never" if f["eta_latest_s"] is None else age_text(round(f["eta_latest_s"]))
    flag = "" if f["confident"] else " (not confident)"
    return (
        f"in {age_text(round(row['lock_eta_s']))} "
        f"[{age_text(round(f['eta_soonest_s'] or 0))}-{latest}]{flag}"
    )


def capacity_text(report: dict[str, Any]) -> str:
    """``capacity_dict``'s answer for a person: a line per server and per data dir, then
    what drives the growth and how requests fare."""
    fc = report["forecast"]
    lines = [
        f"forecast: {fc['method']} over the last {age_text(fc['window_s'])} "
        f"({fc['confidence']:.0%} interval; {fc['history_samples'] or 0} recorded samples read)",
        "",
        f"{'SERVER':<8} {'DIR':<28} {'USED':>7} {'LIMIT':>7} {'ROOM':>7} {'FREE':>10}  LOCK",
    ]
    for s in report["servers"]:
        limits = s["limits"]
        lock = {True: "LOCKED", False: "", None: "?"}[s["write_locked"]]
        for row in (s["disk"], *s["dirs"]):
            name = row["dir"] or "(server)"
            eta = _eta(row) if s["write_locked"] is False else lock
            if row["used_ratio"] is None:
                eta = row["why"] or "-"
            lines.append(
                f"{s['server']:<8} {name[-28:]:<28} {_ratio(row['used_ratio']):>7} "
                f"{_ratio(row['write_limit_ratio']):>7} {_ratio(row['headroom_ratio']):>7} "
                f"{bytes_text(row['free_bytes']):>10}  {eta}"
            )
        if limits is not None:
            lines.append(
                f"{'':<8} limits: lock at {limits['write_limit_ratio']:.0%} "
                f"({limits['write_limit_source']}), recover at "
                f"{limits['write_recover_ratio']:.0%} ({limits['write_recover_source']})"
            )
        elif s["limits_why"]:
            lines.append(f"{'':<8} limits unknown: {s['limits_why']}")
        if s["kv_pressure_max"] is not None or s["kv_rejections"] is not None:
            pressure = _n(s["kv_pressure_max"])
            lines.append(
                f"{'':<8} KV backpressure {pressure} ({s['kv_pressure_table'] or '-'}), "
                f"rejections {_n(s['kv_rejections'])}"
            )
        for d in s["drivers"]:
            lines.append(f"{'':<8} writes: {d['table']} {d['rows_per_s']:.1f} rows/s")
        req = s["requests"]
        if req is not None:
            failing = [r for r in req["requests"] if r["errors_per_s"]]
            for r in failing:
                lines.append(
                    f"{'':<8} {r['request']}: {r['errors_per_s']:g} failed/s, "
                    f"{r['ok_per_s'] or 0:g} ok/s"
                )
            if req["why_writes_fail"]:
                lines.append(f"{'':<8} why writes fail: {req['why_writes_fail']}")
    if report["findings"]:
        lines.append("")
    for f in report["findings"]:
        lines.append(f"{f['status']:<7} {f['subject']}: {f['reason']}")
    return "\n".join(lines)


@click.command("capacity")
@cluster_options(polls=True, history=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(DOCUMENT_FORMATS),
    default="text",
    show_default=True,
    help="text: a block per tablet server; json: one document.",
)
def capacity(cluster: ConnectionArgs, fmt: str) -> None:
    """Room left before each tablet server's write lock, and when the trend reaches it."""
    try:
        profile = cluster.resolve()
        report, error = asyncio.run(_look(profile, cluster.history_file(profile)))
    except ProfileError as exc:
        fail(exc, exc.exit_code)
    if error is not None:
        fail(error, ExitCode.CRITICAL)
    click.echo(json.dumps(report, indent=2) if fmt == "json" else capacity_text(report))
    sys.exit(ExitCode.OK)

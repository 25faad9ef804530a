"""`konsole record` (the headless recorder) and `konsole history ...` (reading it back).

``record`` polls one cluster and writes every poll and event into the history file: one
line per event on stdout, notices (not recording, recording again) on stderr; SIGINT and
SIGTERM stop it cleanly after the poll in hand. Exit codes: 0 after a clean stop, 1 when
the history is refused (another recorder holds it, a newer schema, a corrupt or foreign
file), 3 for bad configuration.

``history`` reads the same file (any number of readers while the recorder writes): times
are UTC; ``--since`` / ``--until`` / ``as-of`` take ISO 8601 (``2026-11-30T14:05``, a
missing zone is UTC), epoch seconds, ``now``, or an age such as ``90s``, ``15m``, ``2h``,
``3d``, ``1w`` (that long ago).
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import click

from konsole.cli.watch import (
    EXIT_CONFIG,
    _ConfigCommand,
    connection_options,
    event_line,
    run_until_signalled,
)
from konsole.collect.connect import build_poller, history_path_for, resolve
from konsole.collect.connect import history_path as profile_history
from konsole.collect.profiles import Profile, ProfileError
from konsole.model import timefmt

__all__ = ["history", "parse_duration", "parse_time", "record"]

EXIT_REFUSED: Final = 1
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE: Final = re.compile(r"^-?(\d+(?:\.\d+)?)([smhdw])$")


# =========================================================================== helpers


def parse_duration(text: str) -> float:
    """:func:`konsole.model.timefmt.parse_duration`, a bad value as click's usage error."""
    try:
        return timefmt.parse_duration(text)
    except timefmt.TimeParseError as exc:
        raise click.BadParameter(str(exc)) from None


def parse_time(text: str, now: float) -> float:
    """:func:`konsole.model.timefmt.parse_time`, a bad value as click's usage error."""
    try:
        return timefmt.parse_time(text, now)
    except timefmt.TimeParseError as exc:
        raise click.BadParameter(str(exc)) from None


def when(ms: int | float) -> str:
    return timefmt.iso_text(ms / 1000)


def _history_path(
    history: Path | None, profile: str | None, bootstrap: str | None, local: bool
) -> Path:
    try:
        return history_path_for(history, profile, bootstrap, local)
    except ProfileError as exc:
        raise click.BadParameter(str(exc)) from None


def _emit(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(list(rows), indent=2, default=str))
        return
    if fmt == "csv":
        import pyarrow as pa
        import pyarrow.csv as pacsv

        table = pa.Table.from_pylist(
            [{c: r.get(c) for c in columns} for r in rows] if rows else [],
            schema=None if rows else pa.schema([(c, pa.string()) for c in columns]),
        )
        sink = io.BytesIO()
        pacsv.write_csv(table, sink)
        click.echo(sink.getvalue().decode(), nl=False)
        return
    texts = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c), *(len(t[i]) for t in texts)]) for i, c in enumerate(columns)]
    click.echo("  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    for t in texts:
        click.echo("  ".join(v.ljust(w) for v, w in zip(t, widths, strict=True)).rstrip())


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _fail(command: str, message: str, code: int) -> None:
    click.echo(f"konsole {command}: {message}", err=True)
    sys.exit(code)


HISTORY_OPTION = click.option(
    "--history",
    "history_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="History file (default: one per profile in the user data dir).",
)


# =========================================================================== record


@click.command("record", cls=_ConfigCommand)
@connection_options
@HISTORY_OPTION
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=None,
    help="Seconds between polls (default: the profile's).",
)
@click.option("--keep-full", default="24h", show_default=True, help="Keep every poll this long.")
@click.option(
    "--keep-minute", default="7d", show_default=True, help="Then one per minute this long."
)
@click.option("--keep-hour", default="90d", show_default=True, help="Then one per hour this long.")
@click.option(
    "--keep-events", default="90d", show_default=True, help="Keep events and notes this long."
)
@click.option(
    "--count",
    "max_polls",
    type=click.IntRange(min=1),
    default=None,
    help="Stop after this many polls.",
)
@click.option("--verbose", is_flag=True, help="Also print a line per recorded poll.")
def record(
    profile: str | None,
    bootstrap: str | None,
    local: bool,
    run_dir: Path | None,
    config_path: Path | None,
    history_path: Path | None,
    interval: float | None,
    keep_full: str,
    keep_minute: str,
    keep_hour: str,
    keep_events: str,
    max_polls: int | None,
    verbose: bool,
) -> None:
    """Poll a cluster and record every poll and event into its history file."""
    from store import HistoryError, RetentionPolicy

    try:
        chosen = resolve(profile, bootstrap, local, run_dir, config_path)
        events_ms = round(parse_duration(keep_events) * 1000)
        policy = RetentionPolicy(
            full_ms=round(parse_duration(keep_full) * 1000),
            minute_ms=round(parse_duration(keep_minute) * 1000),
            hour_ms=round(parse_duration(keep_hour) * 1000),
            events_ms=events_ms,
            notes_ms=events_ms,
        )
    except (ProfileError, click.BadParameter, ValueError) as exc:
        _fail("record", str(exc), EXIT_CONFIG)
        return
    path = profile_history(chosen, history_path)
    try:
        asyncio.run(_record(chosen, path, policy, interval, max_polls, verbose))
    except ProfileError as exc:
        _fail("record", str(exc), EXIT_CONFIG)
    except HistoryError as exc:
        _fail("record", str(exc), EXIT_REFUSED)
    sys.exit(0)


async def _record(
    profile: Profile,
    path: Path,
    policy: Any,
    interval: float | None,
    max_polls: int | None,
    verbose: bool,
) -> None:
    from konsole.collect.recorder import Recorder
    from konsole.model.events import EventConfig

    def say(text: str) -> None:
        click.echo(f"{when(time.time() * 1000)} konsole record: {text}", err=True)

    def committed(snapshot: Any, poll_id: int) -> None:
        if verbose:
            state = "ok" if snapshot.ok else f"failed: {snapshot.error}"
            click.echo(
                f"{when(snapshot.taken_at * 1000)} poll {snapshot.seq} recorded as {poll_id} "
                f"({state})"
            )

    recorder = Recorder(
        path,
        policy=policy,
        config=EventConfig(rules=profile.health),
        say=say,
        on_event=lambda e: click.echo(event_line(e, "text")),
        on_commit=committed,
    )
    recorder.open()  # refusals raise here, before any poll
    say(f"recording {profile.name} ({','.join(profile.bootstrap)}) into {path}")
    poller, release = build_poller(profile, interval)

    async def run(stop: asyncio.Event) -> None:
        async for snapshot in poller.snapshots(stop):
            recorder.record(snapshot)
            if max_polls is not None and snapshot.seq >= max_polls:
                return

    try:
        # A signal in the middle of a poll: that poll is not recorded.
        await run_until_signalled(run)
    finally:
        await release()
        status = recorder.status
        recorder.close()
        say(f"stopped: {status.polls_recorded} poll(s) recorded, {status.polls_missed} not")


# =========================================================================== history


def _range_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--until", default=None, help="Up to this time (default: now).")(f)
    return click.option("--since", default=None, help="From this time (default: the start).")(f)


def _file_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = HISTORY_OPTION(f)
    f = click.option("--local", is_flag=True, help="The local cluster's history.")(f)
    f = click.option("--bootstrap", default=None, help="The history of this cluster address.")(f)
    return click.option("--profile", default=None, help="The history of this profile.")(f)


FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
)


def _reader(
    history_path: Path | None, profile: str | None, bootstrap: str | None, local: bool
) -> Any:
    from store import HistoryError, open_reader

    path = _history_path(history_path, profile, bootstrap, local)
    try:
        return open_reader(path)
    except HistoryError as exc:
        _fail("history", str(exc), EXIT_REFUSED)


def _window(since: str | None, until: str | None) -> tuple[int | None, int | None]:
    now = time.time()
    try:
        lo = round(parse_time(since, now) * 1000) if since else None
        hi = round(parse_time(until, now) * 1000) if until else None
    except click.BadParameter as exc:
        _fail("history", str(exc), EXIT_CONFIG)
        raise
    return lo, hi


@click.group("history")
def history() -> None:
    """Read the recorded history: events, series, the cluster as of a time, notes."""


@history.command("events")
@_file_options
@_range_options
@click.option("--kind", "kinds", multiple=True, help="Only this kind (repeatable).")
@click.option(
    "--severity", "severities", multiple=True, type=click.Choice(["info", "warning", "critical"])
)
@click.option(
    "--subject",
    default=None,
    help="A subject, its buckets and partitions (db.t, tablet-server 2; * globs).",
)
@click.option("--limit", type=click.IntRange(min=1), default=None)
@FORMAT_OPTION
def history_events(
    profile: str | None,
    bootstrap: str | None,
    local: bool,
    history_path: Path | None,
    since: str | None,
    until: str | None,
    kinds: tuple[str, ...],
    severities: tuple[str, ...],
    subject: str | None,
    limit: int | None,
    fmt: str,
) -> None:
    """Events in time order."""
    lo, hi = _window(since, until)
    with _reader(history_path, profile, bootstrap, local) as reader:
        rows = reader.events(
            lo, hi, kinds=kinds, severities=severities, subject=subject, limit=limit
        )
    _emit(
        [
            {
                "time": when(e.at_ms),
                "severity": e.severity,
                "kind": e.kind,
                "subject": e.subject,
                "message": e.message,
                **({"details": json.loads(e.details)} if fmt == "json" else {}),
            }
            for e in rows
        ],
        ["time", "severity", "kind", "subject", "message"] + (["details"] if fmt == "json" else []),
        fmt,
    )


@history.command("series")
@_file_options
@_range_options
@click.argument("target")
@click.option("--partition", default=None, help="One partition of a partitioned table (by name).")
@click.option("--bucket", type=click.IntRange(min=0), default=None, help="One bucket.")
@click.option(
    "--step", default=None, help="One point per step (e.g. 1m, 1h); default: every poll kept."
)
@click.option(
    "--metric",
    default=None,
    help="A server metric instead (TARGET is the server, e.g. 'tablet-server 1').",
)
@FORMAT_OPTION
def history_series(
    profile: str | None,
    bootstrap: str | None,
    local: bool,
    history_path: Path | None,
    since: str | None,
    until: str | None,
    target: str,
    partition: str | None,
    bucket: int | None,
    step: str | None,
    metric: str | None,
    fmt: str,
) -> None:
    """Rows/s of TARGET (db.table) from offset deltas, or a server metric with --metric."""
    lo, hi = _window(since, until)
    with _reader(history_path, profile, bootstrap, local) as reader:
        if metric is not None:
            points = reader.metric_series(target, metric, since=lo, until=hi)
            _emit([{"time": when(p.at_ms), metric: p.value} for p in points], ["time", metric], fmt)
            return
        database, dot, name = target.partition(".")
        if not dot:
            _fail("history series", f"{target!r} is not database.table", EXIT_CONFIG)
        spans = reader.tables_named(database, name, lo, hi)
        if not spans:
            _fail("history series", f"no table {target} recorded in that time", EXIT_REFUSED)
        step_ms = round(parse_duration(step) * 1000) if step else None
        out: list[dict[str, Any]] = []
        for span in spans:
            pid = None
            if partition is not None:
                pid = _partition_id(reader, span.table_id, partition)
                if pid is None:
                    continue
            args: dict[str, Any] = {
                "since": lo,
                "until": hi,
                "step_ms": step_ms,
                "all_partitions": partition is None,
            }
            totals = reader.offset_totals(span.table_id, pid, bucket, **args)
            from store.queries import rates

            rate = {p.at_ms: p.value for p in rates(totals)}
            out.extend(
                {
                    "time": when(p.at_ms),
                    "table_id": span.table_id,
                    "rows_per_s": rate.get(p.at_ms),
                    "offset": None if p.value is None else int(p.value),
                }
                for p in totals
            )
    _emit(out, ["time", "table_id", "rows_per_s", "offset"], fmt)


def _partition_id(reader: Any, table_id: int, name: str) -> int | None:
    rows = reader._query(
        "SELECT partition_id FROM partitions WHERE table_id = ? AND name = ? LIMIT 1",
        (table_id, name),
    )
    return rows[0][0] if rows else None


@history.command("as-of")
@_file_options
@click.argument("moment")
@click.option("--table", "only", default=None, help="Only this table (db.table).")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
def history_as_of(
    profile: str | None,
    bootstrap: str | None,
    local: bool,
    history_path: Path | None,
    moment: str,
    only: str | None,
    fmt: str,
) -> None:
    """The cluster as recorded at MOMENT: servers, tables, buckets (leader, replicas, offsets)."""
    from konsole.collect.history import snapshot_at

    try:
        at = parse_time(moment, time.time())
    except click.BadParameter as exc:
        _fail("history as-of", str(exc), EXIT_CONFIG)
        return
    with _reader(history_path, profile, bootstrap, local) as reader:
        recorded = snapshot_at(reader, at)
    if recorded is None:
        _fail("history as-of", f"nothing recorded at or before {when(at * 1000)}", EXIT_REFUSED)
        return
    snap = recorded.snapshot
    doc: dict[str, Any] = {
        "as_of": when(at * 1000),
        "poll_time": when(snap.taken_at * 1000),
        "historic": recorded.historic,
        "ok": snap.ok,
        "error": snap.error,
        "active_coordinator": snap.active_coordinator,
        "coordinators": [{"address": c.address, "role": str(c.role)} for c in snap.coordinators],
        "tablet_servers": [],
        "tables": [],
    }
    view = snap.view
    if view is not None:
        doc["tablet_servers"] = [
            {"id": s.node_id, "address": s.address} for s in view.tablet_servers
        ]
        for t in view.tables:
            if only and str(t.path) != only:
                continue
            doc["tables"].append(
                {
                    "table": str(t.path),
                    "table_id": t.table_id,
                    "buckets": [
                        {
                            "partition": b.partition_name,
                            "bucket": b.bucket_id,
                            "leader": b.leader_id,
                            "replicas": list(b.replica_ids),
                            "latest_offset": b.latest_offset,
                            "earliest_offset": b.earliest_offset,
                        }
                        for b in t.buckets
                    ],
                }
            )
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(f"as of {doc['as_of']} (recorded by the poll at {doc['poll_time']}, history)")
    if not snap.ok:
        click.echo(f"that poll failed: {snap.error}")
        return
    servers = ", ".join(f"{s['id']} {s['address']}" for s in doc["tablet_servers"]) or "none"
    click.echo(f"coordinator: {doc['active_coordinator'] or '-'}   tablet servers: {servers}")
    for t in doc["tables"]:
        total = sum(b["latest_offset"] or 0 for b in t["buckets"])
        click.echo(
            f"\n{t['table']} (id {t['table_id']}, {len(t['buckets'])} buckets, "
            f"{total} rows by offset)"
        )
        _emit(
            [{**b, "replicas": ",".join(map(str, b["replicas"]))} for b in t["buckets"]],
            ["partition", "bucket", "leader", "replicas", "latest_offset", "earliest_offset"],
            "table",
        )


@history.command("notes")
@_file_options
@_range_options
@click.option("--add", "text", default=None, help="Add a note with this text.")
@click.option("--subject", default=None, help="What the note is about (adding: default cluster).")
@click.option("--at", "at_text", default=None, help="When it happened (default: now).")
@FORMAT_OPTION
def history_notes(
    profile: str | None,
    bootstrap: str | None,
    local: bool,
    history_path: Path | None,
    since: str | None,
    until: str | None,
    text: str | None,
    subject: str | None,
    at_text: str | None,
    fmt: str,
) -> None:
    """Operator notes (free text with a time and a subject) for incident timelines."""
    from store import HistoryError, add_note
    from store.rows import NoteRow

    if text is not None:
        now = time.time()
        try:
            at = parse_time(at_text, now) if at_text else now
        except click.BadParameter as exc:
            _fail("history notes", str(exc), EXIT_CONFIG)
            return
        path = _history_path(history_path, profile, bootstrap, local)
        try:
            note = NoteRow(round(at * 1000), subject or "cluster", text)
            add_note(path, note, written_ms=round(now * 1000))
        except HistoryError as exc:
            _fail("history notes", str(exc), EXIT_REFUSED)
        click.echo(f"noted at {when(at * 1000)} on {subject or 'cluster'}")
        return
    lo, hi = _window(since, until)
    with _reader(history_path, profile, bootstrap, local) as reader:
        notes = reader.notes(lo, hi, subject=subject)
    _emit(
        [{"time": when(n.at_ms), "subject": n.subject, "text": n.text} for n in notes],
        ["time", "subject", "text"],
        fmt,
    )


@history.command("export")
@_file_options
@_range_options
@click.argument("what", type=click.Choice(["events", "notes", "polls"]))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "json", "parquet"]),
    default="csv",
    show_default=True,
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="File (default: stdout; parquet needs one).",
)
def history_export(
    profile: str | None,
    bootstrap: str | None,
    local: bool,
    history_path: Path | None,
    since: str | None,
    until: str | None,
    what: str,
    fmt: str,
    output: Path | None,
) -> None:
    """Export events, notes or polls of a time range as CSV, JSON lines or Parquet."""
    import pyarrow as pa

    lo, hi = _window(since, until)
    with _reader(history_path, profile, bootstrap, local) as reader:
        if what == "events":
            rows: list[dict[str, Any]] = [
                {
                    "time_ms": e.at_ms,
                    "severity": e.severity,
                    "kind": e.kind,
                    "subject": e.subject,
                    "message": e.message,
                    "details": e.details,
                }
                for e in reader.events(lo, hi)
            ]
        elif what == "notes":
            rows = [
                {"time_ms": n.at_ms, "subject": n.subject, "text": n.text}
                for n in reader.notes(lo, hi)
            ]
        else:
            rows = [
                {
                    "time_ms": p.at_ms,
                    "seq": p.seq,
                    "latency_ms": p.latency_ms,
                    "ok": p.ok,
                    "error": p.error,
                    "errors": p.n_errors,
                    "resolution": ("full", "minute", "hour")[p.level],
                }
                for p in reader.polls(lo, hi)
            ]
    table = pa.Table.from_pylist(rows)
    if fmt == "parquet":
        if output is None:
            _fail("history export", "--format parquet needs --output FILE", EXIT_CONFIG)
            return
        import pyarrow.parquet as pq

        pq.write_table(table, output)
        click.echo(f"{len(rows)} {what} written to {output}", err=True)
        return
    if fmt == "csv":
        import pyarrow.csv as pacsv

        sink = io.BytesIO()
        pacsv.write_csv(table, sink)
        data = sink.getvalue()
    else:
        data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    if output is None:
        click.echo(data.decode(), nl=False)
    else:
        output.write_bytes(data)
        click.echo(f"{len(rows)} {what} written to {output}", err=True)


@history.command("info")
@_file_options
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
def history_info(
    profile: str | None, bootstrap: str | None, local: bool, history_path: Path | None, fmt: str
) -> None:
    """File size, time span, polls and events per level of resolution, the recorder's pid."""
    from store import SCHEMA_VERSION, RetentionPolicy

    policy = RetentionPolicy()
    with _reader(history_path, profile, bootstrap, local) as reader:
        info = reader.info(
            round(time.time() * 1000), full_ms=policy.full_ms, minute_ms=policy.minute_ms
        )
    doc = {
        "path": info.path,
        "size_bytes": info.size_bytes,
        "schema_version": info.schema_version,
        "first": when(info.first_ms) if info.first_ms is not None else None,
        "last": when(info.last_ms) if info.last_ms is not None else None,
        "polls": info.polls,
        "events": info.events,
        "notes": info.notes,
        "recorder_pid": info.writer_pid,
    }
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2))
        return
    # An older file reads as it is; only a writer (under its lock) migrates it.
    older = (
        f"; older than this konsole's {SCHEMA_VERSION}: the next `konsole record` upgrades it"
        if 0 < info.schema_version < SCHEMA_VERSION
        else ""
    )
    click.echo(
        f"file:      {info.path} ({info.size_bytes / 1048576:.1f} MB, "
        f"schema {info.schema_version}{older})"
    )
    click.echo(f"span:      {doc['first'] or '-'} .. {doc['last'] or '-'}")
    click.echo(
        "polls:     " + ", ".join(f"{n} at {lvl} resolution" for lvl, n in info.polls.items())
    )
    click.echo(
        "events:    "
        + ", ".join(
            f"{n} {band}"
            for band, n in zip(
                ("in the last 24 h", "1-7 d old", "older"), info.events.values(), strict=True
            )
        )
    )
    click.echo(f"notes:     {info.notes}")
    click.echo(f"recorder:  {'pid ' + str(info.writer_pid) if info.writer_pid else 'none running'}")

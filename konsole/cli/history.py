"""`konsole history ...`: reading back what ``konsole record``, the console and
``check --record`` wrote.

The file is the cluster's own, named by ``--profile`` / ``--bootstrap`` (or env
FLUSS_BOOTSTRAP) / ``--local`` with the one rule of :mod:`konsole.collect.connect`, or
``--history PATH``; nothing is connected to read it. Any number of readers work while the
recorder writes. Exit codes: 0, 1 when the file is refused (missing, newer, corrupt or
foreign) or holds nothing for the question, 3 for a bad time, target or format (click's own
usage errors keep its 2), 74 when ``report`` cannot write its output. Times
are UTC; ``--since`` / ``--until`` / ``as-of`` take ISO 8601 (``2026-11-30T14:05``, a
missing zone is UTC), epoch seconds, ``now``, or an age such as ``90s``, ``15m``, ``2h``,
``3d``, ``1w`` (that long ago).
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from konsole.cli.options import (
    ConnectionArgs,
    cluster_options,
    fail,
    parse_duration,
    parse_time,
    when,
)
from konsole.errors import ExitCode, ProfileError

__all__ = ["history", "parse_duration", "parse_time"]


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


def _refused(command: str, message: str) -> NoReturn:
    """The file or what was asked of it is not there: exit 1 (module docstring)."""
    fail(command, message, ExitCode.WARNING)


def _bad(command: str, message: str) -> NoReturn:
    """A bad argument: exit 3."""
    fail(command, message, ExitCode.UNKNOWN)


def _range_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--until", default=None, help="Up to this time (default: now).")(f)
    return click.option("--since", default=None, help="From this time (default: the start).")(f)


#: The file to read: the cluster's (as the console and ``record`` name it) or --history.
_file_options = cluster_options(reach=False, history=True)


FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
)


def _path(cluster: ConnectionArgs) -> Path:
    try:
        return cluster.history_file()
    except ProfileError as exc:
        raise click.BadParameter(str(exc)) from None


def _reader(cluster: ConnectionArgs) -> Any:
    from store import HistoryError, open_reader

    try:
        return open_reader(_path(cluster))
    except HistoryError as exc:
        _refused("history", str(exc))


def _window(since: str | None, until: str | None) -> tuple[int | None, int | None]:
    now = time.time()
    try:
        lo = round(parse_time(since, now) * 1000) if since else None
        hi = round(parse_time(until, now) * 1000) if until else None
    except click.BadParameter as exc:
        _bad("history", str(exc))
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
    cluster: ConnectionArgs,
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
    with _reader(cluster) as reader:
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
    cluster: ConnectionArgs,
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
    with _reader(cluster) as reader:
        if metric is not None:
            _say_narrowed(reader, lo, hi)
            points = reader.metric_series(target, metric, since=lo, until=hi)
            _emit([{"time": when(p.at_ms), metric: p.value} for p in points], ["time", metric], fmt)
            return
        database, dot, name = target.partition(".")
        if not dot:
            _bad("history series", f"{target!r} is not database.table")
        spans = reader.tables_named(database, name, lo, hi)
        if not spans:
            _refused("history series", f"no table {target} recorded in that time")
        step_ms = round(parse_duration(step) * 1000) if step else None
        _say_narrowed(reader, lo, hi)
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


def _say_narrowed(reader: Any, lo: int | None, hi: int | None) -> None:
    """A series stays in one epoch (one cluster): say so when that cut the range."""
    since, _ = reader.epochs.narrow(lo, hi)
    if since is not None and since != lo and reader.poll_at(since - 1) is not None:
        click.echo(
            f"series from {when(since)}: the polls before are another cluster's "
            "(`konsole history info` lists the epochs)",
            err=True,
        )


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
    cluster: ConnectionArgs,
    moment: str,
    only: str | None,
    fmt: str,
) -> None:
    """The cluster as recorded at MOMENT: servers, tables, buckets (leader, replicas, offsets)."""
    from konsole.collect.history import snapshot_at

    try:
        at = parse_time(moment, time.time())
    except click.BadParameter as exc:
        _bad("history as-of", str(exc))
    with _reader(cluster) as reader:
        recorded = snapshot_at(reader, at)
    if recorded is None:
        _refused("history as-of", f"nothing recorded at or before {when(at * 1000)}")
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
        if snap.storage is not None:  # the storage part as recorded (docs/storage.md)
            from konsole.model.storage_report import storage_dict

            doc["storage"] = storage_dict(snap.storage, view, table=only, metrics=snap.metrics)
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
    cluster: ConnectionArgs,
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
            _bad("history notes", str(exc))
        path = _path(cluster)
        try:
            note = NoteRow(round(at * 1000), subject or "cluster", text)
            add_note(path, note, written_ms=round(now * 1000))
        except HistoryError as exc:
            _refused("history notes", str(exc))
        click.echo(f"noted at {when(at * 1000)} on {subject or 'cluster'}")
        return
    lo, hi = _window(since, until)
    with _reader(cluster) as reader:
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
    cluster: ConnectionArgs,
    since: str | None,
    until: str | None,
    what: str,
    fmt: str,
    output: Path | None,
) -> None:
    """Export events, notes or polls of a time range as CSV, JSON lines or Parquet."""
    import pyarrow as pa

    lo, hi = _window(since, until)
    with _reader(cluster) as reader:
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
            _bad("history export", "--format parquet needs --output FILE")
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


@history.command("report")
@_file_options
@click.option("--around", default=None, help="The moment to explain (a time, as --since takes).")
@click.option(
    "--window", default="30m", show_default=True, help="Span around --around (half each side)."
)
@click.option("--from", "from_", default=None, help="Start of the window (instead of --around).")
@click.option("--to", default=None, help="End of the window (default: now).")
@click.option(
    "-o", "--output", "output", required=True, type=click.Path(dir_okay=False, path_type=Path)
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "md"]),
    default=None,
    help="Default: md for a .md output, else html.",
)
def history_report(
    cluster: ConnectionArgs,
    around: str | None,
    window: str,
    from_: str | None,
    to: str | None,
    output: Path,
    fmt: str | None,
) -> None:
    """An incident report of a window: plots, events, notes and log excerpts (HTML or Markdown)."""
    from konsole.report import ReportError, write_report

    lo, hi, at = _report_window(around, window, from_, to)
    kind = fmt or ("md" if output.suffix.lower() in (".md", ".markdown") else "html")
    with _reader(cluster) as reader:
        try:
            written = write_report(
                reader,
                output,
                since_ms=lo,
                until_ms=hi,
                around_ms=at,
                fmt=kind,  # type: ignore[arg-type]
            )
        except ReportError as exc:
            fail("history report", str(exc), exc.exit_code)
    for line in written.summary:
        click.echo(line)
    click.echo(f"report written to {written.path}")


def _report_window(
    around: str | None, window: str, from_: str | None, to: str | None
) -> tuple[int, int, int | None]:
    """(since ms, until ms, the moment ms or None) of --around/--window or --from/--to."""
    if (around is None) == (from_ is None):
        _bad("history report", "give --around T, or --from T1 [--to T2]")
    if around is not None and to is not None:
        _bad("history report", "--to goes with --from, not with --around")
    now = time.time()
    try:
        if around is not None:
            at = parse_time(around, now)
            half = parse_duration(window) / 2
            return round((at - half) * 1000), round((at + half) * 1000), round(at * 1000)
        lo = parse_time(from_, now) if from_ is not None else now
        hi = parse_time(to, now) if to is not None else now
    except click.BadParameter as exc:
        _bad("history report", str(exc))
    if hi <= lo:
        _bad("history report", "--to must be after --from")
    return round(lo * 1000), round(hi * 1000), None


@history.command("info")
@_file_options
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
def history_info(cluster: ConnectionArgs, fmt: str) -> None:
    """File size, time span, polls and events per level of resolution, the recorder's pid,
    and the epochs (one per cluster the file has recorded)."""
    from store import SCHEMA_VERSION, RetentionPolicy

    policy = RetentionPolicy()
    with _reader(cluster) as reader:
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
        "epochs": _epochs(info.epochs),
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
    _echo_epochs(doc["epochs"])


def _epochs(rows: Sequence[Any]) -> list[dict[str, Any]]:
    """Each epoch of a history: when it began, why, and the cluster's identity."""
    from konsole.model.identity import ClusterIdentity

    out = []
    for row in rows:
        identity = ClusterIdentity.from_json(row.identity)
        out.append(
            {
                "epoch": row.id,
                "from": when(row.from_ms),
                "first_poll": row.first_poll,
                "reason": row.reason,
                "cluster": identity.summary(),
                "identity": json.loads(identity.to_json()),
            }
        )
    return out


def _echo_epochs(epochs: Sequence[dict[str, Any]]) -> None:
    if not epochs:
        click.echo("epochs:    none (a file written before epochs, or no poll yet)")
        return
    click.echo(f"epochs:    {len(epochs)} (one per cluster recorded; no series joins two)")
    for e in epochs:
        click.echo(f"  {e['epoch']:>3}  from {e['from']}: {e['cluster']}")
        click.echo(f"       began: {e['reason']}")

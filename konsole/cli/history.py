"""`konsole history ...`: reading back what ``konsole record``, the console and
``check --record`` wrote.

The file is the cluster's own, named by ``--profile`` / ``--bootstrap`` (or env
FLUSS_BOOTSTRAP) / ``--local`` with the one rule of :mod:`konsole.collect.cluster.connect`, or
``--history PATH``; nothing is connected to read it. Any number of readers work while the
recorder writes. Exit codes (docs/cli.md): 0; 1 when the file holds nothing for the one
thing asked (``as-of`` a time before any poll, ``series`` of a table never recorded); 3 for
a bad time, target, format or option; 65 when the file is not a konsole history (not
SQLite, corrupt, another program's, a newer konsole's); 66 when it does not exist; 74 when
an output cannot be written. Times are UTC; ``--since`` / ``--until`` / ``as-of`` take ISO
8601 (``2026-11-30T14:05``, a missing zone is UTC), epoch seconds (9 digits or more),
``now``, or an age such as ``90s``, ``15m``, ``2h``, ``3d``, ``1w`` (that long ago).
An event is printed in the one shape of :meth:`konsole.model.events.Event.as_dict`.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from konsole.cli.exits import fail, history_failure
from konsole.cli.listing import ListingGroup
from konsole.cli.options import (
    DURATION,
    JAVA_INT_MAX,
    MOMENT,
    OUTPUT_FILE,
    ConnectionArgs,
    Whole,
    checked_table,
    cluster_options,
    parse_duration,
    parse_time,
    when,
)
from konsole.errors import ExitCode, ProfileError
from konsole.model.events.base import EventKind, Severity
from konsole.render.sizes import bytes_text

__all__ = ["history", "parse_duration", "parse_time"]

#: ``--format`` of a listing: an aligned table for a person, one JSON document, CSV.
LISTING_FORMATS = ("table", "json", "csv")
#: ``history export --format`` (konsole.export.records' RECORD_FORMATS, kept here so that the
#: command's options load without the export package), and the --output suffixes that
#: choose one.
EXPORT_FORMATS = ("csv", "json", "jsonl", "parquet")


def _emit(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str) -> None:
    if fmt in ("json", "csv"):  # the export's writers (konsole.export.records)
        from konsole.export.records import write_records

        sink = io.BytesIO()
        write_records(rows, columns, fmt, sink)
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


def _nothing(message: str) -> NoReturn:
    """The file holds nothing for the one thing asked: exit 1 (module docstring)."""
    fail(message, ExitCode.WARNING)


def _range_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--until", type=MOMENT, default=None, help="Up to this time (default: now).")(
        f
    )
    return click.option(
        "--since", type=MOMENT, default=None, help="From this time (default: the start)."
    )(f)


#: The file to read: the cluster's (as the console and ``record`` name it) or --history.
_file_options = cluster_options(reach=False, config=True, history=True)


FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=click.Choice(LISTING_FORMATS),
    default="table",
    show_default=True,
    help="table: aligned columns for a person; json: one document; csv: a header line, then "
    "a line per row.",
)


#: ``--format`` of an answer that is one document (``as-of``, ``info``).
DOCUMENT_FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="table: for a person; json: one document.",
)


def _path(cluster: ConnectionArgs) -> Path:
    """The file to read. A ``--profile`` whose file is missing must name a profile: an
    unknown one is said as such (3), a removed one's file stays readable."""
    try:
        path = cluster.history_file()
        if cluster.history is None and cluster.profile and not path.exists():
            cluster.resolve()
    except ProfileError as exc:
        fail(exc, exc.exit_code)
    return path


def _reader(cluster: ConnectionArgs) -> Any:
    from konsole.collect.history.files import HistoryError, open_reader

    path = _path(cluster)
    if not path.exists():
        fail(f"{path}: no such history file", ExitCode.NO_INPUT)
    try:
        return open_reader(path)
    except HistoryError as exc:
        history_failure(exc)


def _window(since: float | None, until: float | None) -> tuple[int | None, int | None]:
    """``--since`` / ``--until`` in the history's milliseconds; an empty range (the end
    before the start) is a usage error, as for ``report``."""
    if since is not None and until is not None and until < since:
        raise click.UsageError(
            f"--until {when(until * 1000)} is before --since {when(since * 1000)}"
        )
    lo = round(since * 1000) if since is not None else None
    hi = round(until * 1000) if until is not None else None
    return lo, hi


@click.group("history", cls=ListingGroup)
def history() -> None:
    """Read the recorded history: events, series, the cluster as of a time, notes."""


@history.command("events")
@_file_options
@_range_options
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(sorted(k.value for k in EventKind)),
    help="Only this kind (repeatable).",
)
@click.option(
    "--severity",
    "severities",
    multiple=True,
    type=click.Choice([s.value for s in Severity]),
    help="Only this severity (repeatable).",
)
@click.option(
    "--subject",
    default=None,
    help="A subject, its buckets and partitions (db.t, tablet-server 2; * globs).",
)
@click.option("--limit", type=Whole(1, JAVA_INT_MAX), default=None, help="At most this many.")
@FORMAT_OPTION
def history_events(
    cluster: ConnectionArgs,
    since: float | None,
    until: float | None,
    kinds: tuple[str, ...],
    severities: tuple[str, ...],
    subject: str | None,
    limit: int | None,
    fmt: str,
) -> None:
    """Events in time order."""
    from konsole.collect.history.rows import event_document

    lo, hi = _window(since, until)
    with _reader(cluster) as reader:
        rows = reader.events(
            lo, hi, kinds=kinds, severities=severities, subject=subject, limit=limit
        )
    docs = [event_document(e) for e in rows]
    if fmt == "json":
        _emit(docs, [], fmt)
        return
    if fmt == "csv":  # the one CSV shape of an event: `history export events`'s
        from konsole.export.records import RECORD_COLUMNS

        _emit(docs, RECORD_COLUMNS["events"], fmt)
        return
    _emit(
        [{**d, "subject": d["subject"]["name"]} for d in docs],
        ["time", "severity", "kind", "subject", "message"],
        fmt,
    )


@history.command("series")
@_file_options
@_range_options
@click.argument("target")
@click.option("--partition", default=None, help="One partition of a partitioned table (by name).")
@click.option("--bucket", type=Whole(0, JAVA_INT_MAX), default=None, help="One bucket.")
@click.option(
    "--step",
    type=DURATION,
    default=None,
    help="One point per step (e.g. 1m, 1h); default: every poll kept.",
)
@click.option(
    "--metric",
    default=None,
    help="A server metric instead (TARGET is the server: 'tablet-server 1').",
)
@FORMAT_OPTION
def history_series(
    cluster: ConnectionArgs,
    since: float | None,
    until: float | None,
    target: str,
    partition: str | None,
    bucket: int | None,
    step: float | None,
    metric: str | None,
    fmt: str,
) -> None:
    """Rows/s of TARGET (db.table) from offset deltas, or a server metric with --metric."""
    lo, hi = _window(since, until)
    from konsole.collect.history.reads import partition_recorded

    database, dot, name = target.partition(".")
    if metric is None and not (dot and database and name):
        raise click.BadParameter(f"{target!r} is not DB.TABLE", param_hint="'TARGET'")
    with _reader(cluster) as reader:
        if metric is not None:
            _say_narrowed(reader, lo, hi)
            points = reader.metric_series(target, metric, since=lo, until=hi)
            if not points:  # as for a table never recorded: 1, docs/cli.md
                _nothing(f"no metric {metric} of {target} recorded in that time")
            _emit([{"time": when(p.at_ms), metric: p.value} for p in points], ["time", metric], fmt)
            return
        spans = reader.tables_named(database, name, lo, hi)
        if not spans:
            _nothing(f"no table {target} recorded in that time")
        step_ms = round(step * 1000) if step else None
        _say_narrowed(reader, lo, hi)
        out: list[dict[str, Any]] = []
        partition_seen = partition is None
        for span in spans:
            pid = None
            if partition is not None:
                pid = partition_recorded(reader, span.table_id, partition)
                if pid is None:
                    continue
                partition_seen = True
            args: dict[str, Any] = {
                "since": lo,
                "until": hi,
                "step_ms": step_ms,
                "all_partitions": partition is None,
            }
            totals = reader.offset_totals(span.table_id, pid, bucket, **args)
            from konsole.collect.history.files import rates

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
        if not partition_seen:  # as for a table never recorded: 1, docs/cli.md
            _nothing(f"no partition {partition} of {target} recorded in that time")
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


@history.command("as-of")
@_file_options
@click.argument("moment", type=MOMENT)
@click.option(
    "--table",
    "only",
    default=None,
    callback=lambda ctx, param, value: None if value is None else checked_table(value),
    help="Only this table (DB.TABLE).",
)
@DOCUMENT_FORMAT_OPTION
def history_as_of(
    cluster: ConnectionArgs,
    moment: float,
    only: str | None,
    fmt: str,
) -> None:
    """The cluster as recorded at MOMENT: servers, tables, buckets (leader, replicas, offsets)."""
    from konsole.collect.history.rows import snapshot_at

    at = moment
    with _reader(cluster) as reader:
        recorded = snapshot_at(reader, at)
    if recorded is None:
        _nothing(f"nothing recorded at or before {when(at * 1000)}")
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
            from konsole.model.poll import judge_look
            from konsole.model.storage_report import storage_dict

            where = judge_look(snap, None).placement
            doc["storage"] = storage_dict(
                snap.storage, view, where, table=only, metrics=snap.metrics
            )
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


def _some_text(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A note's text: not empty, not only blanks."""
    if value is not None and not value.strip():
        raise click.BadParameter("a note needs some text")
    return value


@history.command("notes")
@_file_options
@_range_options
@click.option("--add", "text", default=None, callback=_some_text, help="Add a note with this text.")
@click.option("--subject", default=None, help="What the note is about (adding: default cluster).")
@click.option("--at", "at", type=MOMENT, default=None, help="When it happened (default: now).")
@FORMAT_OPTION
def history_notes(
    cluster: ConnectionArgs,
    since: float | None,
    until: float | None,
    text: str | None,
    subject: str | None,
    at: float | None,
    fmt: str,
) -> None:
    """Operator notes (free text with a time and a subject) for incident timelines."""
    from konsole.collect.history.files import HistoryError
    from konsole.collect.history.notes import write_note

    if text is not None:
        path = _path(cluster)
        try:
            at = write_note(path, text, subject=subject or "cluster", at=at)
        except HistoryError as exc:
            history_failure(exc)
        click.echo(f"noted at {when(at * 1000)} on {subject or 'cluster'}")
        return
    from konsole.export.records import RECORD_COLUMNS

    lo, hi = _window(since, until)
    with _reader(cluster) as reader:
        notes = reader.notes(lo, hi, subject=subject)
    _emit(
        [
            {"time": when(n.at_ms), "time_ms": n.at_ms, "subject": n.subject, "text": n.text}
            for n in notes
        ],
        ["time", "subject", "text"] if fmt == "table" else list(RECORD_COLUMNS["notes"]),
        fmt,
    )


@history.command("export")
@_file_options
@_range_options
@click.argument("what", type=click.Choice(["events", "notes", "polls"]))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(EXPORT_FORMATS),
    default=None,
    help="csv, json (one document), jsonl (a JSON object per line) or parquet (needs "
    "--output) [default: from the --output suffix, else csv].",
)
@click.option(
    "--output",
    "-o",
    "output",
    type=OUTPUT_FILE,
    default=None,
    metavar="FILE",
    help="Write to FILE, renamed into place only when complete (default: stdout).",
)
def history_export(
    cluster: ConnectionArgs,
    since: float | None,
    until: float | None,
    what: str,
    fmt: str | None,
    output: Path | None,
) -> None:
    """Export events, notes or polls of a time range as CSV, JSON, JSON lines or Parquet."""
    from konsole.export import open_output
    from konsole.export.records import RECORD_COLUMNS, write_records

    kind = _export_format(fmt, output)
    lo, hi = _window(since, until)
    with _reader(cluster) as reader:
        rows = _export_rows(reader, what, lo, hi)
    with open_output(output) as out:
        try:
            write_records(rows, RECORD_COLUMNS[what], kind, out.sink)
        except OSError as exc:
            from konsole.export import io_error

            raise io_error(output, exc) from None
        out.commit()
    if output is not None:
        click.echo(f"{len(rows)} {what} written to {output} ({kind})", err=True)


def _export_format(fmt: str | None, output: Path | None) -> str:
    """``--format``, else the suffix of ``--output``, else csv; a contradiction, an unknown
    suffix or parquet on stdout is a usage error."""
    from konsole.export import SUFFIXES

    by_suffix = SUFFIXES.get(output.suffix.lower()) if output is not None else None
    if fmt is None:
        if output is not None and by_suffix not in EXPORT_FORMATS:
            raise click.UsageError(
                f"cannot tell the format of {str(output)!r} from its suffix: give --format "
                f"({', '.join(EXPORT_FORMATS)})"
            )
        fmt = by_suffix or "csv"
    elif by_suffix is not None and by_suffix != fmt:
        raise click.UsageError(
            f"--format {fmt} contradicts the suffix of {str(output)!r} (a {by_suffix} suffix)"
        )
    if fmt == "parquet" and output is None:
        raise click.UsageError("--format parquet needs --output FILE")
    return fmt


def _export_rows(reader: Any, what: str, lo: int | None, hi: int | None) -> list[dict[str, Any]]:
    from konsole.collect.history.rows import event_document

    if what == "events":
        return [event_document(e) for e in reader.events(lo, hi)]
    if what == "notes":
        return [
            {"time": when(n.at_ms), "time_ms": n.at_ms, "subject": n.subject, "text": n.text}
            for n in reader.notes(lo, hi)
        ]
    return [
        {
            "time": when(p.at_ms),
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


@history.command("report")
@_file_options
@click.option(
    "--around", type=MOMENT, default=None, help="The moment to explain (a time, as --since takes)."
)
@click.option(
    "--window",
    type=DURATION,
    default="30m",
    show_default=True,
    help="Span around --around (half each side).",
)
@click.option(
    "--from", "from_", type=MOMENT, default=None, help="Start of the window (instead of --around)."
)
@click.option("--to", type=MOMENT, default=None, help="End of the window (default: now).")
@click.option(
    "-o",
    "--output",
    "output",
    required=True,
    type=OUTPUT_FILE,
    metavar="FILE",
    help="The report file (Markdown: its plots go beside it).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "md"]),
    default=None,
    help="html or md (Markdown) [default: md for a .md output, else html].",
)
def history_report(
    cluster: ConnectionArgs,
    around: float | None,
    window: float,
    from_: float | None,
    to: float | None,
    output: Path,
    fmt: str | None,
) -> None:
    """An incident report of a window: plots, events, notes and log excerpts (HTML or Markdown)."""
    from konsole.report import write_report

    lo, hi, at = _report_window(around, window, from_, to)
    kind = fmt or ("md" if output.suffix.lower() in (".md", ".markdown") else "html")
    with _reader(cluster) as reader:
        written = write_report(
            reader,
            output,
            since_ms=lo,
            until_ms=hi,
            around_ms=at,
            fmt=kind,  # type: ignore[arg-type]
        )
    for line in written.summary:
        click.echo(line)
    click.echo(f"report written to {written.path}")


def _report_window(
    around: float | None, window: float, from_: float | None, to: float | None
) -> tuple[int, int, int | None]:
    """(since ms, until ms, the moment ms or None) of --around/--window or --from/--to."""
    if (around is None) == (from_ is None):
        raise click.UsageError("give --around T, or --from T1 [--to T2]")
    if around is not None and to is not None:
        raise click.UsageError("--to goes with --from, not with --around")
    if around is not None:
        half = window / 2
        return round((around - half) * 1000), round((around + half) * 1000), round(around * 1000)
    lo = from_ if from_ is not None else time.time()
    hi = to if to is not None else time.time()
    if hi <= lo:
        raise click.UsageError("--to must be after --from")
    return round(lo * 1000), round(hi * 1000), None


@history.command("info")
@_file_options
@DOCUMENT_FORMAT_OPTION
def history_info(cluster: ConnectionArgs, fmt: str) -> None:
    """File size, time span, polls and events per level of resolution, the recorder's pid,
    and the epochs (one per cluster the file has recorded)."""
    from konsole.collect.history.files import SCHEMA_VERSION, RetentionPolicy

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
        f"file:      {info.path} ({bytes_text(info.size_bytes)}, "
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
    polls = sum(info.polls.values())
    _echo_epochs(doc["epochs"], _why_no_epoch(info.schema_version, polls, info.good_polls > 0))


def _why_no_epoch(schema: int, polls: int, reached: bool) -> str:
    """Why a history holds no epoch: it tells the file's story, not a guess."""
    if 0 < schema < 3:
        return f"a file of schema {schema}, from before epochs"
    if polls == 0:
        return "no poll recorded yet"
    if not reached:
        return (
            "no recorded poll has reached the cluster yet; an epoch begins with the first that does"
        )
    return "none recorded"


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


def _echo_epochs(epochs: Sequence[dict[str, Any]], none_because: str) -> None:
    if not epochs:
        click.echo(f"epochs:    none ({none_because})")
        return
    click.echo(f"epochs:    {len(epochs)} (one per cluster recorded; no series joins two)")
    for e in epochs:
        click.echo(f"  {e['epoch']:>3}  from {e['from']}: {e['cluster']}")
        click.echo(f"       began: {e['reason']}")

"""`konsole preview DB.TABLE`: show a table's rows through server-side scans, or export them.

Rows stream (:func:`fluss_proto.scan.stream_preview`) to stdout as an aligned text table,
JSON, JSON lines or CSV, or to ``--output FILE`` in those formats or Parquet / Arrow IPC
(written by :mod:`konsole.export`, renamed into place only when complete); the scan report
(which buckets were read, how, which failed or timed out) goes to stderr. See
docs/preview.md. Exit codes:

- 0 (``ExitCode.OK``): every bucket was read;
- 1 (``WARNING``): some bucket failed, timed out or sits in remote storage (what was read
  is written);
- 2 (``CRITICAL``): nothing could be read (cluster unreachable, unknown table or partition,
  every bucket failed);
- 3 (``USAGE``): bad arguments, an unknown format or file suffix, bad configuration;
  refused before connecting;
- 65 (``DATA_ERROR``): a ``--where`` filter that does not parse or fit the table;
- 69 (``UNAVAILABLE``): ``--local`` without a running local cluster;
- 74 (``IO_ERROR``): the output could not be written (missing or read-only directory,
  full disk); nothing is left under the final name;
- 77 (``NO_PERMISSION``): ``--output`` under a profile with ``export = false``, or a filter
  on a column the profile masks (docs/lookup.md);
- 130 / 143 (``INTERRUPTED`` / ``TERMINATED``): SIGINT / SIGTERM; ScanKv sessions are
  closed, the temporary file removed, one line on stderr.

(docs/cli.md holds every command's codes; an error is one ``konsole: error:`` line.)

Values are rendered by :mod:`konsole.render.arrow` (the rules of :mod:`konsole.render.values`,
shared with the check and the UI, a column at a time). The text formats (table, JSON, JSON
lines, CSV) of a table of plain column types are read as a light stream and written by
:mod:`konsole.export.plain` to the same bytes, so such a preview never imports pyarrow or
numpy (~200 ms of start-up, docs/performance.md); Parquet, Arrow and nested columns take
the pyarrow path.

Heavy imports (pyarrow, the protocol package, the writers) happen inside the command, so
the rest of the CLI starts as fast as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from konsole.cli.exits import error_line, fail
from konsole.cli.options import (
    OUTPUT_FILE,
    ConnectionArgs,
    Number,
    Whole,
    cluster_options,
    table_argument,
)
from konsole.cli.signals import run_until_signalled
from konsole.errors import ExitCode, ProfileError
from konsole.export import (
    FORMATS,
    LIGHT_FORMATS,
    ExportFormatError,
    ExportIOError,
    open_output,
    resolve_format,
)
from konsole.model.names import invalid_name
from konsole.render.values import (  # json_rows, json_values, text_table: re-exported
    CELL_WIDTH,
    json_rows,
    json_values,
    text_table,
)

if TYPE_CHECKING:
    from fluss_proto.filter import Filter
    from fluss_proto.sasl import SaslPlain
    from fluss_proto.scan import StreamOrder
    from konsole.collect.profiles import Profile
    from konsole.model.masking import MaskRules

__all__ = [
    "CELL_WIDTH",
    "invalid_name",
    "json_rows",
    "json_values",
    "preview",
    "text_table",
]


#: ``--format`` and ``--output``, shared with ``konsole lookup``.
format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    default=None,
    help="Output format [default: from the --output suffix, else table]; parquet and arrow "
    "need --output.",
)
output_option = click.option(
    "--output",
    "-o",
    "output",
    type=OUTPUT_FILE,
    default=None,
    metavar="FILE",
    help="Write the rows to FILE (renamed into place only when complete).",
)


@click.command("preview")
@table_argument()
@cluster_options()
@click.option(
    "--partition",
    default=None,
    metavar="P|all",
    help="Partition name (values joined by $), k=v/k2=v2, id, or 'all' (the default).",
)
@click.option("--limit", type=Whole(1, 1_000_000), default=100, show_default=True, help="Rows.")
@click.option("--tail", is_flag=True, help="The last rows of each bucket's log.")
@click.option(
    "--where",
    default=None,
    metavar="EXPR",
    help="Only rows matching EXPR (e.g. \"amount > 1000 AND region IN ('eu', 'us')\"; "
    'quote a column as "name"). A log table is read whole; on the 1.0 line the server '
    "skips batches its statistics rule out.",
)
@format_option
@output_option
@click.option(
    "--arrival-order",
    is_flag=True,
    help="Write rows as they arrive from any bucket (not bucket by bucket).",
)
@click.option(
    "--timeout",
    type=Number(0, 86_400, low_open=True),
    default=10.0,
    show_default=True,
    help="Seconds for the whole preview (connecting included).",
)
def preview(
    table: str,
    cluster: ConnectionArgs,
    partition: str | None,
    limit: int,
    tail: bool,
    where: str | None,
    fmt: str | None,
    output: Path | None,
    arrival_order: bool,
    timeout: float,
) -> None:
    """Show up to LIMIT rows of DB.TABLE, or write them to FILE (report on stderr)."""
    database, name = split_table(table)
    fmt = checked_format(fmt, output)
    if where is not None:  # its grammar needs no table: said before connecting
        from fluss_proto.errors import FilterError
        from fluss_proto.filter.parse import check_syntax

        try:
            check_syntax(where)
        except FilterError as exc:
            fail(exc, ExitCode.DATA_ERROR)
    chosen, sasl = resolve_profile(cluster, output)
    job = _Job(
        ",".join(chosen.bootstrap),
        (database, name),
        partition,
        limit,
        tail,
        fmt,
        output,
        "arrival" if arrival_order else "bucket",
        timeout,
        sasl,
        where=where,
        masks=chosen.masks,
        profile=chosen.name,
        cluster=chosen,
    )
    with _without_pandas():
        code = asyncio.run(_main(job))
    sys.exit(code)


@dataclass
class _Job:
    bootstrap: str
    path: tuple[str, str]
    partition: str | None
    limit: int
    tail: bool
    fmt: str
    output: Path | None
    order: StreamOrder
    timeout: float
    sasl: SaslPlain | None = None
    where: str | None = None
    masks: MaskRules | None = None
    profile: str = ""
    #: The resolved profile the client connects with (its bootstrap, timeouts).
    cluster: Profile | None = None
    #: Progress, for the message of an interrupted run.
    rows: int = 0
    code: ExitCode | None = None


async def _main(job: _Job) -> ExitCode:
    """Run the preview until it ends or a signal stops it (exit 130 / 143)."""

    async def body(_stop: asyncio.Event) -> None:
        job.code = await _run(job)

    sig = await run_until_signalled(body)
    if job.code is not None:  # finished before the signal was handled
        return job.code
    if sig is None:  # pragma: no cover - the body neither returned nor was stopped
        return ExitCode.UNKNOWN
    where = "stdout" if job.output is None else f"{job.output} not written"
    _error(
        f"interrupted by {sig.name}: stopped after {job.rows} row(s)"
        f"{' to ' if job.output is None else '; '}{where}"
    )
    return ExitCode.INTERRUPTED if sig == signal.SIGINT else ExitCode.TERMINATED


@contextlib.contextmanager
def _without_pandas() -> Iterator[None]:
    """While the preview runs, ``import pandas`` fails (unless pandas is imported already).

    pyarrow imports pandas, when it is installed, at its first array or scalar made from
    Python values, only to ask whether they are pandas objects: 0.5 s, more than the rest
    of a preview's start-up. A preview never hands it one, and konsole does not need pandas.
    """
    if "pandas" in sys.modules:
        yield
        return
    refuse = _RefusePandas()
    sys.meta_path.insert(0, refuse)
    try:
        yield
    finally:
        sys.meta_path.remove(refuse)


class _RefusePandas:
    """A meta path finder that answers ``import pandas`` with ImportError (_without_pandas)."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname == "pandas" or fullname.startswith("pandas."):
            raise ImportError("konsole preview runs without pandas")
        return None


async def _run(job: _Job) -> ExitCode:
    from fluss_proto.errors import FlussError, InputError
    from fluss_proto.scan import PreviewArgumentError, stream_preview
    from konsole.collect.cluster.target import connect_client
    from konsole.export.stream import export_stream, finish_export

    started = time.monotonic()
    timeout = job.timeout
    try:
        # The output file is created (under its temporary name) before connecting: a
        # missing or read-only directory costs no round trip.
        with open_output(job.output) as out:
            try:
                assert job.cluster is not None  # set by the command
                client = await connect_client(
                    job.cluster,
                    connect_timeout=min(timeout, 10.0),
                    request_timeout=timeout,
                    retries=1,
                    sasl=job.sasl,
                )
            except FlussError as exc:
                _error(f"cannot reach the cluster at {job.bootstrap}: {exc}")
                return ExitCode.CRITICAL
            try:
                remaining = max(0.5, timeout - (time.monotonic() - started))
                async with stream_preview(
                    client,
                    job.path,
                    partition=job.partition,
                    limit=job.limit,
                    tail=job.tail,
                    deadline_s=remaining,
                    order=job.order,
                    light=job.fmt in LIGHT_FORMATS,
                    where=job.where,
                    check_filter=_unmasked_filter(job),
                ) as stream:
                    writer = await export_stream(
                        stream,
                        out,
                        job.fmt,
                        on_rows=lambda n: setattr(job, "rows", n),
                        masks=job.masks,
                    )
                report = writer.public_report(stream.report)
                assert report is not None
                await finish_export(writer, out, report)
            except PreviewArgumentError as exc:
                _error(str(exc))
                return ExitCode.UNKNOWN
            except InputError as exc:  # a filter that does not fit the table
                _error(str(exc))
                return ExitCode.DATA_ERROR
            except FlussError as exc:
                _error(_public(exc, job))
                return ExitCode.CRITICAL
            finally:
                await client.close()
    except ExportIOError as exc:
        if exc.errno == errno.EPIPE:  # a reader that stopped early (| head): not an error
            _quiet_stdout()
            return ExitCode.OK
        _error(str(exc))
        return ExitCode.IO_ERROR
    for line in report.summary_lines():
        click.echo(line, err=True)
    if job.output is not None:
        click.echo(f"wrote {writer.rows} row(s) to {job.output} ({job.fmt})", err=True)
    if report.nothing_read:
        return ExitCode.CRITICAL
    return ExitCode.OK if report.complete else ExitCode.WARNING


def _public(exc: Exception, job: _Job) -> str:
    """An error's text as it may be shown: under masking rules, an unknown partition's
    message lists no partition names (they hold partition-key values, which may be masked)."""
    from fluss_proto.error_codes import PartitionNotExistError

    if job.masks and isinstance(exc, PartitionNotExistError):
        from konsole.model.masking import missing_partition_text

        return missing_partition_text(job.partition, ".".join(job.path))
    return str(exc)


def split_table(table: str) -> tuple[str, str]:
    """``DB.TABLE`` (checked by :func:`~konsole.cli.options.table_argument`) -> (database,
    table)."""
    database, _, name = table.partition(".")
    return database, name


def checked_format(fmt: str | None, output: Path | None) -> str:
    """The output format (given, or from the file's suffix); a usage error for a bad one."""
    try:
        return resolve_format(fmt, output)
    except ExportFormatError as exc:
        raise click.UsageError(str(exc)) from None


def resolve_profile(
    cluster: ConnectionArgs, output: Path | None
) -> tuple[Profile, SaslPlain | None]:
    """The profile and its credentials (a missing password variable is bad configuration
    too); :class:`ExportForbiddenError` for a file under ``export = false``."""
    try:
        chosen = cluster.resolve()
        sasl = chosen.sasl()
    except ProfileError as exc:
        fail(exc, exc.exit_code)
    if output is not None:
        from konsole.collect.cluster.table_reads import refuse_export

        refuse_export(chosen)
    return chosen, sasl


def _unmasked_filter(job: _Job) -> Callable[[Filter], None] | None:
    """A check that refuses a filter reading a column the profile masks (which rows match
    would tell its values); None without masks."""
    masks = job.masks
    if not masks or job.where is None:
        return None
    table = ".".join(job.path)

    def check(where: Filter) -> None:
        from fluss_proto.filter import columns_of

        masks.refuse(table, columns_of(where.predicate), "filtered on", profile=job.profile)

    return check


def _quiet_stdout() -> None:
    """stdout is a closed pipe: point it at /dev/null so the exit flush stays silent."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _error(message: str) -> None:
    error_line(message)

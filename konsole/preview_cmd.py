"""`konsole preview DB.TABLE`: show a table's rows through server-side scans.

Rows go to stdout as an aligned text table, JSON or CSV; the scan report (which buckets
were read, how, which failed or timed out) goes to stderr. Exit codes:

- 0 (``ExitCode.OK``): every bucket was read;
- 1 (``WARNING``): some bucket failed, timed out or sits in remote storage (what was read
  is printed);
- 2 (``CRITICAL``): nothing could be read (cluster unreachable, unknown table or partition,
  every bucket failed);
- 3 (``UNKNOWN``): bad arguments (also click's usage errors, which click itself would end
  with 2).

Values are rendered by :mod:`konsole.render` (shared with the check and the UI).

Heavy imports (pyarrow, the protocol package) happen inside the command, so the rest of the
CLI starts as fast as before.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from konsole.errors import ExitCode, ProfileError
from konsole.render import (  # json_rows, json_values, text_table: re-exported
    CELL_WIDTH,
    json_rows,
    json_values,
    right_aligned,
    scalar_text,
    text_table,
    type_label,
)
from konsole.watch_cmd import connection_options, resolve_from_options

if TYPE_CHECKING:
    from fluss_proto.sasl import SaslPlain
    from fluss_proto.scan import Preview

__all__ = [
    "CELL_WIDTH",
    "EXIT_INCOMPLETE",
    "EXIT_NOTHING",
    "EXIT_OK",
    "EXIT_USAGE",
    "json_rows",
    "json_values",
    "preview",
    "text_table",
]

# The older names of the exit codes (ExitCode is the one scheme).
EXIT_OK = ExitCode.OK
EXIT_INCOMPLETE = ExitCode.WARNING
EXIT_NOTHING = ExitCode.CRITICAL
EXIT_USAGE = ExitCode.UNKNOWN

DEFAULT_BOOTSTRAP = "localhost:9123"


class _PreviewCommand(click.Command):
    """Usage errors (unknown option, bad value, missing argument) end with exit code 3."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            exc.exit_code = ExitCode.UNKNOWN  # type: ignore[misc]  # click documents this override
            raise


@click.command("preview", cls=_PreviewCommand)
@click.argument("table", metavar="DB.TABLE")
@connection_options
@click.option(
    "--partition",
    default=None,
    metavar="P|all",
    help="Partition name (values joined by $), k=v/k2=v2, id, or 'all' (the default).",
)
@click.option(
    "--limit", type=click.IntRange(1, 1_000_000), default=100, show_default=True, help="Rows."
)
@click.option("--tail", is_flag=True, help="The last rows of each bucket's log (FetchLog).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="Seconds for the whole preview (connecting included).",
)
def preview(
    table: str,
    profile: str | None,
    bootstrap: str | None,
    local: bool,
    run_dir: Path | None,
    config_path: Path | None,
    partition: str | None,
    limit: int,
    tail: bool,
    fmt: str,
    timeout: float,
) -> None:
    """Show up to LIMIT rows of DB.TABLE (report on stderr)."""
    database, dot, name = table.partition(".")
    if not dot or not database or not name:
        raise _usage(f"table {table!r} is not DB.TABLE")
    for kind, ident in (("database", database), ("table", name)):
        if problem := invalid_name(ident):
            raise _usage(f"{kind} name {ident!r} is invalid: {problem}")
    try:
        chosen = resolve_from_options(profile, bootstrap, local, run_dir, config_path)
        sasl = chosen.sasl()  # a missing password variable is bad configuration too
    except ProfileError as exc:
        raise _usage(str(exc)) from None
    code = asyncio.run(
        _run(
            ",".join(chosen.bootstrap), (database, name), partition, limit, tail, fmt, timeout, sasl
        )
    )
    sys.exit(code)


async def _run(
    bootstrap: str,
    path: tuple[str, str],
    partition: str | None,
    limit: int,
    tail: bool,
    fmt: str,
    timeout: float,
    sasl: SaslPlain | None = None,
) -> ExitCode:
    from fluss_proto.client import FlussClient
    from fluss_proto.errors import FlussError
    from fluss_proto.scan import PreviewArgumentError, preview_table

    started = time.monotonic()
    try:
        client = await FlussClient.connect(
            bootstrap,
            connect_timeout=min(timeout, 10.0),
            request_timeout=timeout,
            retries=1,
            sasl=sasl,
        )
    except FlussError as exc:
        _error(f"cannot reach the cluster at {bootstrap}: {exc}")
        return ExitCode.CRITICAL
    try:
        remaining = max(0.5, timeout - (time.monotonic() - started))
        result = await preview_table(
            client, path, partition=partition, limit=limit, tail=tail, deadline_s=remaining
        )
    except PreviewArgumentError as exc:
        _error(str(exc))
        return ExitCode.UNKNOWN
    except FlussError as exc:
        _error(str(exc))
        return ExitCode.CRITICAL
    finally:
        await client.close()
    _print(result, fmt)
    for line in result.report.summary_lines():
        click.echo(line, err=True)
    if result.report.nothing_read:
        return ExitCode.CRITICAL
    return ExitCode.OK if result.report.complete else ExitCode.WARNING


# Fluss's own rule for database and table names (TablePath.detectInvalidName): checked
# before connecting, so a typo costs no round trip and gets the server's reason at once.
MAX_NAME_LENGTH = 200
_NAME = re.compile(r"[A-Za-z0-9_-]+")


def invalid_name(identifier: str) -> str | None:
    """Why Fluss would refuse this database or table name, or None when it is valid."""
    if len(identifier) > MAX_NAME_LENGTH:
        return f"longer than {MAX_NAME_LENGTH} characters"
    if not _NAME.fullmatch(identifier):
        return "only ASCII letters, digits, '_' and '-' are allowed"
    return None


def _usage(message: str) -> click.UsageError:
    exc = click.UsageError(message)
    exc.exit_code = ExitCode.UNKNOWN  # type: ignore[misc]  # click documents this override
    return exc


def _error(message: str) -> None:
    click.echo(f"error: {message}", err=True)


# =========================================================================== output


def _print(result: Preview, fmt: str) -> None:
    rows = json_rows(result)
    names = result.table.column_names
    if fmt == "json":
        doc = {
            "table": result.report.table_path,
            "columns": [{"name": f.name, "type": type_label(f)} for f in result.table.schema],
            "rows": rows,
            "report": result.report.to_dict(),
        }
        click.echo(json.dumps(doc, ensure_ascii=False, indent=1))
    elif fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(names)
        for row in rows:
            writer.writerow(["" if row[n] is None else scalar_text(row[n]) for n in names])
        click.echo(out.getvalue(), nl=False)
    else:
        for line in text_table(names, rows, right_aligned(result.table.schema)):
            click.echo(line)

"""`konsole lookup DB.TABLE KEY=VALUE[,KEY=VALUE...] ...`: rows by primary key (or prefix).

Each KEY argument is one key: every primary-key column (partition keys included) as
``column=value``, comma-separated (``region=eu,id=42``); several arguments look several
keys up at once (one request per leader). ``--prefix``: each argument names the bucket-key
columns (and the partition keys) and gets every row under it, where the table's bucket key
is a proper prefix of its primary key. Values are typed from the table's schema (docs/lookup.md);
quote a value holding a comma: ``name='a,b'`` (a doubled quote is a quote).

Rows go to stdout (or ``--output FILE``) in preview's formats; the report (found, absent,
failed, per key by position) to stderr. Read-only: the request never carries the
insert-if-missing flag (konsole's message has no such field). Columns the profile masks are
written as ``****``; a key naming a masked column is refused. Exit codes:

- 0: every key was answered (found or absent);
- 1: some key's bucket failed (what was found is written);
- 2: nothing could be read (cluster unreachable, unknown table, every key failed);
- 3: bad arguments (table name, a key not of the form ``column=value``, format, file
  suffix) or configuration, refused before connecting;
- 65 (``DATA_ERROR``): a key that does not fit the table (a column missing or unknown, a
  value of the wrong type, a prefix the table does not allow), or a table whose keys konsole
  cannot encode (row TTL, a lake format's key encoding): one line, nothing sent;
- 74 (``IO_ERROR``): the output could not be written;
- 77 (``NO_PERMISSION``): a key on a masked column, or ``--output`` under a profile with
  ``export = false``.

(docs/cli.md holds every command's codes; an error is one ``konsole: error:`` line.)
"""

from __future__ import annotations

import asyncio
import errno
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from konsole.cli.options import ConnectionArgs, Number, cluster_options, table_argument
from konsole.cli.preview import (
    _error,
    _quiet_stdout,
    _without_pandas,
    checked_format,
    format_option,
    output_option,
    resolve_profile,
)
from konsole.errors import ExitCode
from konsole.export import LIGHT_FORMATS, ExportIOError, open_output

if TYPE_CHECKING:
    from fluss_proto.sasl import SaslPlain
    from konsole.collect.profiles import Profile
    from konsole.model.masking import MaskRules

__all__ = ["KeyArgumentError", "lookup", "parse_key"]


class KeyArgumentError(ValueError):
    """A KEY argument is not ``column=value[,column=value...]``."""


def parse_key(text: str) -> dict[str, str]:
    """``"region=eu,id=42"`` -> ``{"region": "eu", "id": "42"}``. A value in single or
    double quotes may hold commas and ``=`` (a doubled quote is one quote); spaces around
    names and unquoted values are dropped. Raises :class:`KeyArgumentError`."""
    out: dict[str, str] = {}
    i, n = 0, len(text)
    if not text.strip():
        raise KeyArgumentError("an empty key")
    for _ in range(n + 1):  # bounded: each pass consumes at least one character
        eq = text.find("=", i)
        if eq < 0:
            raise KeyArgumentError(f"{text[i:].strip()!r} is not column=value")
        name = text[i:eq].strip()
        if not name:
            raise KeyArgumentError(f"a value without a column at character {eq + 1}")
        if name in out:
            raise KeyArgumentError(f"column {name!r} is given twice")
        j = eq + 1
        while j < n and text[j] == " ":
            j += 1
        if j < n and text[j] in "'\"":
            value, j = _quoted(text, j)
            while j < n and text[j] == " ":
                j += 1
            if j < n and text[j] != ",":
                raise KeyArgumentError(f"text after the quoted value of {name!r}")
        else:
            comma = text.find(",", j)
            end = n if comma < 0 else comma
            value, j = text[j:end].strip(), end
        out[name] = value
        if j >= n:
            return out
        i = j + 1  # past the comma
    raise KeyArgumentError("malformed key")  # pragma: no cover - the loop always returns


def _quoted(text: str, start: int) -> tuple[str, int]:
    from fluss_proto.literals import read_quoted

    try:
        return read_quoted(text, start)
    except ValueError as exc:
        raise KeyArgumentError(f"{exc} at character {start + 1}") from None


@click.command("lookup")
@table_argument()
@click.argument("keys", metavar="KEY=VALUE[,KEY=VALUE...]...", nargs=-1, required=True)
@cluster_options()
@click.option(
    "--prefix",
    is_flag=True,
    help="Each argument names the bucket key (and partition keys): every row under it.",
)
@format_option
@output_option
@click.option(
    "--timeout",
    type=Number(0, 86_400, low_open=True),
    default=10.0,
    show_default=True,
    help="Seconds for the whole lookup (connecting included).",
)
def lookup(
    table: str,
    keys: tuple[str, ...],
    cluster: ConnectionArgs,
    prefix: bool,
    fmt: str | None,
    output: Path | None,
    timeout: float,
) -> None:
    """Look rows of DB.TABLE up by primary key (or by prefix); report on stderr."""
    fmt = checked_format(fmt, output)
    try:
        parsed = [parse_key(k) for k in keys]
    except KeyArgumentError as exc:  # its form, not the table: a usage error (docs/cli.md)
        raise click.BadParameter(f"bad key: {exc}", param_hint="'KEY=VALUE'") from None
    chosen, sasl = resolve_profile(cluster, output)
    masks = chosen.masks
    for key in parsed:
        masks.refuse(table, key, "looked up by", profile=chosen.name)
    job = _Job(
        ",".join(chosen.bootstrap), table, parsed, prefix, fmt, output, timeout, sasl, masks, chosen
    )
    with _without_pandas():
        code = asyncio.run(_run(job))
    sys.exit(code)


@dataclass
class _Job:
    bootstrap: str
    table: str
    keys: list[dict[str, str]]
    prefix: bool
    fmt: str
    output: Path | None
    timeout: float
    sasl: SaslPlain | None
    masks: MaskRules
    #: The resolved profile the client connects with.
    cluster: Profile


async def _run(job: _Job) -> ExitCode:
    from fluss_proto.errors import FlussError, InputError, UnsupportedTableError
    from fluss_proto.lookup import lookup_rows
    from konsole.collect.cluster.target import connect_client
    from konsole.export.mask import masked_columns
    from konsole.export.stream import make_writer

    started = time.monotonic()
    try:
        with open_output(job.output) as out:
            try:
                client = await connect_client(
                    job.cluster,
                    connect_timeout=min(job.timeout, 10.0),
                    request_timeout=job.timeout,
                    retries=1,
                    sasl=job.sasl,
                )
            except FlussError as exc:
                _error(f"cannot reach the cluster at {job.bootstrap}: {exc}")
                return ExitCode.CRITICAL
            try:
                remaining = max(0.5, job.timeout - (time.monotonic() - started))
                result = await lookup_rows(
                    client,
                    job.table,
                    job.keys,
                    prefix=job.prefix,
                    deadline_s=remaining,
                    light=job.fmt in LIGHT_FORMATS,
                )
            except InputError as exc:
                _error(str(exc))
                return ExitCode.DATA_ERROR
            except UnsupportedTableError as exc:  # a table konsole cannot key (row TTL, lake)
                _error(str(exc))
                return ExitCode.DATA_ERROR
            except FlussError as exc:
                _error(str(exc))
                return ExitCode.CRITICAL
            finally:
                await client.close()
            types = {c.name: c.type for c in result.info.schema.columns}
            masked = masked_columns(job.masks, job.table, result.schema.names)
            try:
                writer = make_writer(
                    job.fmt, out.sink, result.schema, table=job.table, types=types, masked=masked
                )
                writer.write(result.rows)
                writer.finish(result.report)
            except OSError as exc:
                from konsole.export import io_error

                raise io_error(out.path, exc) from None
            out.commit()
    except ExportIOError as exc:
        if exc.errno == errno.EPIPE:
            _quiet_stdout()
            return ExitCode.OK
        _error(str(exc))
        return ExitCode.IO_ERROR
    report = result.report
    for line in report.summary_lines():
        click.echo(line, err=True)
    if job.output is not None:
        click.echo(f"wrote {writer.rows} row(s) to {job.output} ({job.fmt})", err=True)
    if report.nothing_read:
        return ExitCode.CRITICAL
    return ExitCode.OK if report.complete else ExitCode.WARNING

"""`konsole preview DB.TABLE`: show a table's rows through server-side scans.

Rows go to stdout as an aligned text table, JSON or CSV; the scan report (which buckets
were read, how, which failed or timed out) goes to stderr. Exit codes:

- 0: every bucket was read;
- 1: some bucket failed, timed out or sits in remote storage (what was read is printed);
- 2: nothing could be read (cluster unreachable, unknown table or partition, every bucket
  failed);
- 3: bad arguments (also click's usage errors, which click itself would end with 2).

Value rendering (JSON; CSV and the text table use the same text for scalars): DECIMAL as a
string (exact), timestamps and dates as ISO 8601 with every digit of their unit
(TIMESTAMP_LTZ ends in ``Z``: its values are UTC instants), TIME as ``HH:MM:SS[.fff]``,
BYTES/BINARY as base64, NaN and infinities as the strings ``NaN``/``Infinity``/``-Infinity``,
ARRAY as a list, MAP as a list of ``[key, value]`` pairs (keys need not be strings), ROW as
an object.

Heavy imports (pyarrow, the protocol package) happen inside the command, so the rest of the
CLI starts as fast as before.
"""

from __future__ import annotations

import asyncio
import base64
import csv
import io
import json
import math
import re
import sys
import time
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    import pyarrow as pa

    from fluss_proto.scan import Preview
    from fluss_proto.types import DataType

EXIT_OK = 0
EXIT_INCOMPLETE = 1
EXIT_NOTHING = 2
EXIT_USAGE = 3

DEFAULT_BOOTSTRAP = "localhost:9123"
CELL_WIDTH = 48  # text table: longer cells are cut with an ellipsis

_EPOCH = datetime(1970, 1, 1)
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


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
            exc.exit_code = EXIT_USAGE  # type: ignore[misc]  # click documents this override
            raise


@click.command("preview", cls=_PreviewCommand)
@click.argument("table", metavar="DB.TABLE")
@click.option(
    "--bootstrap",
    envvar="FLUSS_BOOTSTRAP",
    default=DEFAULT_BOOTSTRAP,
    show_default=True,
    help="Bootstrap servers, comma-separated (env FLUSS_BOOTSTRAP).",
)
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
    bootstrap: str,
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
        from fluss_proto.client import parse_bootstrap

        parse_bootstrap(bootstrap)
    except ValueError as exc:
        raise _usage(f"--bootstrap: {exc}") from None
    code = asyncio.run(_run(bootstrap, (database, name), partition, limit, tail, fmt, timeout))
    sys.exit(code)


async def _run(
    bootstrap: str,
    path: tuple[str, str],
    partition: str | None,
    limit: int,
    tail: bool,
    fmt: str,
    timeout: float,
) -> int:
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
        )
    except FlussError as exc:
        _error(f"cannot reach the cluster at {bootstrap}: {exc}")
        return EXIT_NOTHING
    try:
        remaining = max(0.5, timeout - (time.monotonic() - started))
        result = await preview_table(
            client, path, partition=partition, limit=limit, tail=tail, deadline_s=remaining
        )
    except PreviewArgumentError as exc:
        _error(str(exc))
        return EXIT_USAGE
    except FlussError as exc:
        _error(str(exc))
        return EXIT_NOTHING
    finally:
        await client.close()
    _print(result, fmt)
    for line in result.report.summary_lines():
        click.echo(line, err=True)
    if result.report.nothing_read:
        return EXIT_NOTHING
    return EXIT_OK if result.report.complete else EXIT_INCOMPLETE


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
    exc.exit_code = EXIT_USAGE  # type: ignore[misc]  # click documents this override
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
            "columns": [{"name": f.name, "type": _type_label(f)} for f in result.table.schema],
            "rows": rows,
            "report": result.report.to_dict(),
        }
        click.echo(json.dumps(doc, ensure_ascii=False, indent=1))
    elif fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(names)
        for row in rows:
            writer.writerow(["" if row[n] is None else _text(row[n]) for n in names])
        click.echo(out.getvalue(), nl=False)
    else:
        for line in text_table(names, rows, _right_aligned(result.table.schema)):
            click.echo(line)


def _type_label(f: pa.Field) -> str:
    meta = f.metadata or {}
    label = meta.get(b"fluss.type")
    return label.decode() if label else str(f.type)


def _fluss_types(result: Preview) -> dict[str, DataType]:
    return {c.name: c.type for c in result.info.schema.columns}


def json_rows(result: Preview) -> list[dict[str, Any]]:
    """The preview's rows as JSON-ready dicts (see the module doc for the rendering)."""
    table = result.table
    types = _fluss_types(result)
    columns = [
        json_values(table.column(i).combine_chunks(), types.get(name))
        for i, name in enumerate(table.column_names)
    ]
    return (
        [
            dict(zip(table.column_names, values, strict=True))
            for values in zip(*columns, strict=True)
        ]
        if columns
        else []
    )


def json_values(arr: Any, dt: DataType | None = None) -> list[Any]:
    """One Arrow array -> JSON-ready Python values; ``dt`` is the Fluss type, if known."""
    import pyarrow as pa

    t = arr.type
    if pa.types.is_timestamp(t):
        ltz = dt is not None and str(dt.root) == "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
        ints = arr.cast(pa.int64()).to_pylist()
        return [None if v is None else _timestamp_text(v, t.unit, ltz) for v in ints]
    if pa.types.is_time(t):
        ints = arr.cast(pa.int64() if pa.types.is_time64(t) else pa.int32()).to_pylist()
        return [None if v is None else _time_text(v, t.unit) for v in ints]
    if pa.types.is_date(t):
        return [None if v is None else v.isoformat() for v in arr.to_pylist()]
    if pa.types.is_decimal(t):
        return [None if v is None else format(v, "f") for v in arr.to_pylist()]
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_large_binary(t):
        return [None if v is None else base64.b64encode(v).decode() for v in arr.to_pylist()]
    if pa.types.is_floating(t):
        return [_float(v) for v in arr.to_pylist()]
    if pa.types.is_map(t):
        key_dt = getattr(dt, "key_type", None)
        value_dt = getattr(dt, "value_type", None)
        keys = json_values(arr.keys, key_dt)
        items = json_values(arr.items, value_dt)
        return _nested(arr, lambda a, b: [[keys[j], items[j]] for j in range(a, b)])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = json_values(arr.values, getattr(dt, "element_type", None))
        return _nested(arr, lambda a, b: values[a:b])
    if pa.types.is_struct(t):
        sub = {f.name: f.type for f in getattr(dt, "fields", ())}
        children = arr.flatten()
        child_values = [
            json_values(child, sub.get(t.field(i).name)) for i, child in enumerate(children)
        ]
        names = [t.field(i).name for i in range(t.num_fields)]
        valid = arr.is_valid().to_pylist()
        return [
            dict(zip(names, [c[r] for c in child_values], strict=True)) if valid[r] else None
            for r in range(len(arr))
        ]
    return arr.to_pylist()


def _nested(arr: Any, take: Any) -> list[Any]:
    offsets = arr.offsets.to_pylist()
    valid = arr.is_valid().to_pylist()
    return [take(offsets[i], offsets[i + 1]) if valid[i] else None for i in range(len(arr))]


def _timestamp_text(value: int, unit: str, ltz: bool) -> str:
    per = _PER_SECOND[unit]
    seconds, fraction = divmod(value, per)
    try:
        moment = _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        return str(value)
    text = moment.isoformat(timespec="seconds")
    if _DIGITS[unit]:
        text += "." + str(fraction).zfill(_DIGITS[unit])
    return text + ("Z" if ltz else "")


def _time_text(value: int, unit: str) -> str:
    per = _PER_SECOND[unit]
    seconds, fraction = divmod(value, per)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    if _DIGITS[unit]:
        text += "." + str(fraction).zfill(_DIGITS[unit])
    return text


def _float(v: float | None) -> float | str | None:
    if v is None or math.isfinite(v):
        return v
    if math.isnan(v):
        return "NaN"
    return "Infinity" if v > 0 else "-Infinity"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _right_aligned(schema: pa.Schema) -> set[str]:
    import pyarrow as pa

    return {
        f.name
        for f in schema
        if pa.types.is_integer(f.type)
        or pa.types.is_floating(f.type)
        or pa.types.is_decimal(f.type)
    }


def _cell(value: Any) -> str:
    text = "NULL" if value is None else _text(value)
    text = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…"


def text_table(names: list[str], rows: list[dict[str, Any]], right: set[str]) -> list[str]:
    """A plain aligned text table: header, a rule, one line per row."""
    cells = [[_cell(row[n]) for n in names] for row in rows]
    widths = [max([len(n), *(len(r[i]) for r in cells)]) for i, n in enumerate(names)]

    def line(values: list[str]) -> str:
        parts = [
            v.rjust(w) if n in right else v.ljust(w)
            for v, w, n in zip(values, widths, names, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(names), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    return out

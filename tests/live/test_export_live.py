"""`konsole preview --output` / `--format` against the real cluster, both generations.

pyfluss writes the tables (every Fluss type, with NULLs and extremes; and a larger
primary-key table); the CLI runs as a separate process and writes each format. Checks:

- Parquet and Arrow files read back with pyarrow equal the table ``preview_table`` scans
  (which is itself checked against pyfluss's own reads); Arrow exactly (types and Fluss
  type metadata), Parquet after casting back (Parquet has no TIME in seconds);
- CSV and JSON lines (file and stdout) compare value by value with today's JSON rendering
  (:func:`konsole.render.json_rows` of the scanned table);
- both paths: streamed (``--limit`` above 1,000, bucket and arrival order, ``--tail``) and
  the collected fair-share one (``--limit 1000``);
- the text formats of a table of plain column types (written without pyarrow by the CLI,
  konsole.export.plain) are the bytes the pyarrow writers write for the same scan, whose
  rows equal pyfluss's reads (collected, streamed and ``--tail``);
- SIGINT at three points (before the first row, mid-stream, before the final flush and
  rename; reached through the exporter's test pause hook) exits 130 and leaves neither a
  temporary file nor the output file; SIGTERM exits 143; stdout keeps whole rows only.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import fluss
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import pytest_asyncio

from fluss_proto.client import FlussClient
from fluss_proto.scan import preview_table, stream_preview
from konsole.export.stream import make_writer
from konsole.render.values import json_rows, scalar_text
from tests._testutil import pyfluss_data as pf
from tests._testutil.all_types import (
    CONNECT,
    ROWS,
    SCHEMA,
    World,
    all_type_rows,
    create_table,
    norm_rows,
    write_rows,
)
from tests.conftest import FlussServer

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[2]
BIG_ROWS = 20_000
FILE_FORMATS = ("parquet", "arrow", "csv", "jsonl", "json")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def world(bootstrap: str) -> AsyncIterator[World]:
    conn = await pf.connect(bootstrap)
    db = pf.unique_name("export_live")
    client: FlussClient | None = None
    try:
        await pf.create_database(conn.get_admin(), db)
        client = await FlussClient.connect(bootstrap, **CONNECT)
        yield World(conn, client, db, bootstrap)
    finally:
        if client is not None:
            await client.close()
        await pf.drop_database(conn.get_admin(), db)
        await pf.close_connection(conn)


async def _cli(
    world: World, *args: str, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "konsole.cli",
        "preview",
        *args,
        "--bootstrap",
        world.bootstrap,
        "--timeout",
        "60",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out, err


def _same(got: Any, want: Any) -> bool:
    """Equal JSON values; floats by value (the column-wise text may write 1e-7 for 1e-07)."""
    if isinstance(want, float) and isinstance(got, (int, float)):
        return float(got) == want
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(want, dict) and isinstance(got, dict):
        return got.keys() == want.keys() and all(_same(got[k], want[k]) for k in want)
    return bool(got == want)


def _nan_free(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, list):
        return [_nan_free(v) for v in value]
    if isinstance(value, dict):
        return {k: _nan_free(v) for k, v in value.items()}
    return value


def _by_id(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: int(r["id"]))


def _check_csv(text: str, want: list[dict[str, Any]], names: list[str]) -> None:
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == names
    got = _by_id([dict(zip(names, r, strict=True)) for r in rows[1:]])
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        for name in names:
            value = w[name]
            if value is None:
                assert g[name] == "", name
            elif isinstance(value, float):
                assert float(g[name]) == value, name
            else:
                assert g[name] == scalar_text(value), (name, g[name], value)


async def test_every_format_round_trips_against_pyfluss(
    world: World, fluss_server: FlussServer, tmp_path: Path
) -> None:
    rows = all_type_rows()
    log = fluss.TablePath(world.db, "types_log")
    pk = fluss.TablePath(world.db, "types_pk")
    await create_table(world.conn, log, SCHEMA)
    await create_table(world.conn, pk, SCHEMA, pk=["id"])
    await write_rows(world.conn, log, rows)  # one table at a time (pyfluss writers can hang)
    await write_rows(world.conn, pk, rows)
    back = {
        "types_log": await pf.read_all_log(world.conn, log, expected=ROWS, timeout_s=30),
        "types_pk": await pf.read_pk_rows(world.conn, pk, range(ROWS)),
    }
    for name, from_pyfluss in back.items():
        scanned = await preview_table(world.client, f"{world.db}.{name}", limit=1000)
        assert scanned.report.complete and scanned.table.num_rows == ROWS
        assert norm_rows(scanned.table.to_pylist()) == norm_rows(from_pyfluss), name
        want = _by_id(json_rows(scanned))
        names = scanned.table.column_names
        order = pa.compute.sort_indices(scanned.table, [("id", "ascending")])
        expected_table = scanned.table.take(order)
        for fmt in FILE_FORMATS:
            path = tmp_path / f"{name}.{fmt}"
            # above 1,000 rows the preview streams (the fair-share path is below)
            code, out, err = await _cli(
                world, f"{world.db}.{name}", "--limit", "5000", "-o", str(path)
            )
            assert code == 0, err.decode()
            assert out == b"" and f"wrote {ROWS} row(s)".encode() in err
            if fmt in ("parquet", "arrow"):
                table = (
                    pq.read_table(path) if fmt == "parquet" else pa.ipc.open_file(path).read_all()
                )
                assert table.schema.metadata[b"fluss.table"] == f"{world.db}.{name}".encode()
                if fmt == "arrow":
                    assert table.schema.remove_metadata().equals(
                        scanned.table.schema, check_metadata=True
                    )
                else:
                    table = table.cast(scanned.table.schema)
                for field in scanned.table.schema:
                    assert table.schema.field(field.name).metadata == field.metadata, field.name
                table = table.take(pa.compute.sort_indices(table, [("id", "ascending")]))
                assert _nan_free(table.to_pylist()) == _nan_free(expected_table.to_pylist())
            elif fmt == "csv":
                _check_csv(path.read_text(), want, names)
            elif fmt == "jsonl":
                got = [json.loads(line) for line in path.read_text().splitlines()]
                assert _same(_by_id(got), want)
            else:
                doc = json.loads(path.read_text())
                assert _same(_by_id(doc["rows"]), want) and doc["report"]["complete"]
        # stdout: the same text as the files (1,000 rows: the collected, fair-share path)
        code, out, err = await _cli(
            world, f"{world.db}.{name}", "--format", "jsonl", "--limit", "1000"
        )
        assert code == 0, err.decode()
        assert _same(_by_id([json.loads(line) for line in out.decode().splitlines()]), want)
        code, out, err = await _cli(
            world, f"{world.db}.{name}", "--format", "csv", "--limit", "5000"
        )
        assert code == 0, err.decode()
        _check_csv(out.decode(), want, names)
        # arrival order: the same rows, in some order
        code, out, err = await _cli(
            world, f"{world.db}.{name}", "--format", "jsonl", "--arrival-order", "--limit", "1000"
        )
        assert code == 0, err.decode()
        assert _same(_by_id([json.loads(line) for line in out.decode().splitlines()]), want)
    # --tail streams the log's last rows (FetchLog), rendered as the collected preview is
    tailed = await preview_table(world.client, f"{world.db}.types_log", limit=5000, tail=True)
    code, out, err = await _cli(
        world, f"{world.db}.types_log", "--tail", "--format", "jsonl", "--limit", "5000"
    )
    assert code == 0, err.decode()
    got = [json.loads(line) for line in out.decode().splitlines()]
    assert _same(_by_id(got), _by_id(json_rows(tailed))) and len(got) == ROWS
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{n}.{f}" for n in back for f in FILE_FORMATS
    )


#: The columns of every Fluss type a light preview carries (no ARRAY, MAP or ROW).
PLAIN_SCHEMA = pa.schema([f for f in SCHEMA if not pa.types.is_nested(f.type)])


async def _arrow_text(world: World, table: str, fmt: str, **kw: Any) -> bytes:
    """What the pyarrow writers write for this scan (in this process, an Arrow stream)."""
    out = io.BytesIO()
    async with stream_preview(world.client, table, light=False, **kw) as stream:
        assert not stream.light
        types = {c.name: c.type for c in stream.info.schema.columns}
        writer = make_writer(fmt, out, stream.schema, table=stream.table_path, types=types)
        async for chunk in stream:
            writer.write(chunk)
    writer.finish(None)
    return out.getvalue()


async def test_text_formats_without_pyarrow_are_the_bytes_of_the_arrow_writers(
    world: World,
) -> None:
    rows = [{k: v for k, v in r.items() if k in PLAIN_SCHEMA.names} for r in all_type_rows()]
    log = fluss.TablePath(world.db, "plain_log")
    pk = fluss.TablePath(world.db, "plain_pk")
    await create_table(world.conn, log, PLAIN_SCHEMA)
    await create_table(world.conn, pk, PLAIN_SCHEMA, pk=["id"])
    await write_rows(world.conn, log, rows)
    await write_rows(world.conn, pk, rows)
    back = {
        "plain_log": await pf.read_all_log(world.conn, log, expected=ROWS, timeout_s=30),
        "plain_pk": await pf.read_pk_rows(world.conn, pk, range(ROWS)),
    }
    runs: list[tuple[str, tuple[str, ...], dict[str, Any]]] = [
        (fmt, ("--limit", "1000"), {"limit": 1000}) for fmt in ("jsonl", "csv", "table", "json")
    ]
    runs.append(("jsonl", ("--limit", "5000"), {"limit": 5000}))  # streamed, bucket order
    for name, from_pyfluss in back.items():
        table = f"{world.db}.{name}"
        scanned = await preview_table(world.client, table, limit=1000)
        assert norm_rows(scanned.table.to_pylist()) == norm_rows(from_pyfluss), name
        async with stream_preview(world.client, table, light=True, limit=20) as stream:
            assert stream.light  # every column is one the light path carries
            assert sum([c.num_rows async for c in stream]) == 20
        table_runs = runs
        if name == "plain_log":
            tail = ("jsonl", ("--tail", "--limit", "5000"), {"limit": 5000, "tail": True})
            table_runs = [*runs, tail]
        for fmt, args, kw in table_runs:
            code, out, err = await _cli(world, table, "--format", fmt, *args)
            assert code == 0, err.decode()
            want = await _arrow_text(world, table, fmt, **kw)
            if fmt == "json":  # the CLI's document ends with the report (timings)
                out, want = out.split(b', "report": ')[0], want.removesuffix(b"}\n")
            assert out.decode() == want.decode(), (name, fmt, args)
            assert len(out.splitlines()) >= ROWS


async def _big_table(world: World) -> str:
    path = await pf.create_pk_table(world.conn, world.db, "big_pk", buckets=3)
    await pf.write_rows(world.conn, path, BIG_ROWS)
    return f"{world.db}.big_pk"


async def _signalled(
    world: World, table: str, point: str, sig: signal.Signals, out_args: list[str]
) -> tuple[int, bytes, bytes]:
    """Run the CLI, wait until it pauses at ``point``, send ``sig``; (code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "konsole.cli",
        "preview",
        table,
        "--limit",
        str(BIG_ROWS),
        "--bootstrap",
        world.bootstrap,
        "--timeout",
        "120",
        *out_args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=REPO,
        env={
            **os.environ,
            "KONSOLE_EXPORT_TEST_PAUSE": point,
            "KONSOLE_EXPORT_TEST_PAUSE_S": "60",
        },
    )
    assert proc.stderr is not None and proc.stdout is not None
    stdout_task = asyncio.ensure_future(proc.stdout.read())
    seen = b""
    try:
        async with asyncio.timeout(60):
            for _ in range(100):  # bounded: a few lines of stderr before the pause
                line = await proc.stderr.readline()
                seen += line
                if not line or line.startswith(b"konsole-export-pause"):
                    break
        assert f"konsole-export-pause {point}".encode() in seen, seen.decode()
        proc.send_signal(sig)
        rest = await asyncio.wait_for(proc.stderr.read(), 30)
        out = await asyncio.wait_for(stdout_task, 30)
        await asyncio.wait_for(proc.wait(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, out, seen + rest


async def test_signals_leave_no_output_file_and_whole_rows(world: World, tmp_path: Path) -> None:
    table = await _big_table(world)
    # Uninterrupted, the same run completes (the hooks do not break the export).
    done = tmp_path / "done.parquet"
    code, _, err = await _cli(world, table, "--limit", str(BIG_ROWS), "-o", str(done))
    assert code == 0, err.decode()
    assert pq.read_table(done).num_rows == BIG_ROWS
    done.unlink()

    for point in ("first-row", "mid", "finish"):
        out_file = tmp_path / f"rows-{point}.parquet"
        code, out, err = await _signalled(world, table, point, signal.SIGINT, ["-o", str(out_file)])
        assert code == 130, err.decode()
        lines = err.decode().splitlines()
        assert lines[-1].startswith("konsole: error: interrupted by SIGINT"), lines
        assert out == b""
        assert list(tmp_path.iterdir()) == [], (point, list(tmp_path.iterdir()))

    code, _, err = await _signalled(
        world, table, "mid", signal.SIGTERM, ["-o", str(tmp_path / "rows.csv")]
    )
    assert code == 143, err.decode()
    assert "interrupted by SIGTERM" in err.decode()
    assert list(tmp_path.iterdir()) == []

    # stdout: the rows written before the signal are whole JSON lines
    code, out, err = await _signalled(world, table, "mid", signal.SIGINT, ["--format", "jsonl"])
    assert code == 130, err.decode()
    text = out.decode()
    assert text and text.endswith("\n")
    rows = [json.loads(line) for line in text.splitlines()]
    assert 0 < len(rows) < BIG_ROWS and len({r["id"] for r in rows}) == len(rows)
    assert f"stopped after {len(rows)} row(s) to stdout" in err.decode()

"""konsole.export: column-wise rendering, the format writers, format resolution, the
temporary file and its rename, and I/O failures (read-only directory, full disk)."""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from fluss_proto.types import parse_data_type
from konsole.errors import ExitCode
from konsole.export import (
    ExportFormatError,
    ExportIOError,
    open_output,
    resolve_format,
)
from konsole.export.stream import make_writer
from konsole.export.writers import TextTableWriter
from konsole.render.arrow import cell_text_array, json_rows_text, json_text, plain_text
from konsole.render.values import cell_text, json_values, right_aligned, scalar_text, text_table
from tests._testutil.scan import FakeScanCluster, kv_cluster
from tests._testutil.system_tools import need_binary

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parents[2]
LTZ3 = parse_data_type({"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 3})
LTZ9 = parse_data_type({"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 9})

# (column, Arrow array, Fluss type or None): every kind a preview holds, with NULLs.
COLUMNS: list[tuple[str, pa.Array, Any]] = [
    ("b", pa.array([True, False, None, True]), None),
    ("i8", pa.array([-128, 127, None, 0], pa.int8()), None),
    ("i64", pa.array([-(2**63), 2**63 - 1, None, 5], pa.int64()), None),
    ("f32", pa.array([0.1, -3.5, None, float("inf")], pa.float32()), None),
    ("f64", pa.array([float("nan"), float("-inf"), None, 0.25]), None),
    (
        "dec",
        pa.array(
            [Decimal("-1.50"), Decimal("0.01"), None, Decimal("99999999.99")], pa.decimal128(10, 2)
        ),
        None,
    ),
    (
        "dec38",
        pa.array(
            [
                Decimal("0.0000001000"),
                Decimal("-9999999999999999999999999999.9999999999"),
                None,
                Decimal("0"),
            ],
            pa.decimal128(38, 10),
        ),
        None,
    ),
    ("s", pa.array(["plain", 'q"uote,comma', None, "tab\tnl\n\x01 ünï"]), None),
    ("empty", pa.array(["", "x" * 60, None, "a\\b"]), None),
    ("bytes", pa.array([b"\x00\xff", b"", None, b"abc"], pa.binary()), None),
    ("bin4", pa.array([b"\x00\x01\x02\x03", b"abcd", None, b"\xff" * 4], pa.binary(4)), None),
    ("date", pa.array([0, -719162, None, 2932896], pa.date32()), None),
    ("t0", pa.array([0, 86399, None, 5], pa.time32("s")), None),
    ("t3", pa.array([3_723_004, 0, None, 1], pa.time32("ms")), None),
    ("t9", pa.array([1, 0, None, 86_399_999_999_999], pa.time64("ns")), None),
    (
        "ts3",
        pa.array([0, -1, None, 253402300799999], pa.timestamp("ms")),
        None,
    ),
    (
        "ts9",
        pa.array([1_700_000_000_123_456_789, -1, None, 0], pa.timestamp("ns")),
        None,
    ),
    ("ltz3", pa.array([0, -2208988800000, None, 1], pa.timestamp("ms")), LTZ3),
    ("ltz9", pa.array([5, -1, None, 0], pa.timestamp("ns")), LTZ9),
    ("arr", pa.array([[1, None], [], None, [3]], pa.list_(pa.int32())), None),
    (
        "arr_ts",
        pa.array([[0], None, [None], []], pa.list_(pa.timestamp("us"))),
        parse_data_type(
            {
                "type": "ARRAY",
                "element_type": {"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 6},
            }
        ),
    ),
    (
        "map",
        pa.array([[("a", 1)], [], None, [('k"', None)]], pa.map_(pa.string(), pa.int64())),
        None,
    ),
    (
        "row",
        pa.array(
            [{"x": 1, "t": 0}, {"x": None, "t": None}, None, {"x": -1, "t": 1}],
            pa.struct([("x", pa.int8()), ("t", pa.timestamp("us"))]),
        ),
        None,
    ),
]


def _table() -> tuple[pa.Table, dict[str, Any]]:
    fields = [
        pa.field(name, arr.type).with_metadata({b"fluss.type": str(dt or arr.type).encode()})
        for name, arr, dt in COLUMNS
    ]
    table = pa.Table.from_arrays([arr for _, arr, _ in COLUMNS], schema=pa.schema(fields))
    types = {name: dt for name, _, dt in COLUMNS if dt is not None}
    return table, types


def _same(got: Any, want: Any) -> bool:
    """JSON values equal, floats by value (the column-wise text may write 1e-7 for 1e-07)."""
    if isinstance(want, float) and isinstance(got, (int, float)):
        return float(got) == want
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(want, dict) and isinstance(got, dict):
        return got.keys() == want.keys() and all(_same(got[k], want[k]) for k in want)
    return bool(got == want)


# =========================================================================== rendering


@pytest.mark.parametrize(("name", "arr", "dt"), COLUMNS, ids=[c[0] for c in COLUMNS])
def test_column_wise_rendering_matches_the_value_by_value_rules(
    name: str, arr: pa.Array, dt: Any
) -> None:
    want = json_values(arr, dt)
    got = [json.loads(text) for text in json_text(arr, dt).to_pylist()]
    assert _same(got, want), (got, want)
    plain = plain_text(arr, dt).to_pylist()
    for g, w in zip(plain, want, strict=True):
        if w is None:
            assert g is None
        elif isinstance(w, float):
            assert float(g) == w
        else:
            assert g == scalar_text(w)
    if not pa.types.is_floating(arr.type):
        assert cell_text_array(arr, dt).to_pylist() == [cell_text(v) for v in want]
    # a slice renders as the same values (offsets of nested arrays rebased)
    assert _same([json.loads(t) for t in json_text(arr.slice(1, 2), dt).to_pylist()], want[1:3])


def test_rendering_details_a_reader_depends_on() -> None:
    assert plain_text(pa.array([Decimal("0.0000001000")], pa.decimal128(38, 10))).to_pylist() == [
        "0.0000001000"
    ]
    assert plain_text(pa.array([-1], pa.timestamp("ns"))).to_pylist() == [
        "1969-12-31T23:59:59.999999999"
    ]
    assert plain_text(pa.array([0], pa.timestamp("ms")), LTZ3).to_pylist() == [
        "1970-01-01T00:00:00.000Z"
    ]
    assert plain_text(pa.array([b"\x00\xff"])).to_pylist() == ["AP8="]
    assert json_text(pa.array([float("nan"), 1.5, None])).to_pylist() == ['"NaN"', "1.5", "null"]
    maps = pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int64()))
    assert plain_text(maps).to_pylist() == ['[["a",1]]']


# =========================================================================== writers


def _write(fmt: str, table: pa.Table, types: dict[str, Any], chunk: int = 2) -> bytes:
    sink = io.BytesIO()
    writer = make_writer(fmt, sink, table.schema, table="db.t", types=types)
    for start in range(0, table.num_rows, chunk):
        writer.write(table.slice(start, chunk))
    writer.finish(None)
    return sink.getvalue()


def _want_rows(table: pa.Table, types: dict[str, Any]) -> list[dict[str, Any]]:
    columns = [
        json_values(table.column(n).combine_chunks(), types.get(n)) for n in table.column_names
    ]
    return [
        dict(zip(table.column_names, values, strict=True)) for values in zip(*columns, strict=True)
    ]


def test_jsonl_and_json_rows_are_today_s_json_rendering() -> None:
    table, types = _table()
    want = _want_rows(table, types)
    lines = _write("jsonl", table, types).decode().splitlines()
    assert len(lines) == table.num_rows
    assert _same([json.loads(line) for line in lines], want)

    doc = json.loads(_write("json", table, types))
    assert doc["table"] == "db.t" and _same(doc["rows"], want)
    assert {c["name"]: c["type"] for c in doc["columns"]}["ltz3"] == "TIMESTAMP_LTZ(3)"
    empty = json.loads(_write("json", table.slice(0, 0), types))
    assert empty["rows"] == []


def test_csv_values_are_today_s_text_and_null_differs_from_empty() -> None:
    table, types = _table()
    text = _write("csv", table, types).decode()
    assert text.startswith(",".join(table.column_names) + "\n")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == table.column_names and len(rows) == table.num_rows + 1
    want = _want_rows(table, types)
    for got_row, want_row in zip(rows[1:], want, strict=True):
        for name, got in zip(table.column_names, got_row, strict=True):
            w = want_row[name]
            if w is None:
                assert got == "", name
            elif isinstance(w, float):
                assert float(got) == w, name
            else:
                assert got == scalar_text(w), name
    # pyarrow's "needed" quoting: an empty string is quoted, NULL is an empty field
    line = text.splitlines()[1]
    assert ',"",' in line  # column "empty", row 0


def test_text_table_is_today_s_table_and_grows_columns_with_a_repeated_header() -> None:
    table, types = _table()
    small = table.select(["i64", "s", "dec", "ts9", "arr", "row"])
    want = text_table(small.column_names, _want_rows(small, types), right_aligned(small.schema))
    assert _write("table", small, types).decode().splitlines() == want

    sink = io.BytesIO()
    writer = TextTableWriter(sink, pa.schema([pa.field("v", pa.string())]))
    writer.block_rows = 2
    for values in (["a", "b"], ["ccc"], ["dd"]):
        writer.write(pa.table({"v": values}))
    writer.finish()
    assert sink.getvalue().decode().splitlines() == [
        "v",
        "-",
        "a",
        "b",
        "",
        "v",
        "---",
        "ccc",
        "dd",
    ]
    sink = io.BytesIO()
    make_writer("table", sink, pa.schema([pa.field("n", pa.int64())])).finish()
    assert sink.getvalue() == b"n\n-\n"


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_parquet_and_arrow_read_back_with_fluss_types_in_field_metadata(
    fmt: str, tmp_path: Path
) -> None:
    table, types = _table()
    path = tmp_path / f"out.{fmt}"
    with open_output(path) as out:
        writer = make_writer(fmt, out.sink, table.schema, table="db.t", types=types)
        for start in range(0, table.num_rows, 3):
            writer.write(table.slice(start, 3))
        writer.finish()
        out.commit()
    back = pq.read_table(path) if fmt == "parquet" else pa.ipc.open_file(path).read_all()
    assert back.schema.metadata[b"fluss.table"] == b"db.t"
    assert back.schema.field("ltz3").metadata[b"fluss.type"] == b"TIMESTAMP_LTZ(3)"
    if fmt == "arrow":
        assert back.schema.equals(table.schema)
        assert _nan_free(back.to_pylist()) == _nan_free(table.to_pylist())
    else:  # Parquet has no TIME in seconds: TIME(0) reads back as milliseconds
        assert back.schema.field("t0").type == pa.time32("ms")
        assert _nan_free(back.cast(table.schema).to_pylist()) == _nan_free(table.to_pylist())


def _nan_free(value: Any) -> Any:
    """NaN made comparable (Parquet may keep another NaN bit pattern)."""
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, list):
        return [_nan_free(v) for v in value]
    if isinstance(value, dict):
        return {k: _nan_free(v) for k, v in value.items()}
    return value


# =========================================================================== formats


@pytest.mark.parametrize(
    ("fmt", "path", "want"),
    [
        (None, None, "table"),
        ("csv", None, "csv"),
        ("jsonl", None, "jsonl"),
        (None, "x.csv", "csv"),
        (None, "x.JSONL", "jsonl"),
        (None, "x.ndjson", "jsonl"),
        (None, "x.json", "json"),
        (None, "x.parquet", "parquet"),
        (None, "x.feather", "arrow"),
        (None, "x.arrow", "arrow"),
        ("csv", "x.txt", "csv"),
        ("arrow", "dump.bin", "arrow"),
    ],
)
def test_format_from_flag_or_suffix(fmt: str | None, path: str | None, want: str) -> None:
    assert resolve_format(fmt, path) == want


@pytest.mark.parametrize(
    ("fmt", "path", "says"),
    [
        (None, "x.txt", "suffix"),
        (None, "noext", "suffix"),
        ("csv", "x.parquet", "contradicts"),
        ("parquet", None, "needs a file"),
        ("arrow", None, "needs a file"),
        ("xml", None, "unknown format"),
    ],
)
def test_bad_format_or_suffix_is_refused(fmt: str | None, path: str | None, says: str) -> None:
    with pytest.raises(ExportFormatError, match=says):
        resolve_format(fmt, path)


# =========================================================================== temp file


def _files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def test_file_appears_under_its_name_only_when_committed(tmp_path: Path) -> None:
    final = tmp_path / "rows.csv"
    with open_output(final) as out:
        out.sink.write(b"a\n")
        out.sink.flush()
        (temp,) = _files(tmp_path)
        assert temp.startswith(".rows.csv.") and temp.endswith(".partial")
        assert not final.exists()
        out.commit()
    assert _files(tmp_path) == ["rows.csv"] and final.read_bytes() == b"a\n"
    mask = os.umask(0)
    os.umask(mask)
    assert final.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_failed_export_leaves_nothing_and_keeps_an_older_file(tmp_path: Path) -> None:
    final = tmp_path / "rows.csv"
    final.write_bytes(b"old\n")
    with pytest.raises(RuntimeError), open_output(final) as out:
        out.sink.write(b"half")
        raise RuntimeError("interrupted")
    assert _files(tmp_path) == ["rows.csv"] and final.read_bytes() == b"old\n"


def test_missing_directory_is_an_io_error(tmp_path: Path) -> None:
    with (
        pytest.raises(ExportIOError, match="no such directory") as info,
        open_output(tmp_path / "no" / "x.csv"),
    ):
        pass
    assert info.value.exit_code == ExitCode.IO_ERROR == 74
    with pytest.raises(ExportIOError, match="directory"), open_output(tmp_path):
        pass


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("suffix", ["jsonl", "parquet", "arrow", "csv"])
def test_full_disk_is_an_io_error_and_nothing_is_left(
    suffix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = kv_cluster()
    calls: list[Any] = []

    def full(*_a: Any, **_k: Any) -> Any:
        calls.append(1)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    import konsole.export.writers as writers

    real = writers.RowWriter.write

    def write(self: Any, data: pa.Table) -> None:
        real(self, data)
        full()

    monkeypatch.setattr(writers.RowWriter, "write", write)
    out = tmp_path / f"rows.{suffix}"
    res = _cli(fake, monkeypatch, "db.t", "--limit", "5000", "--output", str(out))
    assert res.exit_code == ExitCode.IO_ERROR, res.output
    # one line, and no finaliser complaining later about a closed file
    assert calls and res.stderr.strip().splitlines() == [
        f"konsole: error: cannot write {out}: No space left on device"
    ]
    assert _files(tmp_path) == []


def test_read_only_directory_is_refused_before_connecting() -> None:
    command = [sys.executable, "-m", "konsole.cli", "preview", "db.t"]
    command += ["--bootstrap", "127.0.0.1:1", "--timeout", "2"]
    prefix: list[str] = []
    if os.geteuid() == 0:  # root writes anywhere: run the CLI as nobody
        prefix = [need_binary("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups"]
    with tempfile.TemporaryDirectory(dir="/tmp") as top:  # reachable for nobody
        os.chmod(top, 0o755)
        ro = Path(top) / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        try:
            out = ro / "rows.parquet"
            proc = subprocess.run(
                [*prefix, *command, "--output", str(out)],
                capture_output=True,
                timeout=60,
                cwd=REPO,
                check=False,
            )
            assert proc.returncode == 74, proc.stderr
            assert proc.stderr.decode().splitlines() == [
                f"konsole: error: cannot write {out}: Permission denied"
            ]
            assert _files(ro) == []
        finally:
            ro.chmod(0o755)


# =========================================================================== CLI


def _cli(fake: FakeScanCluster, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    from konsole.cli import main as cli

    connects: list[int] = []

    async def connect(*_a: Any, **_k: Any) -> Any:
        connects.append(1)

        async def close() -> None:
            return None

        fake.close = close  # type: ignore[attr-defined]
        return fake

    monkeypatch.setattr("fluss_proto.client.FlussClient.connect", connect)
    res = CliRunner().invoke(cli.main, ["preview", *args])
    res.connects = len(connects)  # type: ignore[attr-defined]
    return res


def test_cli_writes_every_format_to_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for suffix in ("csv", "jsonl", "json", "parquet", "arrow", "feather"):
        path = tmp_path / f"rows.{suffix}"
        res = _cli(kv_cluster(), monkeypatch, "db.t", "-o", str(path))
        assert res.exit_code == 0, res.output
        assert res.stdout == "" and f"wrote 30 row(s) to {path}" in res.stderr
    assert sorted(_files(tmp_path)) == sorted(
        f"rows.{s}" for s in ("csv", "jsonl", "json", "parquet", "arrow", "feather")
    )
    back = pq.read_table(tmp_path / "rows.parquet")
    assert back.num_rows == 30 and back.column("id").to_pylist()[:3] == [0, 1, 2]
    assert back.schema.field("amount").metadata[b"fluss.type"] == b"DECIMAL(10, 2)"
    jsonl = [json.loads(x) for x in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert jsonl[0] == {
        "id": 0,
        "name": "n0",
        "amount": "0.00",
        "ts": "2024-01-01T00:00:00.000000",
        "_bucket": 0,
    }


def test_cli_jsonl_on_stdout_and_arrival_order(monkeypatch: pytest.MonkeyPatch) -> None:
    res = _cli(kv_cluster(), monkeypatch, "db.t", "--format", "jsonl", "--limit", "7")
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in res.stdout.splitlines()]
    # bucket order: a fair share of what is left, bucket by bucket
    assert [r["id"] for r in rows] == [0, 1, 2, 100, 101, 200, 201]
    res = _cli(kv_cluster(), monkeypatch, "db.t", "--format", "jsonl", "--arrival-order")
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 30


def test_cli_refuses_bad_formats_before_connecting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for args in (
        ["-o", str(tmp_path / "x.txt")],
        ["--format", "csv", "-o", str(tmp_path / "x.parquet")],
        ["--format", "parquet"],
        ["--format", "xml"],
    ):
        res = _cli(kv_cluster(), monkeypatch, "db.t", *args)
        assert res.exit_code == 3 and res.connects == 0, (args, res.output)
    assert _files(tmp_path) == []


def test_export_preview_writes_a_collected_preview_in_one_call(tmp_path: Path) -> None:
    import asyncio

    from fluss_proto.scan import preview_table
    from konsole.export.collected import export_preview

    preview = asyncio.run(preview_table(kv_cluster(), "db.t", limit=100))
    result = export_preview(preview, tmp_path / "rows.feather")
    assert result.rows == 30 and result.path == tmp_path / "rows.feather"
    back = pa.ipc.open_file(tmp_path / "rows.feather").read_all()
    assert back.equals(preview.table)
    doc = export_preview(preview, tmp_path / "rows.json")
    assert json.loads((tmp_path / "rows.json").read_text())["report"]["rows_returned"] == 30
    assert doc.rows == 30 and _files(tmp_path) == ["rows.feather", "rows.json"]


def test_datetime_sanity() -> None:  # the rendering is UTC whatever the local zone
    ts = pa.array([datetime(2024, 1, 1, 12, 30)], pa.timestamp("us"))
    assert plain_text(ts).to_pylist() == ["2024-01-01T12:30:00.000000"]
    assert json_rows_text(pa.table({"t": ts}), {}).to_pylist() == [
        '{"t":"2024-01-01T12:30:00.000000"}\n'
    ]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_stream_exits_130_or_143_and_leaves_no_file(
    sig: signal.Signals, code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from tests._testutil.scan import FakeScanCluster

    fake = FakeScanCluster(pk=True)
    for b in range(3):
        fake.put_rows((None, b), [b * 100 + i for i in range(50)])
    # bucket 1 stops answering after two pages: 50 + 8 rows are written, then it waits
    fake.hang_scan_kv_at_seq[(None, 1)] = 2

    async def connect(*_a: Any, **_k: Any) -> Any:
        async def close() -> None:
            return None

        fake.close = close  # type: ignore[attr-defined]
        # The signal comes half a second after the stream starts waiting on bucket 1 (time
        # to write the 58 rows it has; counted from the connect, a starved run had 24).
        loop = asyncio.get_running_loop()
        fake.on_scan_kv_hang = lambda: loop.call_later(0.5, os.kill, os.getpid(), sig)
        return fake

    from konsole.cli import main as cli

    monkeypatch.setattr("fluss_proto.client.FlussClient.connect", connect)
    out = tmp_path / "rows.csv"
    res = CliRunner().invoke(
        cli.main, ["preview", "db.t", "--limit", "5000", "--timeout", "30", "-o", str(out)]
    )
    assert res.exit_code == code, res.output
    assert res.stderr.splitlines() == [
        f"konsole: error: interrupted by {sig.name}: stopped after 58 row(s); {out} not written"
    ]
    assert _files(tmp_path) == [] and not fake.sessions  # open sessions were closed

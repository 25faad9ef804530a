"""Each command imports what it uses and no more (docs/performance.md, start-up).

Every case runs ``konsole`` in a fresh interpreter (click's ``main(..., standalone_mode=False)``,
as the entry point does) and reads ``sys.modules`` afterwards, so a module imported at the
top of the wrong file shows up here instead of in every cron job's run time.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests._testutil.unstarved import CHILD_SAFETY_NET_S

#: Runs konsole's group with argv[2:] and writes the modules it imported to argv[1].
CHILD = textwrap.dedent(
    """
    import json, sys
    from konsole.cli.main import main
    try:
        main(sys.argv[2:], prog_name="konsole", standalone_mode=False)
    except SystemExit:
        pass
    loaded = sorted(n for n, m in sys.modules.items() if m is not None)
    with open(sys.argv[1], "w") as f:
        json.dump(loaded, f)
    """
)

#: Never wanted by a command that does not open the console, preview or run a cluster.
HEAVY = (
    "textual",
    "rich",
    "pygments",
    "pyarrow",
    "numpy",
    "konsole.ui",
    "konsole.export",
    "konsole.render",
    "konsole.localcluster",
    "konsole.cli.preview",
    "konsole.cli.cluster",
    "konsole.cli.history",
    "store",
    "sqlite3",
)


#: The one part of konsole.render `konsole check` needs: its answer's text.
CHECK_RENDER = frozenset({"konsole.render", "konsole.render.check"})
#: The one part of store a command line needs before its work: the file-kind rule for the
#: paths it is given (store's package loads its modules, and sqlite3, on first use).
STORE_PATHS = frozenset({"store", "store.file_kinds"})

#: Cut from `konsole check`'s import set (issue 22): the log readers and their parser, which
#: only the incident evidence uses, and tomllib when there is no config file to read.
CHECK_CUT = ("konsole.collect.logs.reading", "konsole.model.logs", "tomllib")


#: The -t/--timeout given to the commands run here. These tests are about imports, not time,
#: and they run at nice 19 beside the live tests: a starved interpreter took over 5 s to
#: start and import, and check's watchdog (which counts from the process start) answered
#: "no answer within the 5s timeout" and ended it before the modules were listed. Against
#: a closed port or a fake server on loopback the answer still comes in well under a
#: second when the process gets the CPU; the suite's per-test bound (300 s) stays above.
GENEROUS_TIMEOUT = "200"


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def imported(args: list[str], tmp_path: Path, stdout: list[str] | None = None) -> set[str]:
    """The modules ``konsole ARGS`` imported (its stdout's lines added to ``stdout``)."""
    out = tmp_path / "modules.json"
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    env.pop("FLUSS_BOOTSTRAP", None)
    env.pop("KONSOLE_CONFIG", None)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(out), *args],
        capture_output=True,
        text=True,
        timeout=CHILD_SAFETY_NET_S,  # above GENEROUS_TIMEOUT
        env=env,
        check=False,
    )
    assert proc.returncode == 0 and out.exists(), proc.stderr
    if stdout is not None:
        stdout += proc.stdout.splitlines()
    return set(json.loads(out.read_text()))


def _under(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in packages or m.startswith(packages))


def test_check_imports_the_check_and_nothing_of_the_console(tmp_path: Path) -> None:
    port = _closed_port()
    modules = imported(
        ["check", "--bootstrap", f"127.0.0.1:{port}", "--timeout", GENEROUS_TIMEOUT], tmp_path
    )
    # it did look (a client, the judgement) ...
    assert {"konsole.cli.check", "fluss_proto.client", "konsole.model.check"} <= modules
    # ... its answer's text (konsole.render.check alone of konsole.render) ...
    assert modules >= CHECK_RENDER
    # ... and imported nothing of the console, the preview, the export or the runner
    assert _under(modules - CHECK_RENDER, HEAVY) == []
    # no metrics endpoint named: no HTTP client, no Prometheus parser
    assert _under(modules, ("httpx", "httpcore", "prometheus_client")) == []
    # a profile's log sources are declarations (konsole.collect.logs.sources): no log reader,
    # no log line parser; no config file: no TOML parser
    assert "konsole.collect.logs.sources" in modules
    assert _under(modules, CHECK_CUT) == []


def test_check_with_metrics_endpoints_imports_httpx_without_its_command_line(
    tmp_path: Path,
) -> None:
    port, metrics = _closed_port(), _closed_port()
    config = tmp_path / "config.toml"
    config.write_text(
        f'[profiles.p]\nbootstrap = "127.0.0.1:{port}"\n'
        f'metrics = ["http://127.0.0.1:{metrics}/metrics"]\n'
    )
    modules = imported(
        ["check", "--profile", "p", "--config", str(config), "-t", GENEROUS_TIMEOUT], tmp_path
    )
    assert {"konsole.cli.check", "konsole.collect.cluster.metrics", "httpx"} <= modules
    assert _under(modules - CHECK_RENDER - STORE_PATHS, HEAVY) == []
    assert "httpx._main" not in modules  # httpx's command line, which pulls rich and pygments
    assert "tomllib" in modules  # a config file is read ...
    assert (
        _under(modules, ("konsole.collect.logs.reading", "konsole.model.logs")) == []
    )  # ... no logs
    assert _under(modules, ("prometheus_client",)) == []  # the reporter's lines need no parser


def test_check_help_imports_no_client(tmp_path: Path) -> None:
    modules = imported(["check", "--help"], tmp_path)
    assert "konsole.cli.check" in modules
    assert _under(modules, (*HEAVY, "fluss_proto", "httpx", "konsole.collect", "asyncio")) == []


def test_version_imports_no_command(tmp_path: Path) -> None:
    modules = imported(["--version"], tmp_path)
    assert "konsole.cli.main" in modules
    ours = sorted(m for m in modules if m.split(".")[0] in ("konsole", "fluss_proto", "store"))
    # the group, the one way of failing, how a group lists its commands, its options (the
    # console's, declared on it) and what they need
    assert ours == [
        "konsole",
        "konsole.cli",
        "konsole.cli.console",
        "konsole.cli.exits",
        "konsole.cli.listing",
        "konsole.cli.main",
        "konsole.cli.options",
        "konsole.cli.ui",
        "konsole.errors",
        "konsole.model",
        "konsole.model.timefmt",
    ]
    assert _under(modules, (*HEAVY, "httpx", "platformdirs", "asyncio")) == []


def test_preview_imports_no_health_model(tmp_path: Path) -> None:
    """A preview reads a profile (which holds health thresholds) but never judges health: the
    rules, the snapshot and placement model are not on the way to its first row."""
    port = _closed_port()
    args = ["preview", "db.t", "--bootstrap", f"127.0.0.1:{port}", "--limit", "20"]
    modules = imported([*args, "--format", "jsonl", "--timeout", GENEROUS_TIMEOUT], tmp_path)
    # it got as far as the scan and the writer (it imports them before connecting) ...
    assert {"konsole.collect.profiles", "fluss_proto.scan", "konsole.export.stream"} <= modules
    assert "konsole.model.thresholds" in modules
    # ... without the health rules and what only they need
    cut = ("konsole.model.health", "konsole.model.snapshot", "konsole.model.placement")
    assert _under(modules, (*cut, "konsole.model.storage", "konsole.model.events")) == []
    assert _under(modules, ("textual", "konsole.ui", "konsole.localcluster", "httpx")) == []


def _log_table() -> Any:
    from tests._testutil.scan import FakeScanCluster

    fake = FakeScanCluster(pk=False)
    fake.log_compression = "zstd"
    for key in fake.data:
        fake.append_log(key, [key[1] * 100 + i for i in range(30)])
        fake.append_log(key, [key[1] * 100 + i for i in range(30, 40)], change_types=[1, 2] * 5)
    return fake


def _pk_table() -> Any:
    from tests._testutil.scan import kv_cluster

    return kv_cluster(scan_kv_nodes=set())  # 0.9 servers: LimitScan value batches


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "table"])
@pytest.mark.parametrize("table", [_pk_table, _log_table], ids=["pk", "log"])
def test_a_text_preview_imports_neither_pyarrow_nor_numpy(
    table: Any, fmt: str, tmp_path: Path
) -> None:
    """The text formats of a table of plain columns are read and written without pyarrow
    (konsole.export.plain): a real preview process against fake servers on loopback."""
    from tests._testutil.scan_servers import serve_scan_cluster

    lines: list[str] = []
    with serve_scan_cluster(table()) as bootstrap:
        args = ["preview", "db.t", "--bootstrap", bootstrap, "--limit", "20", "--format", fmt]
        modules = imported([*args, "--timeout", GENEROUS_TIMEOUT], tmp_path, lines)
    assert len(lines) == {"jsonl": 20, "csv": 21, "table": 22}[fmt], lines
    assert {"fluss_proto.scan.rows", "konsole.export.plain"} <= modules
    assert _under(modules, ("pyarrow", "numpy", "pandas", "konsole.export.writers")) == []


@pytest.mark.parametrize("command", ["preview", "watch", "record", "ui", "history", "cluster"])
def test_help_of_a_command_imports_no_client_and_no_arrow(command: str, tmp_path: Path) -> None:
    modules = imported([command, "--help"], tmp_path)
    assert f"konsole.cli.{command}" in modules
    assert _under(modules, ("pyarrow", "numpy", "textual", "rich", "fluss_proto.client")) == []
    assert _under(modules, ("konsole.ui", "konsole.export.writers", "httpx")) == []


#: Writes a table of many types in every text format, with pandas refused as a preview
#: refuses it (argv[1] == "refuse") or not; prints whether pandas got imported, and the output.
WRITE = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from datetime import date, datetime, timezone
    from decimal import Decimal
    from konsole.cli.preview import _without_pandas

    refuse = _without_pandas() if sys.argv[1] == "refuse" else contextlib.nullcontext()
    with refuse:
        import pyarrow as pa
        from konsole.export.stream import make_writer

        table = pa.table({
            "id": pa.array([1, 2, None], pa.int64()),
            "f": pa.array([1.5, float("nan"), None], pa.float64()),
            "s": pa.array(["a", 'q"\\n', None], pa.string()),
            "d": pa.array([Decimal("-1.50"), Decimal("0.00"), None], pa.decimal128(10, 2)),
            "ts9": pa.array([datetime(2024, 1, 2, 3, 4, 5, 6), None, None], pa.timestamp("ns")),
            "ltz": pa.array(
                [datetime(2024, 1, 2, tzinfo=timezone.utc), None, None], pa.timestamp("us", "UTC")
            ),
            "day": pa.array([date(2024, 6, 1), None, None], pa.date32()),
            "b": pa.array([b"\\x00\\x01", None, b""], pa.binary()),
            "l": pa.array([[1, 2], None, []], pa.list_(pa.int32())),
            "m": pa.array([[("k", 1)], None, []], pa.map_(pa.string(), pa.int64())),
            "r": pa.array([{"x": 1, "y": "z"}, None, {"x": None, "y": None}],
                          pa.struct([("x", pa.int32()), ("y", pa.string())])),
            "ok": pa.array([True, False, None], pa.bool_()),
        })
        out = {}
        for fmt in ("table", "json", "jsonl", "csv"):
            sink = io.BytesIO()
            writer = make_writer(fmt, sink, table.schema, table="db.t")
            writer.write(table)
            writer.finish(None)
            out[fmt] = sink.getvalue().decode()
    print(json.dumps({"pandas": "pandas" in sys.modules, "out": out}))
    """
)


def _write(mode: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", WRITE, mode], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def test_a_preview_writes_the_same_rows_without_pandas() -> None:
    """pyarrow imports pandas (0.5 s) when installed; a preview refuses it, and every text
    format comes out the same as with pandas."""
    if importlib.util.find_spec("pandas") is None:
        pytest.skip("pandas is not installed here: nothing to refuse")
    refused, usual = _write("refuse"), _write("usual")
    assert (refused["pandas"], usual["pandas"]) == (False, True)
    assert refused["out"] == usual["out"]

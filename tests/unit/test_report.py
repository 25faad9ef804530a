"""`konsole history report`: a history written by the real recorder (with a log source) as
HTML and Markdown; an empty window; bad windows."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from konsole.cli.main import main
from konsole.collect.logs.reading import FileSource, LogConfig
from konsole.report import report_command
from tests._testutil.builders import T0, snap, table, view
from tests._testutil.judging import JudgingRecorder


def local_line(at: float, level: str, text: str) -> str:
    stamp = datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
    return f"{stamp} {level:<5} TabletServer [main] - {text}"


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """Three servers, then tablet-server 3 leaves at T0 + 30 with its log saying why."""
    log = tmp_path / "ts3.log"
    log.write_text(
        "\n".join(
            [
                local_line(T0 + 25, "WARN", "Disk <full> & failing"),
                local_line(T0 + 28, "INFO", "Shutting down the tablet server"),
                'password="hunter2" in a stray line',
            ]
        )
        + "\n"
    )
    path = tmp_path / "h.sqlite"
    r = JudgingRecorder(
        path,
        say=lambda s: None,
        clock=lambda: T0 + 100,
        logs=LogConfig(servers={"tablet-server 3": FileSource(str(log))}),
    )
    r.open()
    keep = table("db.keep", 1, [5, 5])
    for seq, (offsets, servers) in enumerate(
        [([5, 5], (1, 2, 3)), ([50, 60], (1, 2, 3)), ([100, 120], (1, 2, 3)), ([110, 125], (1, 2))]
    ):
        keep = table("db.keep", 1, offsets)
        r.record(snap(view(servers, [keep]), seq=seq + 1, t=T0 + 10 * seq))
    r.close()
    return path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_the_html_report_holds_plots_events_and_the_log_excerpt(
    history: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.html"
    code, text = run(
        "history", "report", "--history", str(history), "--around", str(T0 + 30), "-o", str(out)
    )
    assert code == 0, text
    assert "report written to" in text and "1 log excerpts" in text
    page = out.read_text()
    assert page.count("<svg") == 5
    # Self-contained: nothing fetched (namespace names are not fetched), nothing run.
    assert not re.search(r'(src|href)="(https?:)?//|url\((?!#)|<link|<script|@import', page)
    # server_left is event 1, drawn on every plot.
    assert len(re.findall(r'id="[a-z]+-\d-event-1-server_left"', page)) >= 5
    assert "tablet-server 3" in page and "Shutting down the tablet server" in page
    assert "Disk &lt;full&gt; &amp; failing" in page and 'class="flag"' in page
    assert "hunter2" not in page
    assert "db.keep" in page


def test_the_markdown_report_writes_its_plots_beside_it(history: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    code, text = run(
        "history",
        "report",
        "--history",
        str(history),
        "--from",
        str(T0 - 5),
        "--to",
        str(T0 + 60),
        "-o",
        str(out),
    )
    assert code == 0, text
    doc = out.read_text()
    plots = sorted(p.name for p in (tmp_path / "r.plots").iterdir())
    assert plots == ["disk.svg", "health.svg", "kv.svg", "placement.svg", "throughput.svg"]
    assert "![Throughput per table (rows/s)](r.plots/throughput.svg)" in doc
    assert "| 1 |" in doc and "server_left" in doc
    assert "```\n" in doc and "Shutting down the tablet server" in doc


def test_a_window_with_no_history_says_so(history: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty.html"
    code, text = run(
        "history", "report", "--history", str(history), "--around", str(T0 - 86400), "-o", str(out)
    )
    assert code == 0, text
    assert "No history in this window" in text
    page = out.read_text()
    assert "No history in this window" in page and "<svg" not in page


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give --around T, or --from T1"),
        (("--around", "now", "--from", "1h"), "give --around T, or --from T1"),
        (("--around", "now", "--to", "1h"), "--to goes with --from"),
        (("--from", "now", "--to", "1h"), "--to must be after --from"),
        (("--around", "yesterday-ish"), "Invalid value for '--around'"),
        (("--around", "now", "--window", "forever"), "Invalid value for '--window'"),
        (("--around", "now", "--window", "-30m"), "Invalid value for '--window'"),
    ],
)
def test_bad_windows_exit_3(
    history: Path, tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    code, text = run(
        "history", "report", "--history", str(history), "-o", str(tmp_path / "x.html"), *args
    )
    assert code == 3 and message in text
    assert not (tmp_path / "x.html").exists()


def test_an_unwritable_output_exits_74(history: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    code, text = run(
        "history",
        "report",
        "--history",
        str(history),
        "--around",
        str(T0),
        "-o",
        str(tmp_path / "file" / "r.html"),
    )
    assert code == 74 and "cannot write the report" in text


def test_the_report_command_of_a_moment() -> None:
    text = report_command(1764610805.5, Path("/var/h story.sqlite"))
    assert text == (
        "konsole history report --history '/var/h story.sqlite' --around 2025-12-01T17:40:05Z "
        "-o konsole-report-20251201-174005.html"
    )

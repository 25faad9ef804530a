"""One history file per cluster, proven on real servers: ``konsole record --bootstrap B`` and
``konsole check --record --bootstrap B`` write the same file, and ``konsole history notes
--bootstrap B`` reads the check's note from it.

No ``--history`` anywhere: the file is the one the rule names, in a temporary user data
dir (platformdirs honours XDG_DATA_HOME). Every process runs with a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def konsole(data_home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "FLUSS_BOOTSTRAP"}
    env["XDG_DATA_HOME"] = str(data_home)
    env["KONSOLE_CONFIG"] = "/nonexistent/konsole-history-path-test.toml"
    return subprocess.run(
        [sys.executable, "-m", "konsole.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=timeout,
        check=False,
    )


def test_record_and_check_write_one_file(bootstrap: str, tmp_path: Path) -> None:
    data_home = tmp_path / "data"
    folder = data_home / "konsole" / "history"

    recorded = konsole(data_home, "record", "--bootstrap", bootstrap, "--count", "1")
    assert recorded.returncode == 0, recorded.stderr
    files = sorted(folder.glob("*.sqlite"))
    assert [f.name for f in files] == [
        f"bootstrap-{bootstrap.split(',')[0].replace(':', '_')}.sqlite"
    ]

    checked = konsole(data_home, "check", "--record", "--bootstrap", bootstrap, "-t", "20")
    # --bootstrap alone has no metrics endpoints: the health may be a WARNING, never worse
    assert checked.returncode in (0, 1), checked.stdout + checked.stderr
    assert checked.stdout.startswith("FLUSS "), checked.stdout
    assert "not recorded" not in checked.stderr, checked.stderr
    assert sorted(folder.glob("*.sqlite")) == files  # the same file, no second one

    notes = konsole(data_home, "history", "notes", "--bootstrap", bootstrap, "--format", "json")
    assert notes.returncode == 0, notes.stderr
    status_line = checked.stdout.splitlines()[0]
    assert [n["text"] for n in json.loads(notes.stdout)] == [f"konsole check: {status_line}"]

    info = konsole(data_home, "history", "info", "--bootstrap", bootstrap, "--format", "json")
    assert info.returncode == 0, info.stderr
    doc = json.loads(info.stdout)
    assert doc["path"] == str(files[0])
    # record's poll, and the check's own (no recorder held the file when it ran)
    assert sum(doc["polls"].values()) == 2, doc

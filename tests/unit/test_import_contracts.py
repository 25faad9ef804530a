"""The import-linter contracts in pyproject.toml fail when a layer is crossed.

`make lint` runs `lint-imports` on the tree as it is (all contracts kept). Here each
contract is shown to break: a copy of the packages gets one forbidden import, and
`lint-imports` run on the copy must name that contract as broken.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

pytestmark = [pytest.mark.timeout(120)]


@pytest.fixture(autouse=True)
def _import_linter_present() -> None:
    """Without lint-imports these tests skip on a developer's machine; CI must run them."""
    if LINT_IMPORTS.exists():
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(
            f"import-linter is not installed ({LINT_IMPORTS}): CI runs these", pytrace=False
        )
    pytest.skip("import-linter is not installed")


def _copy_tree(dest: Path) -> None:
    for package in ("fluss_proto", "store", "konsole"):
        shutil.copytree(
            ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_the_copied_tree_keeps_every_contract(tmp_path: Path) -> None:
    _copy_tree(tmp_path)
    done = _lint(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("fluss_proto/_probe.py", "import store", "fluss_proto imports neither store nor konsole"),
        ("fluss_proto/_probe.py", "import konsole", "fluss_proto imports neither store nor"),
        ("store/_probe.py", "import textual", "store imports neither textual nor konsole"),
        ("store/_probe.py", "import konsole.render.values", "store imports neither textual nor"),
        ("konsole/model/_probe.py", "import store", "konsole.model is pure"),
        ("konsole/model/_probe.py", "import sqlite3", "konsole.model is pure"),
        ("konsole/model/_probe.py", "import httpx", "konsole.model is pure"),
        ("konsole/model/_probe.py", "import konsole.collect.cluster.poller", "layers: "),
        ("konsole/collect/_probe.py", "import konsole.ui.app", "layers: "),
        ("store/_probe.py", "import konsole.model.snapshot", "layers: "),
        ("konsole/collect/_probe.py", "import click", "only konsole.cli imports click"),
        ("konsole/ui/_probe.py", "import click", "only konsole.cli imports click"),
        ("konsole/collect/_probe.py", "import textual", "only konsole.ui imports textual"),
        ("konsole/cli/_probe.py", "import textual.app", "only konsole.ui imports textual"),
        ("konsole/ui/_probe.py", "import konsole.cli.watch", "nothing imports konsole.cli"),
        ("konsole/serve/_probe.py", "import konsole.cli.serve", "nothing imports konsole.cli"),
        ("konsole/serve/_probe.py", "import konsole.ui.app", "layers: "),
        ("konsole/ui/_probe.py", "import konsole.serve.fleet", "layers: "),
        ("konsole/collect/_probe.py", "import konsole.serve.fleet", "layers: "),
        ("konsole/serve/_probe.py", "import click", "only konsole.cli imports click"),
        ("konsole/serve/_probe.py", "import textual", "only konsole.ui imports textual"),
        ("konsole/serve/_probe.py", "import store", "konsole.cli and konsole.serve do not import"),
        (
            "konsole/cli/_probe.py",
            "import store.file_kinds",
            "konsole.cli and konsole.serve do not import store",
        ),
        (
            "konsole/cli/_probe.py",
            "def f() -> None:\n    from store import open_reader",
            "konsole.cli and konsole.serve do not import store",
        ),
        ("konsole/ui/screens/_probe.py", "import store.queries", "konsole.ui imports no store"),
        (
            "konsole/ui/_probe.py",
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from store import HistoryReader",
            "konsole.ui imports no store",
        ),
        (
            "konsole/ui/screens/_probe.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import konsole.ui.app",
            "konsole.ui: only the app imports konsole.ui.app",
        ),
        (
            "konsole/localcluster/_probe.py",
            "from fluss_proto._gen import fluss_rpc_pb2",
            "konsole.localcluster does not reach into fluss_proto._gen",
        ),
        (
            "fluss_proto/records/binary_array.py",
            "from fluss_proto.records import compacted_row",
            "records: row decoders above the nested-value readers",
        ),
        (
            "fluss_proto/records/compacted_fields.py",
            "from fluss_proto.records import columnar",
            "records: row decoders above the nested-value readers",
        ),
        ("konsole/model/_probe.py", "import konsole.render.check", "layers: "),
        (
            "konsole/export/rowwriter.py",
            "from konsole.export import stream",
            "no import circle in konsole",
        ),
        (
            "konsole/ui/screens/events/timeline.py",
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    import konsole.ui.screens.events.screen",
            "no import circle in konsole",
        ),
        (
            "konsole/model/snapshot.py",
            "def _probe() -> None:\n    import konsole.model.check",
            "no import circle in konsole",
        ),
        (  # the circle issue 39 found: the tree rendered names through the parser
            "fluss_proto/filter/tree.py",
            "def _probe() -> None:\n    import fluss_proto.filter.parse",
            "no import circle in fluss_proto",
        ),
        (  # between a package of fluss_proto and a flat module
            "fluss_proto/cluster.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import fluss_proto.gather",
            "no import circle in fluss_proto",
        ),
        (  # inside the client package: its parts import target, never the other way
            "fluss_proto/client/target.py",
            "def _probe() -> None:\n    import fluss_proto.client.retry",
            "no import circle in fluss_proto",
        ),
        (
            "store/rows.py",
            "def _probe() -> None:\n    import store.history",
            "no import circle in store",
        ),
        (  # no circle (connection does not import filter), only a line of the drawing crossed
            "fluss_proto/filter/tree.py",
            "def _probe() -> None:\n    import fluss_proto.connection",
            "fluss_proto: imports point one way",
        ),
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    _copy_tree(tmp_path)
    target = tmp_path / module
    text = target.read_text() if target.exists() else ""
    target.write_text(text + f"\n{line}  # noqa\n")
    done = _lint(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    # A contract's name may wrap onto the next line of the report: read it unwrapped.
    report = done.stdout.replace("\n-> ", " -> ")
    broken = [ln for ln in report.splitlines() if ln.endswith(" BROKEN")]
    assert any(ln.startswith(contract) for ln in broken), done.stdout

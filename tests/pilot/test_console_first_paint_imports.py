"""The console's first frame pays only for the overview (docs/performance.md, the console's
first paint).

A fresh interpreter opens the console as ``konsole ui --no-history`` does (a live feed of a
``--bootstrap`` profile), headless, and reads ``sys.modules`` once the first frame is painted:
the feed, the client, the history, the model and every screen but the overview come after it.
Then it waits (bounded) for the feed's first state, to prove the feed did start after that
frame rather than never.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests._testutil.alertmanager import free_port

#: Opens the console on the bootstrap argv[2] and writes to argv[1] the modules loaded when
#: the first frame is written to the (headless) driver, and after the feed's first state.
CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path

    from konsole.cli.console import live_feed
    from konsole.collect.profiles import resolve_profile
    from konsole.ui.app import KonsoleApp

    out = {}

    def loaded():
        return sorted(n for n, m in sys.modules.items() if m is not None)

    display, start_feed = KonsoleApp._display, KonsoleApp._start_feed

    def probe_display(self, screen, renderable):  # Textual writes a frame to its driver
        display(self, screen, renderable)
        if renderable is not None and "painted" not in out:
            out["painted"] = loaded()
            out["banner"] = str(screen.query_one("#banner").render())

    def probe_start_feed(self):
        out.setdefault("feed_after_paint", "painted" in out)
        start_feed(self)

    # Patched, not subclassed: Textual finds app.tcss beside the app class's own file.
    KonsoleApp._display, KonsoleApp._start_feed = probe_display, probe_start_feed
    profile = resolve_profile(bootstrap=sys.argv[2], env={})
    app = KonsoleApp(live_feed(profile, None, 30.0, None))

    async def first_state(pilot):
        for _ in range(200):  # bounded: the feed publishes its connecting state at once
            if app.live_state is not None:
                break
            await pilot.pause()
        out["started"] = loaded()
        out["state"] = app.live_state is not None
        app.exit()

    app.run(headless=True, size=(100, 30), auto_pilot=first_state)
    Path(sys.argv[1]).write_text(json.dumps(out))
    """
)

#: Not needed to paint the overview before the first state: the feed's machinery (poller,
#: client, recorder, history), the model that judges a poll, the other screens and modals,
#: the operator actions, the tablet servers' table (made with the first state with data) and
#: the other screens' grid.
DEFERRED = (
    "fluss_proto.client",
    "fluss_proto.gather",
    "google.protobuf",
    "pyarrow",
    "numpy",
    "store",
    "sqlite3",
    "httpx",
    "konsole.collect.cluster.poller",
    "konsole.collect.history.recorder",
    "konsole.collect.history.rows",
    "konsole.model.events",
    "konsole.model.health",
    "konsole.model.snapshot",
    "konsole.model.placement",
    "konsole.model.actions",
    "konsole.ui.actions",
    "konsole.ui.cluster_actions",
    "konsole.ui.modals",
    "konsole.ui.screens.cluster_facts",
    "konsole.ui.screens.servers.screen",
    "konsole.ui.screens.tables.screen",
    "konsole.ui.screens.events.screen",
    "konsole.ui.screens.tables.storage",
    "konsole.ui.screens.capacity.screen",
    "konsole.ui.screens.operations.rebalance",
    "konsole.ui.screens.operations.configs",
    "konsole.ui.screens.tables.detail",
    "konsole.ui.screens.servers.detail",
    "konsole.ui.screens.tables.preview",
    "konsole.export",
    "konsole.localcluster",
    "textual.widgets._data_table",
    "konsole.ui.widgets.grid",
    "konsole.ui.widgets.grid_paint",
    "konsole.ui.widgets.grid_rows",
)


def _under(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_first_paint_imports_only_the_overview(tmp_path: Path) -> None:
    out = tmp_path / "modules.json"
    # No history file and no profile file: a --bootstrap profile of a port nothing serves.
    child = [sys.executable, "-c", CHILD, str(out), f"127.0.0.1:{free_port()}"]
    proc = subprocess.run(child, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and out.exists(), proc.stderr
    seen = json.loads(out.read_text())
    painted = seen["painted"]
    # it painted the overview ...
    assert {
        "konsole.ui.app",
        "konsole.ui.screens.overview.screen",
        "textual.widgets._footer",
    } <= set(painted)
    # ... before importing anything of the feed's machinery, the model or the other screens
    assert _under(painted, DEFERRED) == []
    # ... saying what a connecting state says
    assert seen["banner"].startswith("connecting to 127.0.0.1:")
    # and the feed started after that frame: its connecting state came, with its recorder
    assert seen["feed_after_paint"]
    assert seen["state"], "the feed never published a state"
    assert "konsole.collect.history.recorder" in seen["started"]

"""Server detail (tablet server 1; sparklines from the recorded history) in every state,
a stopped server's detail, and at 80x24."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapshots.conftest import SIZE, SMALL, STATES, console_app, settled
from tests._testutil.console import T_STOPPED, story_state


def _open(server_id: int):
    async def run(pilot) -> None:
        pilot.app.open_server(server_id)

    return run


@pytest.mark.parametrize("name", STATES)
def test_server_detail(snap_compare, console_states, name: str) -> None:
    state = console_states[name]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_open(1)))


def test_server_detail_small(snap_compare, console_states) -> None:
    state = console_states["normal"]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SMALL, run_before=settled(_open(1)))


def test_server_detail_of_a_stopped_server(snap_compare, story_path: Path) -> None:
    app = console_app(story_state(story_path, T_STOPPED + 25), story_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_open(3)))


def test_server_detail_with_the_local_log(snap_compare, story_path: Path, tmp_path: Path) -> None:
    from konsole.localcluster.cluster import ClusterDescription, ProcessInfo, SaslInfo

    log = tmp_path / "tablet-server-1.log"
    log.write_text(
        "".join(
            f"2026-05-28 20:27:{i:02d},000 INFO  org.apache.fluss.server.replica.ReplicaManager"
            f" - bucket shop.orders#{i % 4} appended {100 + i} records\n"
            for i in range(30)
        )
    )
    proc = ProcessInfo("tablet-server", 1, 4242, True, {}, str(log), None, "127.0.0.1:9201")
    local = ClusterDescription(
        "0.9.1", None, str(tmp_path), True, "", "", SaslInfo(False), "", 1.0, (proc,)
    )
    state = story_state(story_path, T_STOPPED - 10)
    app = console_app(state, story_path, local=local)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_open(1)))

"""The Rebalance and Config screens and the confirmation modal they (and the Tables screen)
open, in normal, empty, refused and failed states (a fake ClusterActions;
tests/_testutil/actions)."""

from __future__ import annotations

from fluss_proto.model import RebalanceProgress
from snapshots.conftest import SIZE, console_app, settled
from tests._testutil.actions import FakeClusterActions
from tests._testutil.console import settle

_READ_FAILS = "cannot reach the cluster: connection refused by 127.0.0.1:9123"


def _app(console_states, fake: FakeClusterActions, state: str = "normal"):
    chosen = console_states[state]
    app = console_app(chosen, chosen.history.path)
    app.cluster_actions_override = fake
    return app


def _go(*keys: str, until: str | None = None):
    """Press ``keys`` (the screen, then the modal's), wait for the modal's step ``until``."""

    async def run(pilot) -> None:
        for key in keys:
            if key.startswith("="):  # typed into the modal's input, then enter
                pilot.app.screen.query_one("#confirm-input").value = key[1:]
                await pilot.press("enter")
            else:
                await pilot.press(key)
            await pilot.pause()
        if until is not None:
            await settle(pilot, lambda: getattr(pilot.app.screen, "step", None) == until)

    return run


def _snap(snap_compare, app, run) -> bool:
    # The progress poll runs on a timer: its worker group is not waited for twice.
    return snap_compare(app, terminal_size=SIZE, run_before=settled(run))


# =========================================================================== Rebalance


def test_rebalance_progress(snap_compare, console_states) -> None:
    assert _snap(snap_compare, _app(console_states, FakeClusterActions()), _go("R"))


def test_rebalance_empty(snap_compare, console_states) -> None:
    fake = FakeClusterActions(progress_now=RebalanceProgress(None, None))
    assert _snap(snap_compare, _app(console_states, fake, "empty"), _go("R"))


def test_rebalance_failed_read(snap_compare, console_states) -> None:
    fake = FakeClusterActions(read_fails_with=_READ_FAILS)
    assert _snap(snap_compare, _app(console_states, fake), _go("R"))


def test_rebalance_start_plan(snap_compare, console_states) -> None:
    app = _app(console_states, FakeClusterActions())
    assert _snap(snap_compare, app, _go("R", "S", until="plan"))


def test_rebalance_start_refused(snap_compare, console_states) -> None:
    app = _app(console_states, FakeClusterActions(running="rb-7"))
    assert _snap(snap_compare, app, _go("R", "S", until="refused"))


def test_rebalance_start_failed(snap_compare, console_states) -> None:
    fake = FakeClusterActions(
        fail_with="rebalance start cluster: REBALANCE_FAILURE_EXCEPTION (61): already exists"
    )
    app = _app(console_states, fake)
    assert _snap(snap_compare, app, _go("R", "S", "=cluster", until="failed"))


def test_rebalance_actions_off(snap_compare, console_states) -> None:
    fake = FakeClusterActions(unavailable_reason="read-only: profile 'demo' has no `writes = true`")
    assert _snap(snap_compare, _app(console_states, fake), _go("R", "x", until="off"))


# =========================================================================== Config


def test_config_list(snap_compare, console_states) -> None:
    assert _snap(snap_compare, _app(console_states, FakeClusterActions()), _go("C"))


def test_config_empty(snap_compare, console_states) -> None:
    fake = FakeClusterActions(configs_list=())
    assert _snap(snap_compare, _app(console_states, fake, "empty"), _go("C"))


def test_config_failed_read(snap_compare, console_states) -> None:
    fake = FakeClusterActions(read_fails_with=_READ_FAILS)
    assert _snap(snap_compare, _app(console_states, fake), _go("C"))


def test_config_edit_diff(snap_compare, console_states) -> None:
    app = _app(console_states, FakeClusterActions())
    assert _snap(snap_compare, app, _go("C", "v", "=200mb", until="plan"))


def test_config_delete_failed(snap_compare, console_states) -> None:
    app = _app(console_states, FakeClusterActions())
    assert _snap(snap_compare, app, _go("C", "down", "d", until="failed"))


# =========================================================================== Tables


def test_tables_partition_ask(snap_compare, console_states) -> None:
    app = _app(console_states, FakeClusterActions())
    assert _snap(snap_compare, app, _go("t", "c", until="ask"))


def test_tables_property_off(snap_compare, console_states) -> None:
    fake = FakeClusterActions(unavailable_reason="read-only: profile 'demo' has no `writes = true`")
    assert _snap(snap_compare, _app(console_states, fake), _go("t", "m", until="off"))

"""The server actions modal: actions off (greyed, with why), a drain plan awaiting the
typed id, a refused plan, and a failure (a fake ServerActions; tests/_testutil/actions)."""

from __future__ import annotations

from fluss_proto.model import HealthStatus
from snapshots.conftest import SIZE, console_app, settled
from tests._testutil.actions import FakeServerActions
from tests._testutil.console import settle


def _actions(*keys: str, until: str):
    async def run(pilot) -> None:
        pilot.app.open_server(1)
        await pilot.pause()
        await pilot.press("a")
        await settle(pilot, lambda: hasattr(pilot.app.screen, "step"))
        await pilot.press(*keys)
        await settle(pilot, lambda: pilot.app.screen.step == until)

    return run


def _app(console_states, fake: FakeServerActions | None):
    state = console_states["normal"]
    app = console_app(state, state.history.path)
    app.actions_override = fake
    return app


def test_actions_off(snap_compare, console_states) -> None:
    app = _app(
        console_states,
        FakeServerActions(unavailable_reason="read-only: profile 'prod' has no `writes = true`"),
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_actions(until="choose")))


def test_actions_drain_plan(snap_compare, console_states) -> None:
    app = _app(console_states, FakeServerActions())
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_actions("d", until="plan")))


def test_actions_drain_refused(snap_compare, console_states) -> None:
    app = _app(console_states, FakeServerActions(health=HealthStatus.RED))
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_actions("d", until="refused")))


def test_actions_drain_failed(snap_compare, console_states) -> None:
    fake = FakeServerActions(
        fail_with="server drain 1: REBALANCE_FAILURE_EXCEPTION (61): Rebalance task already exists"
    )
    app = _app(console_states, fake)
    assert snap_compare(
        app, terminal_size=SIZE, run_before=settled(_actions("d", "1", "enter", until="failed"))
    )

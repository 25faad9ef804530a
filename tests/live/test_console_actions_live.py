"""The console's Config screen and Tables actions against the session cluster of each
server generation.

The app runs on a real LiveFeed of a profile with ``writes = true``: ``C`` lists the
cluster's configs with their source, as DescribeClusterConfigs answers a separate client;
a dynamic config is set through the modal (the key typed in full), the list shows the new
value as dynamic, the delete takes it back, and the history holds both as operator events
with the old and new values. The key is taken back in a ``finally`` too: the session
cluster is shared. On the Tables screen a partition of a pyfluss-made table is created and
dropped and a table property set, each checked by a client of its own. The Rebalance
screen reads the coordinator's progress (no rebalance is started: the cluster is shared).
Every wait is bounded; everything listens on loopback only.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import fluss
import pyarrow as pa
import pytest

from fluss_proto.actions import AlterOp, ConfigChange, FlussActions
from fluss_proto.admin import FlussAdmin
from fluss_proto.api_keys import OPERATOR_ACTIONS
from fluss_proto.client import FlussClient
from konsole.collect.profiles import resolve_profile
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import LiveFeed
from konsole.ui.modals.action_confirm import ActionConfirmScreen
from konsole.ui.screens.operations.configs import ConfigScreen
from konsole.ui.screens.operations.rebalance import RebalanceScreen
from konsole.ui.screens.tables.screen import TablesScreen
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.text_input import TextInput
from store import open_reader
from tests._testutil import pyfluss_data as pf
from tests._testutil.all_types import create_table
from tests._testutil.console import until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.timeout(180),
]

#: A config both generations take dynamically (a MemorySize).
KEY = "kv.rocksdb.shared-rate-limiter.bytes-per-sec"
SOURCES = {"DYNAMIC_SERVER_CONFIG": "dynamic", "INITIAL_SERVER_CONFIG": "initial (file)"}


async def _configs(bootstrap: str) -> dict[str, tuple[str, str]]:
    """key -> (value as shown, source as shown), read by a client of its own."""
    client = await FlussClient.connect([bootstrap])
    try:
        entries = await FlussAdmin(client).cluster_configs()
    finally:
        await client.close()
    return {
        e.key: ("(not shown)" if e.value is None else e.value, SOURCES.get(e.source, e.source))
        for e in entries
    }


def _shown(screen: ConfigScreen) -> dict[str, tuple[str, str]]:
    table = screen.query_one(KeyedGrid)
    rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
    return {key: (value, source) for key, value, source in rows}


async def _confirm(pilot, app: KonsoleApp, *, ask: str | None, subject: str) -> None:
    modal = app.screen
    assert isinstance(modal, ActionConfirmScreen)
    field = modal.query_one("#confirm-input", TextInput)
    if ask is not None:
        await until(pilot, "the ask step", lambda: modal.step == "ask", 10)
        field.value = ask
        await pilot.press("enter")
    await until(pilot, "the plan", lambda: modal.step in ("plan", "failed"), 30)
    assert modal.step == "plan", str(modal.query_one("#confirm-status").render())
    field.value = subject
    await pilot.press("enter")
    await until(pilot, "the outcome", lambda: modal.step in ("done", "failed"), 30)
    assert modal.step == "done", str(modal.query_one("#confirm-status").render())
    await pilot.press("escape")


async def _reset(bootstrap: str) -> None:
    before = await _configs(bootstrap)
    if before.get(KEY, ("", ""))[1] != "dynamic":
        return
    client = await FlussClient.connect([bootstrap], allow_writes=OPERATOR_ACTIONS)
    try:
        await FlussActions(client).alter_cluster_configs([ConfigChange(KEY, None, AlterOp.DELETE)])
    finally:
        await client.close()


async def test_config_screen_lists_sets_and_deletes_real_configs(
    bootstrap: str, tmp_path: Path
) -> None:
    history = tmp_path / "history.sqlite"
    profile = replace(resolve_profile(bootstrap=bootstrap), writes=True)
    app = KonsoleApp(LiveFeed(profile, history, interval=1.0))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, "first poll", lambda: app.state is not None, 60)
            await pilot.press("C")
            await until(
                pilot, "the Config screen", lambda: isinstance(app.screen, ConfigScreen), 10
            )
            screen = app.screen
            assert isinstance(screen, ConfigScreen)
            await until(pilot, "the configs", lambda: screen.configs is not None, 30)
            assert screen.error is None
            expected = await _configs(bootstrap)
            assert expected and _shown(screen) == expected
            old = expected.get(KEY)

            await pilot.press("n")
            await _confirm(pilot, app, ask=f"{KEY}=123mb", subject=KEY)
            await until(
                pilot, "the new value", lambda: _shown(screen).get(KEY) == ("123mb", "dynamic"), 30
            )
            assert (await _configs(bootstrap))[KEY] == ("123mb", "dynamic")

            table = screen.query_one(KeyedGrid)
            table.move_cursor(row=table.row_keys.index(KEY))
            await pilot.press("d")
            await _confirm(pilot, app, ask=None, subject=KEY)
            await until(pilot, "the value deleted", lambda: _shown(screen).get(KEY) == old, 30)
    finally:
        await _reset(bootstrap)

    with open_reader(history) as reader:
        rows = reader.events(kinds=["operator"])
    events = [json.loads(r.details)["details"] for r in rows]
    done = [(e["action"], e["outcome"]) for e in events if e["outcome"] == "succeeded"]
    assert done == [("config set", "succeeded"), ("config delete", "succeeded")]
    # The old value kept for undo: before the set what the list showed, after it 123mb.
    before = None if old is None else old[0]
    set_change = next(e for e in events if e["action"] == "config set")["changes"]
    assert set_change == [{"what": KEY, "before": before, "after": "123mb"}]
    drop_change = next(e for e in events if e["action"] == "config delete")["changes"]
    assert drop_change == [{"what": KEY, "before": "123mb", "after": None}]


async def _parted_table(bootstrap: str) -> str:
    conn = await pf.connect(bootstrap)
    try:
        db = await pf.create_database(conn.get_admin(), pf.unique_name("console_ops"))
        schema = pa.schema([("id", pa.int64()), ("region", pa.string())])
        path = fluss.TablePath(db, "parted")
        await create_table(conn, path, schema, buckets=1, partition_keys=["region"])
    finally:
        await pf.close_connection(conn)
    return f"{db}.parted"


async def _table_facts(bootstrap: str, table: str) -> tuple[set[str], dict[str, str]]:
    """(partition names, custom properties), read by a client of its own."""
    client = await FlussClient.connect([bootstrap])
    try:
        admin = FlussAdmin(client)
        names = {p.name for p in await admin.list_partitions(table)}
        return names, dict((await admin.table_info(table)).custom_properties)
    finally:
        await client.close()


def _polled(app: KonsoleApp, table: str) -> set[str]:
    snap = app.state.last_ok if app.state is not None else None
    if snap is None or snap.view is None:
        return set()
    return {p.name for p in snap.view.table(table).partitions}


async def test_tables_screen_partition_create_drop_and_property_set(
    bootstrap: str, tmp_path: Path
) -> None:
    table = await _parted_table(bootstrap)
    profile = replace(resolve_profile(bootstrap=bootstrap), writes=True)
    app = KonsoleApp(LiveFeed(profile, tmp_path / "history.sqlite", interval=1.0))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, "first poll", lambda: app.state is not None, 60)
        await pilot.press("t")
        await until(pilot, "the Tables screen", lambda: isinstance(app.screen, TablesScreen), 10)
        rows = app.screen.query_one(KeyedGrid)
        await until(pilot, "the new table listed", lambda: f"t:{table}" in rows.row_keys, 30)
        rows.move_cursor(row=rows.row_keys.index(f"t:{table}"))
        await pilot.pause()

        await pilot.press("c")
        await _confirm(pilot, app, ask="region=eu", subject=f"{table}[eu]")
        assert (await _table_facts(bootstrap, table))[0] == {"eu"}
        # The drop's plan checks the partition exists in a poll: wait until polls see it.
        await until(pilot, "the partition polled", lambda: _polled(app, table) == {"eu"}, 30)
        await pilot.press("X")
        await _confirm(pilot, app, ask="region=eu", subject=f"{table}[eu]")
        assert (await _table_facts(bootstrap, table))[0] == set()
        await pilot.press("m")
        await _confirm(pilot, app, ask="owner=console", subject=table)
        assert (await _table_facts(bootstrap, table))[1].get("owner") == "console"


def _count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Count the calls of the coroutine function ``owner.name`` from now on (a module's
    function or a class's method)."""
    calls = [0]
    real = getattr(owner, name)

    async def counted(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        return await real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


async def test_rebalance_screen_reads_the_coordinators_progress(
    bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await FlussClient.connect([bootstrap])
    try:
        expected = await FlussAdmin(client).rebalance_progress()
    finally:
        await client.close()
    # The action service's read clients opened and closed, and the progress reads: the
    # screen's refreshes read through one client for its life, not one each.
    reads = _count_calls(monkeypatch, FlussAdmin, "rebalance_progress")
    profile = resolve_profile(bootstrap=bootstrap)  # a read: no writes needed
    app = KonsoleApp(LiveFeed(profile, tmp_path / "history.sqlite", interval=1.0))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, "first poll", lambda: app.state is not None, 60)
        await pilot.press("R")
        await until(pilot, "the screen", lambda: isinstance(app.screen, RebalanceScreen), 10)
        screen = app.screen
        assert isinstance(screen, RebalanceScreen)
        done = lambda: screen.progress is not None or screen.progress_error is not None  # noqa: E731
        await until(pilot, "the progress", done, 30)
        assert screen.progress_error is None and screen.progress == expected
        title = str(screen.query_one("#rb-progress-title").render())
        if expected.exists:
            assert f"Rebalance {expected.rebalance_id}" in title
        else:
            assert "no rebalance to report" in title
        for _ in range(4):
            before = reads[0]
            await pilot.press("r")
            await until(pilot, "a refresh", lambda b=before: reads[0] > b, 30)  # type: ignore[misc]
        assert screen.progress_error is None and reads[0] >= 5
        service = app.action_service()
        assert service.read_clients() == (1, 0)
        # The Config screen reads through the same client (the Rebalance screen holds it).
        await pilot.press("C")
        await until(pilot, "the Config screen", lambda: isinstance(app.screen, ConfigScreen), 10)
        config = app.screen
        assert isinstance(config, ConfigScreen)
        await until(pilot, "the configs", lambda: config.configs is not None, 30)
        assert config.error is None and service.read_clients() == (1, 0)
    # The screens' client is closed with them.
    assert service.read_clients() == (1, 1)

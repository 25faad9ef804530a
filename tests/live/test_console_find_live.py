"""The console's Preview screen finds rows on a real cluster (both server generations).

pyfluss writes a primary-key table; the console (in-process pilot, a live feed that polls
and records its history) opens its Preview, looks a present and an absent key up with
``l`` (the rows equal pyfluss's own lookups), and applies a filter with ``/`` (exactly the
rows a client-side filter keeps). Then, under a profile masking ``name``, the secret names
pyfluss wrote appear neither on the screen (scan and lookup) nor in the history file.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import fluss
import pyarrow as pa
import pytest
import pytest_asyncio

from konsole.collect.profiles import Profile
from konsole.model.masking import MaskRules
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import LiveFeed
from konsole.ui.modals.lookup_dialog import LookupDialog
from konsole.ui.screens.tables.preview import PreviewScreen
from tests._testutil.all_types import World, create_table, world_of, write_rows
from tests._testutil.console import screen_text, until

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(240)]

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("city", pa.string()),
    ]
)
ROWS = [{"id": i, "name": f"Secret Person {i:03d}", "city": f"city-{i % 4}"} for i in range(30)]
ORDERS = pa.schema(
    [
        pa.field("region", pa.string(), nullable=False),
        pa.field("id", pa.int64(), nullable=False),
        pa.field("note", pa.string()),
    ]
)
ORDER_ROWS = [
    {"region": region, "id": i, "note": f"{region}-{i}"}
    for region in ("eu", "us")
    for i in range(6)
]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def world(bootstrap: str) -> AsyncIterator[World]:
    async with world_of(bootstrap, "console_find") as w:
        path = fluss.TablePath(w.db, "customers")
        await create_table(w.conn, path, SCHEMA, pk=["id"], buckets=3)
        await write_rows(w.conn, path, ROWS)
        orders = fluss.TablePath(w.db, "orders")
        await create_table(
            w.conn, orders, ORDERS, pk=["region", "id"], buckets=3, bucket_keys=["region"]
        )
        await write_rows(w.conn, orders, ORDER_ROWS)
        yield w


def _app(world: World, history: Path, *mask: str) -> KonsoleApp:
    profile = Profile(
        name="live",
        source="profile",
        bootstrap=(world.bootstrap,),
        masks=MaskRules(tuple(mask)),
    )
    return KonsoleApp(LiveFeed(profile, history, interval=1.0))


async def _open(pilot: Any, app: KonsoleApp, table: str) -> PreviewScreen:
    await until(pilot, "first state", lambda: app.live_state is not None, 30)
    screen = PreviewScreen(table)
    app.push_screen(screen)
    await until(pilot, "preview rows", lambda: screen.result is not None, 60)
    assert screen.error is None
    return screen


async def _lookup(pilot: Any, app: KonsoleApp, screen: PreviewScreen, key: int) -> None:
    await pilot.press("l")
    await until(pilot, "lookup dialog", lambda: isinstance(app.screen, LookupDialog), 10)
    await pilot.press(*str(key), "enter")
    await until(pilot, "lookup answered", lambda: app.screen is screen and not screen.scanning, 30)
    assert screen.error is None, screen.error


async def test_lookup_and_filter_on_the_preview_equal_pyfluss(world: World, tmp_path: Path) -> None:
    table = await asyncio.wait_for(world.conn.get_table(fluss.TablePath(world.db, "customers")), 30)
    lookuper = table.new_lookup().create_lookuper()
    theirs_present = await lookuper.lookup({"id": 7})
    theirs_absent = await lookuper.lookup({"id": 999})
    assert theirs_present is not None and theirs_absent is None

    app = _app(world, tmp_path / "history.sqlite")
    async with app.run_test(size=(120, 32)) as pilot:
        screen = await _open(pilot, app, f"{world.db}.customers")
        assert sorted(screen.result.table.column("id").to_pylist()) == list(range(30))

        await _lookup(pilot, app, screen, 7)
        assert "lookup id=7: found (1 row)" in screen_text(app)
        ours = screen.result.table.select(["id", "name", "city"]).to_pylist()
        assert ours == [{k: theirs_present[k] for k in ("id", "name", "city")}]

        await pilot.press("escape")  # back to the scan
        await until(pilot, "scan again", lambda: len(screen.rows) == 30, 60)
        await _lookup(pilot, app, screen, 999)
        assert "lookup id=999: not found" in screen_text(app) and screen.rows == []

        await pilot.press("escape")
        await until(pilot, "scan again", lambda: len(screen.rows) == 30, 60)
        await pilot.press("slash", *"id >= 20 AND city = 'city-1'", "enter")
        await until(pilot, "filtered", lambda: not screen.scanning and len(screen.rows) < 30, 60)
        expected = sorted(r["id"] for r in ROWS if r["id"] >= 20 and r["city"] == "city-1")
        assert sorted(screen.result.table.column("id").to_pylist()) == expected
        assert f"{len(expected)} matched" in screen_text(app)


async def test_a_prefix_lookup_on_the_preview_equals_pyfluss(world: World, tmp_path: Path) -> None:
    path = fluss.TablePath(world.db, "orders")
    table = await asyncio.wait_for(world.conn.get_table(path), 30)
    prefix = table.new_lookup().lookup_by(["region"]).create_lookuper()
    theirs = await prefix.lookup({"region": "eu"})
    assert len(theirs) == 6

    app = _app(world, tmp_path / "history.sqlite")
    async with app.run_test(size=(120, 32)) as pilot:
        screen = await _open(pilot, app, f"{world.db}.orders")
        await pilot.press("l")
        await until(pilot, "lookup dialog", lambda: isinstance(app.screen, LookupDialog), 10)
        await pilot.press(*"eu", "enter")  # the bucket key alone: a prefix lookup
        await until(pilot, "answered", lambda: app.screen is screen and not screen.scanning, 30)
        assert screen.error is None, screen.error
        assert "prefix lookup region=eu: found (6 rows)" in screen_text(app)
        ours = screen.result.table.select(["region", "id", "note"]).to_pylist()
        key = lambda r: (r["region"], r["id"])  # noqa: E731
        assert sorted(ours, key=key) == sorted(
            ({k: r[k] for k in ("region", "id", "note")} for r in theirs), key=key
        )


async def _shown(world: World, tmp_path: Path, *mask: str) -> tuple[str, list[bytes], set[str]]:
    """The preview of customers under ``mask``, a lookup made: what the screens showed,
    every file written meanwhile (the history among them), and the names the scan and
    the lookup answered."""
    history = tmp_path / "history.sqlite"
    app = _app(world, history, *mask)
    seen: list[str] = []
    async with app.run_test(size=(120, 32)) as pilot:
        screen = await _open(pilot, app, f"{world.db}.customers")
        names = set(screen.result.table.column("name").to_pylist())
        seen += [screen_text(app), repr(screen.rows)]
        await _lookup(pilot, app, screen, 7)
        assert "found (1 row)" in screen_text(app)
        seen += [screen_text(app), repr(screen.rows)]
        # a poll recorded while the rows were on the screen
        await until(pilot, "a recorded poll", lambda: history.exists(), 30)
        names |= set(screen.result.table.column("name").to_pylist())
    files = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    return "\n".join(seen), files, names


async def test_a_masked_column_reaches_neither_screen_nor_history(
    world: World, tmp_path: Path
) -> None:
    seen, files, names = await _shown(world, tmp_path, "name")
    assert names == {"****"}
    assert "Secret Person" not in seen
    assert "city-1" in seen  # the unmasked column is shown (the check can fail)
    assert files and not [f for f in files if b"Secret Person" in f]


async def test_unmasked_the_same_search_finds_the_names(world: World, tmp_path: Path) -> None:
    """The control run of the test above: without the mask, the names are on the screen."""
    seen, _, names = await _shown(world, tmp_path)
    assert "Secret Person 007" in seen and "****" not in seen
    assert "Secret Person 007" in names

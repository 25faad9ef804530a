"""The Preview screen's lookup (l), filter box (/) and masking, with fake table reads.

The last test drives the console under a masking profile over a table holding secret
values (scan, lookup, filter, export) and greps every output for them: each screen's
SVG and text, the notifications, every log record, the history file's bytes and the
exported file.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from textual.widgets import Input

from konsole.collect.cluster.table_reads import LookupRequest, PreviewRequest
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.modals.lookup_dialog import LookupDialog, lookup_specs
from konsole.ui.palette import KonsoleCommands
from konsole.ui.screens.tables.preview import PreviewScreen, _PagedTable
from tests._testutil.console import T_STOPPED, fake_preview, record_story, settle, story_state
from tests._testutil.table_reads import lookup_fake, masked_profile, scan_fake

pytestmark = pytest.mark.timeout(90)

ROWS = [(101, "Ada Lovelace", "London"), (102, "Alan Turing", None), (205, "Grace", "NYC")]


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite")


def _app(story: Path, rows=ROWS, profile=None, history: Path | None = None, **fakes) -> KonsoleApp:
    state = story_state(story, T_STOPPED - 10)
    feed = StaticFeed(
        [state],
        name="demo",
        profile=profile,
        history_path=history,
        scan=fakes.get("scan") or scan_fake(rows),
        lookup_rows=fakes.get("lookup") or lookup_fake(rows),
    )
    return KonsoleApp(feed)


async def _open(pilot, app: KonsoleApp, path: str = "shop.customers") -> PreviewScreen:
    await settle(pilot, lambda: app.live_state is not None)
    screen = PreviewScreen(path)
    app.push_screen(screen)
    await settle(pilot, lambda: screen.result is not None and not screen.scanning)
    return screen


def _head(screen: PreviewScreen) -> str:
    return str(screen.query_one("#preview-head").render())


def _grid_text(screen: PreviewScreen) -> list[list[str]]:
    grid = screen.query_one(_PagedTable)
    return [[str(c) for c in grid.get_row_at(i)] for i in range(grid.row_count)]


async def test_a_bad_key_is_one_line_in_the_modal_then_a_good_one_is_looked_up(
    story: Path,
) -> None:
    asked: list[LookupRequest] = []
    app = _app(story, lookup=lookup_fake(ROWS, asked))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app)
        await pilot.press("l")
        await settle(pilot, lambda: isinstance(app.screen, LookupDialog))
        await pilot.press(*"12x", "enter")
        dialog = app.screen
        assert isinstance(dialog, LookupDialog)  # still open: nothing sent
        error = str(dialog.query_one("#lookup-error").render())
        assert "'12x' is not an integer" in error and "\n" not in error.strip()
        assert asked == []
        await pilot.press("backspace", "backspace", "backspace", *"101", "enter")
        await settle(pilot, lambda: app.screen is screen and not screen.scanning)
        assert asked == [LookupRequest(("shop", "customers"), (("id", "101"),))]
        assert "lookup id=101: found (1 row)" in _head(screen)
        assert _grid_text(screen) == [["101", "Ada Lovelace", "London"]]
        await pilot.press("escape")  # back to the scan, not out of the screen
        await settle(pilot, lambda: not screen.scanning and len(screen.rows) == 3)
        assert app.screen is screen


async def test_an_absent_key_says_not_found(story: Path) -> None:
    app = _app(story)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app)
        await pilot.press("l")
        await settle(pilot, lambda: isinstance(app.screen, LookupDialog))
        await pilot.press(*"999", "enter")
        await settle(pilot, lambda: app.screen is screen and not screen.scanning)
        assert "lookup id=999: not found" in _head(screen)
        assert screen.rows == []


async def test_a_log_table_has_no_lookup(story: Path) -> None:
    async def scan(request):
        return fake_preview("shop.orders", 5)

    app = _app(story, scan=scan)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app, "shop.orders")
        await pilot.press("l")
        await pilot.pause()
        assert app.screen is screen
        assert any("log table" in n.message for n in app._notifications)


async def test_the_filter_box_checks_then_sends_the_filter(story: Path) -> None:
    asked: list[PreviewRequest] = []
    app = _app(story, scan=scan_fake(ROWS, asked))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app)
        await pilot.press("slash", *"nope > 1", "enter")
        error = screen.query_one("#preview-filter-error")
        assert error.display and "nope" in str(error.render())
        assert len(asked) == 1  # refused before any scan
        box = screen.query_one("#preview-filter")
        box.value = "id > 101"
        await pilot.press("enter")
        await settle(pilot, lambda: len(asked) == 2 and not screen.scanning)
        assert asked[-1].where == "id > 101"
        assert not error.display and not box.display
        head = _head(screen)
        assert "3 row(s) scanned · 2 matched · 6 batch run(s) skipped by the server" in head
        assert [r[0] for r in screen.rows] == ["102", "205"]
        await pilot.press("slash")
        box.value = ""
        await pilot.press("enter")  # an empty filter: every row again
        await settle(pilot, lambda: len(asked) == 3 and not screen.scanning)
        assert asked[-1].where is None and len(screen.rows) == 3


async def test_masked_columns_cannot_be_filtered_or_looked_up_by(story: Path) -> None:
    asked: list[PreviewRequest] = []
    profile = masked_profile("name", "shop.customers.id")
    app = _app(story, profile=profile, scan=scan_fake(ROWS, asked))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app)
        await pilot.press("slash", *"name = 'Grace'", "enter")
        assert "masked" in str(screen.query_one("#preview-filter-error").render())
        assert len(asked) == 1
        await pilot.press("escape", "l")
        await settle(pilot, lambda: isinstance(app.screen, LookupDialog))
        assert app.screen.query_one("#key-0").disabled  # id is masked
        await pilot.press("escape")


async def test_export_false_hides_and_refuses_export(story: Path, tmp_path: Path) -> None:
    app = _app(story, profile=masked_profile(export=False))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app)
        assert screen.check_action("export", ()) is False
        await pilot.press("x")
        await pilot.pause()
        assert app.screen is screen  # no export dialog
        provider = KonsoleCommands(screen)
        names = [name for name, _cb, _help in provider._commands()]
        assert "Lookup a key…" in names and "Export rows…" not in names
        # Reached anyway (a binding of one's own): the same refusal as the command line's.
        said: list[str] = []
        screen.notify = lambda message, **_: said.append(str(message))  # type: ignore[method-assign]
        screen.action_export()
        assert said == [
            "profile 'demo' forbids export (export = false): "
            "rows are shown, never written to a file"
        ]
        assert list(tmp_path.iterdir()) == []


SECRETS = ("Ada Lovelace", "Alan Turing", "London-SW1A-2AA", "Grace Hopper")
SECRET_ROWS = [
    (101, "Ada Lovelace", "London-SW1A-2AA"),
    (102, "Alan Turing", None),
    (205, "Grace Hopper", "London-SW1A-2AA"),
]


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


async def _every_output(story: Path, tmp_path: Path, *masks: str) -> dict[str, bytes]:
    """The Preview of SECRET_ROWS under ``masks``: opened, a lookup, a filter and an export
    made; what reached the screens, the log, the history and the export file."""
    history = tmp_path / "history.sqlite"
    shutil.copy(story, history)
    app = _app(story, rows=SECRET_ROWS, profile=masked_profile(*masks), history=history)
    records = _Records()
    root = logging.getLogger()
    level = root.level
    root.addHandler(records)
    root.setLevel(logging.DEBUG)
    screens: list[str] = []
    target = tmp_path / "customers.csv"
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            screen = await _open(pilot, app)
            screens.append(app.export_screenshot())
            screens.append(repr(screen.rows))
            await pilot.press("l")
            # typed once the dialog's key box has the focus (no key lost to the screen)
            await settle(
                pilot,
                lambda: (
                    isinstance(app.screen, LookupDialog)
                    and app.screen.focused is app.screen.query_one("#key-0")
                ),
            )
            await pilot.press(*"101", "enter")
            await settle(pilot, lambda: app.screen is screen and not screen.scanning)
            assert "found (1 row)" in _head(screen)
            screens += [app.export_screenshot(), repr(screen.rows)]
            await pilot.press("escape")
            await settle(pilot, lambda: not screen.scanning and len(screen.rows) == 3)
            await pilot.press("slash", *"id > 101", "enter")
            await settle(pilot, lambda: not screen.scanning and len(screen.rows) == 2)
            screens += [app.export_screenshot(), repr(screen.rows)]
            await pilot.press("x")
            await settle(pilot, lambda: type(app.screen).__name__ == "ExportDialog")
            app.screen.query_one("#export-path").value = str(target)
            await pilot.press("enter")
            await settle(pilot, lambda: target.exists(), tries=250)
            screens += [n.message for n in app._notifications]
    finally:
        root.removeHandler(records)
        root.setLevel(level)
    return {
        "screens": "\n".join(screens).encode(),
        "log": "\n".join(records.lines).encode(),
        "history": history.read_bytes(),
        "export": target.read_bytes(),
        # anything else written meanwhile
        **{str(p): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()},
    }


async def test_masked_values_reach_no_output(story: Path, tmp_path: Path) -> None:
    outputs = await _every_output(story, tmp_path, "name", "shop.*.city")
    assert b"****" in outputs["export"] and b"102" in outputs["export"]
    assert b"****" in outputs["screens"]  # the masks really applied
    for name, data in outputs.items():
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret!r} in the {name}"


async def test_unmasked_the_same_search_finds_the_values(story: Path, tmp_path: Path) -> None:
    """The control run of the test above: without masks, the same steps put every secret
    on the screens and in the export, so the search there can fail."""
    outputs = await _every_output(story, tmp_path)
    exported = SECRETS[1:]  # the export has the filtered rows: id > 101
    for name, secrets in (("screens", SECRETS), ("export", exported)):
        for secret in secrets:
            assert secret.encode() in outputs[name], f"{secret!r} not in the {name}"
    assert b"****" not in outputs["screens"] + outputs["export"]


async def test_the_dialog_makes_a_prefix_lookup_of_the_bucket_key_alone(story: Path) -> None:
    from tests._testutil.table_reads import composite_info

    info = composite_info()
    key, prefix = lookup_specs(info)
    assert prefix is not None and prefix.columns == ("region",)
    app = _app(story)
    answers: list[LookupRequest | None] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        dialog = LookupDialog(info, key, prefix)
        app.push_screen(dialog, answers.append)
        await settle(pilot, lambda: app.screen is dialog and bool(dialog.query("#key-1")))
        dialog.query_one("#key-1", Input).value = "7"  # id alone: neither key nor prefix
        await pilot.press("enter")
        error = str(dialog.query_one("#lookup-error").render())
        assert "missing key column(s): region (or give only region)" in error
        assert app.screen is dialog
        dialog.query_one("#key-1", Input).value = ""
        dialog.query_one("#key-0", Input).value = "eu"
        dialog.query_one("#key-0", Input).focus()
        await pilot.press("enter")
        await settle(pilot, lambda: answers != [])
    assert answers == [LookupRequest(("shop", "orders_pk"), (("region", "eu"),), prefix=True)]
    assert answers[0].kind == "prefix lookup"


async def test_following_the_tail_is_masked_too(story: Path) -> None:
    asked: list[PreviewRequest] = []

    async def scan(request: PreviewRequest):
        asked.append(request)
        return fake_preview("shop.orders", 6 + len(asked), tail=request.tail)

    app = _app(story, profile=masked_profile("customer"), scan=scan)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot, app, "shop.orders")
        await pilot.press("f")
        await settle(pilot, lambda: any(r.tail for r in asked) and len(screen.rows) > 7)
        column = screen.result.table.column_names.index("customer")
        assert {row[column] for row in screen.rows} == {"****"}
        await pilot.press("f")

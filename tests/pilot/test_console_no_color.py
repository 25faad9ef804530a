"""NO_COLOR reaches the console (docs/cli.md): set to anything, the screen is drawn in
monochrome (Textual's own filter); unset, in colour."""

from __future__ import annotations

import pytest
from textual.filter import Monochrome, NoColor

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed


@pytest.mark.parametrize(("value", "monochrome"), [("1", True), ("", True), (None, False)])
def test_no_color_makes_the_console_monochrome(
    monkeypatch: pytest.MonkeyPatch, value: str | None, monochrome: bool
) -> None:
    if value is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", value)
    app = KonsoleApp(StaticFeed([], name="demo"))
    assert app.no_color is monochrome
    filters = [f for f in app.get_line_filters() if isinstance(f, Monochrome | NoColor)]
    assert bool(filters) is monochrome

"""Which of a footer's keys fit its width (pure, no Textual).

The rule is the tables' (:mod:`konsole.ui.widgets.column_fit`): whole keys drop, the least
important first, never a key cut at the right edge ("q" without "Quit" reads as a key
that does nothing). Every key stays reachable: the help (``?``) and the palette list them.

Importance, least first (the first dropped):

1. the app's key to the screen already shown (``o Overview`` on the Overview);
2. the app's other keys (screens, time travel), the last listed first;
3. the screen's own keys that are not its main ones, the last listed first;
4. Help;
5. the screen's main keys, the last listed first.

Quit is never dropped. At 80 columns and more Quit, Help and the main keys fit.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from rich.cells import cell_len

from konsole.ui.widgets.column_fit import fitting_columns

__all__ = ["FooterEntry", "fitting_keys", "footer_drop_order", "key_width"]

#: Actions of the keys that are never dropped, and of the one dropped after the others.
QUIT = "quit"
HELP = "help"


@dataclass(frozen=True, slots=True)
class FooterEntry:
    """One key as the footer shows it."""

    action: str
    #: Cells it takes on screen.
    width: int
    #: The screen's own key (or a focused widget's), not the app's.
    own: bool


def key_width(key_display: str, description: str) -> int:
    """Cells a footer key takes: `` k `` then ``description `` (Textual's footer padding)."""
    return cell_len(key_display) + 2 + (cell_len(description) + 1 if description else 0)


def footer_drop_order(
    entries: Sequence[FooterEntry], *, main: Collection[str], current: str | None
) -> list[int]:
    """The indexes of ``entries`` (in footer order) the least important first; Quit is
    not among them. ``main`` holds the actions of the screen's main keys, ``current`` the
    action of the app's key to the screen shown (None: no such key)."""

    def rank(index: int) -> tuple[int, int]:
        entry = entries[index]
        if entry.action == current and not entry.own:
            tier = 0
        elif entry.action == HELP:
            tier = 3
        elif not entry.own:
            tier = 1
        elif entry.action not in main:
            tier = 2
        else:
            tier = 4
        return tier, -index  # within a tier, the last listed first

    droppable = [i for i, e in enumerate(entries) if e.action != QUIT]
    return sorted(droppable, key=rank)


def fitting_keys(
    entries: Sequence[FooterEntry],
    available: int,
    *,
    main: Collection[str] = (),
    current: str | None = None,
) -> list[int]:
    """The indexes (in footer order) of the keys shown in ``available`` cells."""
    order = footer_drop_order(entries, main=main, current=current)
    return fitting_columns([e.width for e in entries], order, available)

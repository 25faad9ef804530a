"""Footer keys that do not fit are dropped whole, the least important first
(konsole.ui.widgets.footer_fit)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from konsole.ui.widgets.footer_fit import FooterEntry, fitting_keys, footer_drop_order, key_width

OVERVIEW = "switch_mode('overview')"


def _app_keys() -> list[FooterEntry]:
    """The main footer: the app's keys, as on the Overview (widths as Textual draws them)."""
    keys = [
        (OVERVIEW, "o", "Overview"),
        ("switch_mode('servers')", "s", "Servers"),
        ("switch_mode('tables')", "t", "Tables"),
        ("switch_mode('events')", "e", "Events"),
        ("time_travel", "T", "Time travel"),
        ("help", "?", "Help"),
        ("quit", "q", "Quit"),
    ]
    return [FooterEntry(a, key_width(k, d), own=False) for a, k, d in keys]


def test_a_key_takes_its_display_and_description_with_padding() -> None:
    assert key_width("q", "Quit") == 8  # " q " + "Quit "
    assert key_width("esc", "Cancel/back") == 17
    assert key_width("^p", "") == 4


def test_the_main_footer_at_80_columns_drops_the_key_to_the_screen_shown() -> None:
    keys = _app_keys()
    # 80 columns less the palette key (14): Quit stays whole, only "o Overview" goes
    assert fitting_keys(keys, 66, current=OVERVIEW) == [1, 2, 3, 4, 5, 6]
    assert fitting_keys(keys, 86, current=OVERVIEW) == list(range(7))


def test_then_the_app_keys_go_last_listed_first_and_help_and_quit_stay() -> None:
    keys = _app_keys()
    assert fitting_keys(keys, 40, current=OVERVIEW) == [1, 2, 5, 6]
    assert fitting_keys(keys, 16, current=OVERVIEW) == [5, 6]
    assert fitting_keys(keys, 8, current=OVERVIEW) == [6]
    assert fitting_keys(keys, 0, current=OVERVIEW) == [6]  # Quit is never dropped


def test_the_screens_own_keys_outlast_the_apps_and_its_main_keys_outlast_help() -> None:
    own = [
        FooterEntry("back", 10, own=True),
        FooterEntry("lookup", 10, own=True),
        FooterEntry("columns(1)", 10, own=True),
    ]
    keys = own + _app_keys()
    order = footer_drop_order(keys, main=("back", "columns(1)"), current=OVERVIEW)
    assert order == [3, 7, 6, 5, 4, 1, 8, 2, 0]  # quit (9) never
    assert fitting_keys(keys, 38, main=("back", "columns(1)"), current=OVERVIEW) == [0, 2, 8, 9]


def test_a_key_named_like_the_current_screen_but_the_screens_own_is_not_dropped_first() -> None:
    keys = [FooterEntry(OVERVIEW, 10, own=True), FooterEntry("switch_mode('x')", 10, own=False)]
    assert footer_drop_order(keys, main=(), current=OVERVIEW) == [1, 0]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["quit", "help", "a", "b", "c", OVERVIEW]),
            st.integers(1, 20),
            st.booleans(),
        ),
        max_size=12,
    ),
    st.integers(0, 200),
)
def test_what_stays_fits_unless_only_quit_is_left_and_more_room_never_shows_less(
    raw: list[tuple[str, int, bool]], available: int
) -> None:
    keys = [FooterEntry(a, w, own) for a, w, own in raw]
    shown = fitting_keys(keys, available, current=OVERVIEW)
    assert shown == sorted(shown)
    quits = [i for i, k in enumerate(keys) if k.action == "quit"]
    assert set(quits) <= set(shown)
    assert sum(keys[i].width for i in shown) <= available or set(shown) == set(quits)
    wider = fitting_keys(keys, available + 10, current=OVERVIEW)
    assert set(shown) <= set(wider)

"""The one byte formatter (konsole.render.sizes): the console and the command line write a
size the same way, as the panels and `konsole capacity` always have."""

from __future__ import annotations

import pytest

from konsole.render.sizes import byte_rate_text, bytes_text, compact_rate_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "-"),
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (3174.4, "3.1 KiB"),
        (5 * 1024**3, "5.0 GiB"),
        (2 * 1024**4, "2.0 TiB"),
        (3000 * 1024**4, "3000.0 TiB"),  # TiB the largest unit
        (-2048, "-2.0 KiB"),
    ],
)
def test_bytes_text_uses_binary_units_with_one_decimal_above_bytes(
    value: float | None, text: str
) -> None:
    assert bytes_text(value) == text


def test_a_byte_rate_is_a_size_per_second_and_unknown_stays_a_dash() -> None:
    assert byte_rate_text(3174.4) == "3.1 KiB/s"
    assert byte_rate_text(None) == "-"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "-"),
        (999, "999/s"),
        (1000, "1K/s"),
        (50 * 1024, "50K/s"),
        (1000 * 1024, "1M/s"),
        (3 * 1024**3, "3G/s"),
        (5000 * 1024**3, "5000G/s"),
    ],
)
def test_a_compact_rate_fits_a_narrow_column(value: float | None, text: str) -> None:
    assert compact_rate_text(value) == text

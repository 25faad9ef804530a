"""konsole.model.timefmt: every face's time texts, the ones that used to be written by hand
in the log sources, the alerts and the incident reports included (issue 32)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from konsole.model.timefmt import (
    clock_text,
    day_time_text,
    file_stamp_text,
    iso_seconds_text,
    iso_text,
    rfc3339_text,
    short_clock_text,
    time_of_day_text,
)

#: 2026-11-30 17:05:08.123456 UTC
T = datetime(2026, 11, 30, 17, 5, 8, 123456, tzinfo=UTC).timestamp()


def test_each_text_of_one_moment() -> None:
    assert iso_text(T) == "2026-11-30T17:05:08.123Z"
    assert iso_seconds_text(T) == "2026-11-30T17:05:08Z"
    assert rfc3339_text(T) == "2026-11-30T17:05:08.123+00:00"
    assert file_stamp_text(T) == "20261130-170508"
    assert day_time_text(T) == "2026-11-30 17:05:08 UTC"
    assert time_of_day_text(T) == "17:05:08"
    assert clock_text(T) == "2026-11-30 17:05:08Z"
    assert short_clock_text(T) == "11-30 17:05:08"


@pytest.mark.parametrize("t", [0.0, 1.9999999, 1_700_000_000.0005, T, 4_102_444_799.9999])
def test_the_texts_written_by_hand_before_read_the_same(t: float) -> None:
    """What model/logs, model/alerts and report/ wrote before they used timefmt."""
    moment = datetime.fromtimestamp(t, UTC)
    assert iso_seconds_text(t) == moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert rfc3339_text(t) == moment.isoformat(timespec="milliseconds")
    assert file_stamp_text(t) == f"{moment:%Y%m%d-%H%M%S}"
    assert day_time_text(t) == moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    assert time_of_day_text(t) == moment.strftime("%H:%M:%S")

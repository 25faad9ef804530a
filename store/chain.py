"""Offsets rows as chains: a key (absolute offsets) followed by deltas to the row before.

Each poll's row holds the difference to the *previous* offsets row, which for a 10 s poll
is a handful of rows per bucket (0 on idle buckets): a third smaller than differences to a
key. A new key starts every key period of the row's resolution (:data:`KEY_PERIODS_MS`:
10 minutes of full-rate polls, an hour of one-per-minute polls, 60 hours of hourly ones,
about 60 rows each), and whenever the layout changes or a delta cannot be taken. Reading
a row decodes its chain from the key: at most about 60 rows, or 120 where a chain crosses
from one resolution to the next.

Invariant: a delta row's ``base_poll`` is the offsets row right before it (by poll id).
Retention keeps it when it deletes rows, and re-chains the rows it moves to a coarser
resolution with that resolution's period (:mod:`store.retention`): a key (a few KB for
1,600 buckets) every 10 minutes would otherwise stay in every hour kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from store import codec

__all__ = ["KEY_PERIODS_MS", "KEY_PERIOD_MS", "Link", "decode_rows", "encode"]

#: Key period by resolution level (0 full, 1 one per minute, 2 one per hour): ~60 rows.
KEY_PERIODS_MS: Final = (600_000, 3_600_000, 216_000_000)
#: The writer's (full resolution): reading a row decodes at most 60 rows of 10 s polls.
KEY_PERIOD_MS: Final = KEY_PERIODS_MS[0]


@dataclass(slots=True)
class Link:
    """One decoded offsets row, as the next row's base."""

    poll_id: int
    layout_id: int
    latest: list[int | None]
    at_ms: int


def encode(link: Link, prev: Link | None, *, level: int = 0) -> tuple[bytes, int | None]:
    """(blob, base_poll) for ``link`` (a poll of resolution ``level``) right after ``prev``."""
    period = KEY_PERIODS_MS[min(level, len(KEY_PERIODS_MS) - 1)]
    if (
        prev is not None
        and prev.layout_id == link.layout_id
        and prev.at_ms // period == link.at_ms // period
    ):
        deltas = codec.delta(link.latest, prev.latest)
        if deltas is not None:
            return codec.pack_ints(deltas), prev.poll_id
    return codec.pack_ints(link.latest), None


def decode_rows(
    rows: Iterable[tuple[int, int | None, bytes]],
) -> Iterable[tuple[int, list[int | None]]]:
    """(poll_id, values) for rows given in poll order from a key: (poll_id, base, blob)."""
    prev: tuple[int, list[int | None]] | None = None
    for poll_id, base, blob in rows:
        values = codec.unpack_ints(blob)
        if base is not None:
            if prev is None or prev[0] != base:
                raise ValueError(f"offsets row {poll_id} does not follow its base {base}")
            values = codec.apply_delta(values, prev[1])
        prev = (poll_id, values)
        yield prev

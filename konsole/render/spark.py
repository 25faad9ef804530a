"""Sparklines as text: a series drawn at exactly the width given, with its scale.

Pure and Textual-free (the console's widget, ``konsole.ui.widgets.spark``, draws what this
returns). A point is a number or ``None`` (unknown): unknown is drawn as a gap, never as the
bottom bar, so a server that does not export a figure never reads as "zero". The bars span
the series' own min..max, and :func:`scale_text` says what that span is; a flat series is
drawn at the bottom bar when its value is 0 and mid-height otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["BARS", "GAP", "Scale", "scale_of", "scale_text", "spark_text"]

#: Eight heights, lowest first.
BARS = "▁▂▃▄▅▆▇█"
#: What an unknown point is drawn as.
GAP = " "


@dataclass(frozen=True, slots=True)
class Scale:
    """A series' latest known value and its known min and max (all None: nothing known)."""

    current: float | None
    low: float | None
    high: float | None


def _known(v: float | None) -> bool:
    return v is not None and not math.isnan(v)


def scale_of(values: Sequence[float | None]) -> Scale:
    known = [v for v in values if _known(v)]
    if not known:
        return Scale(None, None, None)
    current = values[-1] if _known(values[-1]) else None
    return Scale(current, min(known), max(known))  # type: ignore[type-var]


def _columns(values: Sequence[float | None], width: int) -> list[float | None]:
    """``values`` resampled to ``width`` columns: stretched when fewer (each point over
    its share of the columns), else each column the largest known point of its slice (a
    spike stays visible), unknown only when its whole slice is."""
    n = len(values)
    if n == 0 or width <= 0:
        return [None] * max(width, 0)
    out: list[float | None] = []
    for col in range(width):
        start = col * n // width
        stop = max((col + 1) * n // width, start + 1)
        known = [v for v in values[start:stop] if _known(v)]
        out.append(max(known) if known else None)  # type: ignore[type-var]
    return out


def spark_text(values: Sequence[float | None], width: int) -> str:
    """``values`` (oldest first) as exactly ``width`` characters of bars and gaps."""
    if width <= 0:
        return ""
    scale = scale_of(values)
    if scale.low is None or scale.high is None:
        return GAP * width
    lo, hi = scale.low, scale.high
    top = len(BARS) - 1
    chars = []
    for v in _columns(values, width):
        if v is None:
            chars.append(GAP)
        elif hi == lo:
            chars.append(BARS[0] if hi == 0 else BARS[top // 2])
        else:
            chars.append(BARS[round((v - lo) / (hi - lo) * top)])
    return "".join(chars)


def scale_text(scale: Scale, show: Callable[[float | None], str]) -> str:
    """``now 3.1 KiB/s · min 0 B/s · max 4.0 KiB/s``, or ``no figures`` when none is known."""
    if scale.low is None:
        return "no figures"
    now = show(scale.current) if scale.current is not None else "unknown"
    return f"now {now} · min {show(scale.low)} · max {show(scale.high)}"

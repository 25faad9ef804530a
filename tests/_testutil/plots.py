"""What a report's plots drew, read back from their SVG and from a rendered screenshot.

A file's size says nothing about its content: these read the data lines out of the inline
SVG (each series' stroke colour and vertices) and count a colour's pixels in a PNG (decoded
with Pillow, which matplotlib depends on), so a test can say the series was drawn and shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Series", "colour_pixels", "series_lines"]

#: A data series' line in konsole/report/plots.py (``_lines``: ``linewidth=1.2``); grid
#: lines are 0.8 wide and event markers dashed, and neither is drawn with this width.
_SERIES_STYLE = re.compile(r"stroke: (#[0-9a-f]{6}); stroke-width: 1\.2;")
_PATH = re.compile(r'<path d="([^"]*)" clip-path="[^"]*" style="([^"]*)"')
_POINT = re.compile(r"[ML] (-?[\d.]+) (-?[\d.]+)")


@dataclass(frozen=True)
class Series:
    colour: str
    points: list[tuple[float, float]]

    @property
    def heights(self) -> set[float]:
        return {y for _, y in self.points}


def _svg_of(page: str, plot: str) -> str:
    """The inline ``<svg>`` of one plot (its first axes has the gid ``PLOT-0``)."""
    for chunk in page.split("<svg")[1:]:
        body = chunk[: chunk.find("</svg>")]
        if f'id="{plot}-0"' in body:
            return body
    raise AssertionError(f"no plot {plot!r} in the page")


def series_lines(page: str, plot: str) -> list[Series]:
    """The data lines one plot drew, inside its axes (clipped to them), in order."""
    found = []
    for d, style in _PATH.findall(_svg_of(page, plot)):
        colour = _SERIES_STYLE.search(style)
        if colour is not None:
            points = [(float(x), float(y)) for x, y in _POINT.findall(d)]
            found.append(Series(colour.group(1), points))
    return found


def colour_pixels(png: Path, colour: str, tolerance: int = 40) -> list[tuple[int, int]]:
    """(x, y) of the pixels within ``tolerance`` (per channel) of ``colour`` (``#rrggbb``)."""
    import numpy as np
    from PIL import Image

    want = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.int16)
    with Image.open(png) as image:
        rgb = np.asarray(image.convert("RGB"), dtype=np.int16)
    ys, xs = np.nonzero((np.abs(rgb - want) <= tolerance).all(axis=2))
    return list(zip(xs.tolist(), ys.tolist(), strict=True))

"""Byte sizes and byte rates as a person reads them, the one formatter every face uses.

Binary units (``B``, ``KiB`` ... ``TiB``, one decimal above bytes); ``-`` when unknown. The
console's panels and the command line's reports write sizes through these, so a figure reads
the same wherever it is shown. Durations have theirs in :func:`konsole.model.timefmt.age_text`.
"""

from __future__ import annotations

__all__ = ["byte_rate_text", "bytes_text", "compact_rate_text"]

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def bytes_text(value: float | None) -> str:
    """``512 B``, ``3.1 KiB``, ``2.0 TiB`` (TiB the largest unit); ``-`` when unknown."""
    if value is None:
        return "-"
    size = float(value)
    for unit in _UNITS[:-1]:
        if abs(size) < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} {_UNITS[-1]}"


def byte_rate_text(value: float | None) -> str:
    """``3.1 KiB/s``; ``-`` when unknown."""
    return "-" if value is None else bytes_text(value) + "/s"


def compact_rate_text(value: float | None) -> str:
    """``50K/s``: a byte rate in at most 6 characters, for narrow table columns."""
    if value is None:
        return "-"
    for unit in ("", "K", "M"):
        if abs(value) < 1000:
            return f"{value:.0f}{unit}/s"
        value /= 1024
    return f"{value:.0f}G/s"

"""How a cluster session stands with its history file (recording, following, off), and
why: the one type the console's status bar and serve's ``/healthz`` read.

Stdlib only: the console imports it before its first paint.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

__all__ = ["HistoryMode", "HistoryStatus"]


class HistoryMode(StrEnum):
    #: This process polls and writes every poll into the history file.
    RECORDING = "recording"
    #: Another process (``konsole record``, a console, ``serve``) holds the file: this
    #: one reads what it writes instead of polling a second time.
    FOLLOWING = "following"
    #: No history (cannot be written, or not asked for): live only.
    OFF = "off"


@dataclass(frozen=True, slots=True)
class HistoryStatus:
    mode: HistoryMode = HistoryMode.OFF
    path: Path | None = None
    #: Why the history is off or not being written right now (secret-free).
    reason: str | None = None
    #: The file holds another cluster's polls before this moment (epoch seconds).
    other_until: float | None = None
    #: False when the polls before ``other_until`` carry no identity (a history kept by an
    #: older konsole): they may be this cluster's, nothing tells.
    other_proven: bool = True
    #: How this process came to record, said in the status bar (the recorder it followed
    #: is gone: it polls and writes the file now).
    note: str | None = None

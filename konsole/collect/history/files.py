"""The history files as the command line reaches them (DESIGN: no face imports ``store``).

The names the commands use to open, read and describe a history file, and the errors they
answer with their exit codes (:func:`konsole.cli.exits.history_failure`). They are
``store``'s own, named here so that the faces depend on ``konsole.collect`` alone; an
import-linter contract keeps ``konsole.cli`` from importing ``store`` itself. The
questions a face asks of a history are to become named functions here or in
``konsole.collect.history.rows`` (issue 39's one judged poll); until then this is the one door.

Imported when a command runs, not for ``--help``: ``store`` loads its modules (and sqlite3)
on first use. Polls go into a history one way only, through
:class:`konsole.collect.history.recorder.Recorder` (``check --record`` included): no writer here.
"""

from __future__ import annotations

from store import (
    SCHEMA_VERSION,
    HistoryError,
    HistoryLocked,
    HistoryUnwritable,
    RetentionPolicy,
    lock_holder,
    open_reader,
)
from store.queries import rates

__all__ = [
    "SCHEMA_VERSION",
    "HistoryError",
    "HistoryLocked",
    "HistoryUnwritable",
    "RetentionPolicy",
    "lock_holder",
    "open_reader",
    "rates",
]

"""What a path a user gives konsole may name, for the faces (DESIGN: no face imports store).

The file-kind rule is store's (:mod:`store.file_kinds`: the history files below konsole
need it too), named here for the command line and the console: a file to read must be a
regular file (a FIFO would hang the open), a file to write a regular file or a new name in
a directory that exists. On top of it, the history's own rule (:func:`history_refusal`).

Imports nothing but that rule: a command checks its paths before it loads anything else,
and ``konsole check`` starts without sqlite3 (tests/unit/test_startup_imports.py).
"""

from __future__ import annotations

from pathlib import Path

from store.file_kinds import input_refusal, kind_of, output_refusal

__all__ = ["history_refusal", "input_refusal", "kind_of", "output_refusal"]


def history_refusal(path: Path) -> str | None:
    """Why an explicit ``--history PATH`` cannot be a history file, whichever command is
    given it (None: it can). Its directory must exist: konsole makes only its own default
    history directory, never one a user named (a typo would leave the history elsewhere,
    or a read find nothing). A link to a regular file is taken (a history file may be
    kept anywhere); a dangling link, a link to something else and a special file are not."""
    why = output_refusal(path)
    if why is not None and not (path.is_symlink() and path.is_file()):
        return why
    return None

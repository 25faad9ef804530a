"""What a path names before konsole opens or replaces it: one rule for every file it reads
or writes (history files, exports, reports, the profiles file).

Opening a FIFO blocks until a writer comes (a hang); a device node or a symbolic link
replaced by a rename is lost (``-o /dev/full`` would become a regular file). So a file to
read must be a regular file, and a file to write must be a regular file or a new name in a
directory that exists. Pure checks on ``lstat`` / ``stat``; nothing is opened or created.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["input_refusal", "kind_of", "output_refusal"]


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def input_refusal(path: Path | str) -> str | None:
    """Why ``path`` must not be opened to read (None: a regular file, possibly through a
    link, or nothing there: the caller says what a missing file means)."""
    if str(path) == "":
        return "an empty path"
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # nothing there: the caller's case
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISREG(mode):
        return None
    return f"{kind_of(mode)}, not a regular file"


def output_refusal(path: Path | str) -> str | None:
    """Why ``path`` must not be written or replaced (None: a regular file, not a link, or a
    new name in a directory that exists)."""
    if str(path) == "":
        return "an empty path"
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        parent = Path(path).parent
        if not parent.is_dir():
            return f"no such directory {str(parent)!r}"
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link (konsole does not replace a link: give the file it points to)"
    return f"{kind_of(mode)}, not a regular file"

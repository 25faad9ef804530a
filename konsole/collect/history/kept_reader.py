"""One history reader kept between looks at a file another process writes.

Whoever follows a history (the console following ``konsole record``, ``serve``'s count of
operator actions) looks at it again and again. :class:`KeptReader` keeps one reader open
for those looks instead of opening one per look: a look costs a ``stat`` and its queries.
The reader is opened again only when the path names another file than the one it reads
(the path's ``(st_dev, st_ino)`` changed: the file was deleted, moved away or replaced, see
docs/history.md on faults); a file gone from the path is let go at once, never read where it
went. An empty file (a writer made it and committed nothing yet) is read empty and opened
again at the next look, until it holds a history. A look that cannot read the file
(missing, locked, not a history) gives None and drops the reader.

Blocking (SQLite): call from a thread. A lock makes :meth:`KeptReader.close` wait for a
look running in another thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from store import HistoryReader

__all__ = ["KeptReader", "file_identity"]

T = TypeVar("T")


def file_identity(path: Path) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of the file the path names now (None: nothing there)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class KeptReader:
    def __init__(self, path: Path) -> None:
        self.path = path
        #: Readers opened so far (one while the path names the same file).
        self.opened = 0
        #: The file the last look found at the path (None: none).
        self.file: tuple[int, int] | None = None
        self._reader: HistoryReader | None = None
        self._lock = threading.Lock()

    def read(self, look: Callable[[HistoryReader], T]) -> T | None:
        """``look(reader)`` on the kept reader of the file the path names now; None when
        there is no readable history there (``look`` raising a HistoryError included)."""
        from store import HistoryError

        with self._lock:
            seen = file_identity(self.path)
            if seen != self.file:
                self._drop()  # another file, or none: the old reader reads what is not here
                self.file = seen
            if seen is None:
                return None
            reader = self._open()
            if reader is None:
                return None
            try:
                return look(reader)
            except HistoryError:
                self._drop()
                return None
            finally:
                if reader is not self._reader:
                    reader.close()

    def close(self) -> None:
        """Close the reader (a later look opens one again)."""
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    def _open(self) -> HistoryReader | None:
        if self._reader is not None:
            return self._reader
        from store import HistoryError, open_reader

        try:
            reader = open_reader(self.path)
        except HistoryError:
            return None
        self.opened += 1
        if file_identity(self.path) != self.file:
            reader.close()  # replaced while being opened: the next look sees which file
            return None
        if reader.version:  # an empty file's reader stays empty: not kept
            self._reader = reader
        return reader

"""Opening a history file: tell a konsole history from anything else before writing a byte.

Checks run on a read-only connection (``mode=ro``), so a newer, foreign or corrupt file is
refused untouched. Writers then open read-write, in WAL mode: readers never block the
writer and the writer never blocks readers.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from pathlib import Path
from typing import Final

from store.errors import HistoryLocked, HistoryUnwritable, NewerSchema, NotAHistoryFile
from store.schema import APPLICATION_ID, VERSION, new_file_pragmas

__all__ = ["WriterLock", "connect", "inspect", "lock_holder", "lock_path", "translate"]

_MAGIC: Final = b"SQLite format 3\x00"
#: How long a statement waits for another connection's lock (a checkpoint, a note).
BUSY_TIMEOUT_MS: Final = 10_000


def inspect(path: Path) -> int:
    """The file's schema version (0 for a missing or empty file); raises when it is not a
    konsole history this version can use. Never writes."""
    try:
        with path.open("rb") as f:
            head = f.read(len(_MAGIC))
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise HistoryUnwritable(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not head:
        return 0
    if head != _MAGIC:
        raise NotAHistoryFile(f"{path}: not an SQLite file (left untouched)")
    try:
        conn = sqlite3.connect(f"file:{_quote(path)}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise NotAHistoryFile(f"{path}: cannot be opened as SQLite: {exc}") from None
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        app = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise NotAHistoryFile(
            f"{path}: corrupt or not a database ({exc}; left untouched)"
        ) from None
    finally:
        conn.close()
    if app != APPLICATION_ID and (tables or version):
        raise NotAHistoryFile(
            f"{path}: an SQLite database of another program, not a konsole history (left untouched)"
        )
    if version > VERSION:
        raise NewerSchema(
            f"{path}: written by a newer konsole (history schema {version}, this konsole "
            f"reads up to {VERSION}); refused, the file is not changed",
            found=version,
            supported=VERSION,
        )
    return int(version)


def _quote(path: Path) -> str:
    return str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def connect(path: Path, *, readonly: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit)."""
    mode = "ro" if readonly else "rwc"
    fresh = not readonly and (not path.exists() or path.stat().st_size == 0)
    try:
        conn = sqlite3.connect(
            f"file:{_quote(path)}?mode={mode}",
            uri=True,
            isolation_level=None,
            timeout=BUSY_TIMEOUT_MS / 1000,
            check_same_thread=False,
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if fresh:
            new_file_pragmas(conn)  # before WAL, which writes the first page
        if not readonly:
            conn.execute("PRAGMA journal_mode = WAL")
            # WAL + NORMAL: a commit survives the process being killed (the OS has it);
            # only a power cut can lose the last commits. See docs/history.md.
            conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.Error as exc:
        raise translate(exc, path) from None
    return conn


def translate(exc: sqlite3.Error, path: Path) -> Exception:
    """An sqlite3 error as the store's error, saying what happened to the file."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text:
        return NotAHistoryFile(f"{path}: corrupt ({text}); left as it is")
    if name.startswith("SQLITE_FULL"):
        return HistoryUnwritable(f"{path}: disk full ({text})")
    if name.startswith("SQLITE_READONLY"):
        return HistoryUnwritable(f"{path}: read-only ({text})")
    if name.startswith(("SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_BUSY", "SQLITE_PERM")):
        return HistoryUnwritable(f"{path}: {text}")
    return HistoryUnwritable(f"{path}: {text}")


# =========================================================================== the writer lock


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


class WriterLock:
    """One recorder per file: an ``flock`` on ``<file>.lock`` holding the holder's pid.

    The kernel drops the lock when the holder exits, even on SIGKILL, so a dead recorder
    never blocks the next one.
    """

    def __init__(self, path: Path) -> None:
        self.path = lock_path(path)
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise HistoryUnwritable(
                f"{self.path}: cannot create the writer lock: {exc.strerror or exc}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pid = _read_pid(fd)
            os.close(fd)
            holder = f"pid {pid}" if pid else "another process"
            raise HistoryLocked(
                f"{self.path.with_suffix('')}: another recorder ({holder}) is writing this "
                "history; stop it or choose another --history",
                pid=pid,
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass  # the flock is what counts; the pid is for the message
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def lock_holder(path: Path) -> int | None:
    """The pid of the recorder writing ``path`` now, or None."""
    try:
        fd = os.open(lock_path(path), os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _read_pid(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)

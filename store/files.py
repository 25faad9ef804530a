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
from typing import Any, Final

from store.errors import HistoryLocked, HistoryUnwritable, NewerSchema, NotAHistoryFile
from store.file_kinds import input_refusal
from store.schema import APPLICATION_ID, VERSION, new_file_pragmas

__all__ = [
    "FileWatch",
    "WriterLock",
    "connect",
    "inspect",
    "lock_holder",
    "lock_path",
    "translate",
]

_MAGIC: Final = b"SQLite format 3\x00"
#: How long a statement waits for another connection's lock (a checkpoint, a note).
BUSY_TIMEOUT_MS: Final = 10_000


def inspect(path: Path) -> int:
    """The file's schema version (0 for a missing or empty file); raises when it is not a
    konsole history this version can use. Never writes, and never opens anything but a
    regular file (a FIFO would block the open)."""
    if (why := input_refusal(path)) is not None:
        raise NotAHistoryFile(f"{path}: {why} (left untouched)")
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
        conn = _open_read_only(path)
    except sqlite3.OperationalError as exc:  # the file could not be opened: not its content
        raise HistoryUnwritable(f"{path}: cannot be opened: {exc}", retriable=False) from None
    except sqlite3.DatabaseError as exc:
        raise NotAHistoryFile(
            f"{path}: corrupt or not a database ({exc}; left untouched)"
        ) from None
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


def _open_read_only(path: Path, **options: Any) -> sqlite3.Connection:
    """A read-only connection that has read the header. A WAL file in a directory this
    process cannot write (a read-only mount, another user's folder) cannot be opened
    ``mode=ro``: SQLite must make its ``-shm`` beside it. With no ``-wal`` holding
    recent writes the file alone is the whole history, read ``immutable``; otherwise
    the directory is the trouble, said so (never "corrupt")."""
    uri = f"file:{_quote(path)}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, **options)
        conn.execute("PRAGMA schema_version").fetchone()  # opens the file for real
        return conn
    except sqlite3.OperationalError:
        if os.access(path.parent, os.W_OK):
            raise
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise HistoryUnwritable(
            f"{path}: its directory is not writable, and its -wal file holds writes that "
            "SQLite can read only with its -shm file beside it: copy both files elsewhere, "
            "or read it as a user who can write the directory",
            retriable=False,
        )
    return sqlite3.connect(f"{uri}&immutable=1", uri=True, **options)


def connect(path: Path, *, readonly: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit); read-only, also from a
    directory that cannot be written (:func:`_open_read_only`)."""
    mode = "ro" if readonly else "rwc"
    fresh = not readonly and (not path.exists() or path.stat().st_size == 0)
    try:
        options: dict[str, Any] = {
            "isolation_level": None,
            "timeout": BUSY_TIMEOUT_MS / 1000,
            "check_same_thread": False,
        }
        if readonly:
            conn = _open_read_only(path, **options)
        else:
            conn = sqlite3.connect(f"file:{_quote(path)}?mode={mode}", uri=True, **options)
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


# =========================================================================== the file watch

#: Only to fstat the open file: O_PATH opens nothing and holds no lock (Linux).
_WATCH_FLAGS: Final = getattr(os, "O_PATH", os.O_RDONLY) | os.O_CLOEXEC


class FileWatch:
    """Whether a path still names the file a writer has open, for one ``stat`` per look.

    SQLite goes on writing into a file that was deleted, moved or replaced under it, without
    an error: every commit would vanish with the unlinked file. The watch keeps a read-only
    descriptor of the file the connection opened and compares the path's ``(st_dev,
    st_ino)`` with it; the descriptor's link count then tells a file moved elsewhere (its
    commits are kept there) from one deleted (they are gone).

    SQLite does not checkpoint at close a file that moved or was deleted, and leaves its
    ``-wal`` and ``-shm`` files at the path, where it would replay them into the next file
    made there: the writer checkpoints first, and :meth:`remove_leftovers` removes them
    (only those seen while the path named the open file).

    The descriptor is ``O_PATH`` on Linux: closing it cannot drop the process's POSIX locks
    on the file (closing an ordinary descriptor of a file drops them all, SQLite's
    included); elsewhere it is read-only and closed only after the writer's connection.
    """

    SIDECARS: Final = ("-wal", "-shm")

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._fd: int | None = os.open(path, _WATCH_FLAGS)
            st = os.fstat(self._fd)
        except OSError as exc:
            raise HistoryUnwritable(f"{path}: cannot be opened: {exc.strerror or exc}") from None
        self._id = (st.st_dev, st.st_ino)
        self._sidecars: dict[Path, tuple[int, int]] | None = None

    def _sidecar_ids(self) -> dict[Path, tuple[int, int]]:
        found = {}
        for suffix in self.SIDECARS:
            side = self.path.with_name(self.path.name + suffix)
            with contextlib.suppress(OSError):
                st = os.stat(side)
                found[side] = (st.st_dev, st.st_ino)
        return found

    def trouble(self) -> str | None:
        """None while the path names the open file; else what became of it, in words."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if not self.path.parent.is_dir():
                return f"{self.path}: its directory was removed"
            return f"{self.path}: the file was {'moved away' if self.linked else 'deleted'}"
        except OSError as exc:
            return f"{self.path}: cannot be looked at: {exc.strerror or exc}"
        if (st.st_dev, st.st_ino) != self._id:
            return f"{self.path}: replaced by another file"
        if self._sidecars is None or len(self._sidecars) < len(self.SIDECARS):
            self._sidecars = self._sidecar_ids()  # once both exist: SQLite keeps them open
        return None

    def remove_leftovers(self) -> None:
        """After the connection closed on a file gone from the path: remove the WAL and
        shared-memory files it left there (never another file's)."""
        known = self._sidecars or {}
        for side, ident in self._sidecar_ids().items():
            if known.get(side) == ident:
                with contextlib.suppress(OSError):
                    side.unlink()

    @property
    def linked(self) -> bool:
        """Whether the open file still has a name (a moved file does, a deleted one not)."""
        if self._fd is None:
            return False
        try:
            return os.fstat(self._fd).st_nlink > 0
        except OSError:
            return False

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


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

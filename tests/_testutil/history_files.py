"""Looking at history files from outside, as an operator's ``sqlite3`` would: the polls a
file holds (checked sound, in time order, none twice) and a consistent copy of one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["backup", "is_foreign_database", "poll_seqs", "put_foreign_database"]


def poll_seqs(path: Path) -> list[int]:
    """The polls of one file in the order written; fails unless ``integrity_check`` is ok,
    times grow and no poll is there twice."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", path
        rows = conn.execute("SELECT seq, at_ms FROM polls ORDER BY id").fetchall()
    finally:
        conn.close()
    at = [a for _, a in rows]
    assert at == sorted(set(at)), f"{path}: polls out of time order"
    found = [s for s, _ in rows]
    assert len(set(found)) == len(found), f"{path}: a poll written twice"
    return found


def backup(path: Path, to: Path) -> None:
    """A consistent copy of what the file holds now (its writer goes on writing)."""
    src = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    dst = sqlite3.connect(to)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def put_foreign_database(path: Path) -> None:
    """Replace ``path`` (atomically, as ``mv`` does) by another program's SQLite database."""
    foreign = path.with_name(path.name + ".foreign")
    conn = sqlite3.connect(foreign)
    try:
        conn.execute("CREATE TABLE theirs (x)")
        conn.commit()
    finally:
        conn.close()
    foreign.replace(path)


def is_foreign_database(path: Path) -> bool:
    """Still the database :func:`put_foreign_database` put there, untouched by konsole."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT name FROM sqlite_master").fetchall() == [("theirs",)]
    finally:
        conn.close()

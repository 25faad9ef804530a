"""`konsole serve`'s operator feed keeps one history reader for its life
(:class:`konsole.collect.history.operator_feed.OperatorFeed`): many looks, one reader; the reader is
opened again only when the path names another file (deleted, moved away, replaced), and a
file left behind is never held open."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from konsole.collect.history.operator_feed import OperatorFeed
from store import add_event, open_writer
from store.rows import EventRow
from tests._testutil.builders import operator_row


def operator(action: str) -> EventRow:
    return operator_row(action, "succeeded")


def history(path: Path) -> Path:
    open_writer(path).close()
    return path


def held(name: str) -> list[str]:
    """The files named ``name`` (or its sidecars) this process holds open, as the kernel
    names them (a deleted one ends in ``(deleted)``)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if os.path.basename(target).startswith(name):
            found.append(target)
    return found


def test_many_looks_one_reader(tmp_path: Path) -> None:
    path = history(tmp_path / "h.sqlite")
    feed = OperatorFeed(path)
    for i in range(20):
        add_event(path, operator(f"a{i % 3}"))
        assert feed.look() == 1
    assert feed.opened == 1
    assert sum(feed.counts.values()) == 20
    feed.close()
    assert held("h.sqlite") == []


def test_a_replaced_file_is_read_from_its_start_by_a_new_reader(tmp_path: Path) -> None:
    path = history(tmp_path / "h.sqlite")
    add_event(path, operator("old"))
    feed = OperatorFeed(path)
    assert feed.look() == 0 and feed.opened == 1
    other = history(tmp_path / "other.sqlite")
    add_event(other, operator("new"))
    add_event(other, operator("new"))
    other.replace(path)
    assert feed.look() == 2
    assert feed.opened == 2 and dict(feed.counts) == {("new", "succeeded"): 2}
    assert not any(t.endswith("(deleted)") for t in held("h.sqlite"))
    feed.close()


def test_a_deleted_file_is_let_go_and_one_made_again_read(tmp_path: Path) -> None:
    path = history(tmp_path / "h.sqlite")
    feed = OperatorFeed(path)
    assert feed.look() == 0
    path.unlink()
    assert feed.look() == 0
    assert held("h.sqlite") == []  # the deleted file is not kept open
    assert feed.look() == 0 and feed.opened == 1  # nothing there: nothing opened
    history(path)
    add_event(path, operator("again"))
    assert feed.look() == 1 and feed.opened == 2
    feed.close()


def test_a_file_moved_away_is_not_followed_there(tmp_path: Path) -> None:
    path = history(tmp_path / "h.sqlite")
    feed = OperatorFeed(path)
    assert feed.look() == 0
    moved = tmp_path / "moved.sqlite"
    path.rename(moved)
    add_event(moved, operator("elsewhere"))
    assert feed.look() == 0
    assert held("moved.sqlite") == []
    history(path)
    add_event(path, operator("here"))
    assert feed.look() == 1 and dict(feed.counts) == {("here", "succeeded"): 1}
    feed.close()


def test_an_empty_file_is_opened_again_until_it_holds_a_history(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    path.touch()  # a writer made it and has committed nothing yet
    feed = OperatorFeed(path)
    assert feed.look() == 0
    assert held("h.sqlite") == []
    writer = open_writer(path)
    writer.close()
    add_event(path, operator("first"))
    assert feed.look() == 1
    assert feed.look() == 0
    opened = feed.opened
    assert feed.look() == 0 and feed.opened == opened  # kept from now on
    feed.close()


def test_close_waits_for_a_look_in_another_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve's stop closes the feed while a look may be reading in its worker thread: the
    close waits for the look, never closes the reader under it."""
    import store.queries

    path = history(tmp_path / "h.sqlite")
    feed = OperatorFeed(path)
    add_event(path, operator("x"))
    inside, release = threading.Event(), threading.Event()
    real = store.queries.events_after

    def slow(*args: Any, **kwargs: Any) -> Any:
        inside.set()
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(store.queries, "events_after", slow)
    looked: list[int] = []
    look = threading.Thread(target=lambda: looked.append(feed.look()))
    look.start()
    assert inside.wait(10)
    close = threading.Thread(target=feed.close)
    close.start()
    close.join(0.3)
    assert close.is_alive()  # waiting for the look
    release.set()
    look.join(10)
    close.join(10)
    assert looked == [1] and not close.is_alive()
    assert held("h.sqlite") == []

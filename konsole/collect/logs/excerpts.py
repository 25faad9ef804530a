"""Log excerpts for the history: a server's lines around each warning or critical event.

The recorder hands every event it wrote to :meth:`ExcerptKeeper.note`. An event about a
server (its subject names a tablet server or a coordinator) with a log source becomes a
pending excerpt of ``[at - before_s, at + after_s]``: the lines after the event (a restart's
start-up) exist only later, so it is read once ``after_s`` have passed, in a background
thread (a log command may take its whole timeout; the poll never waits for it).
:meth:`ExcerptKeeper.ready` returns the finished rows for the recorder to write from its
own thread (one SQLite writer). An event of a server whose excerpt already covers it adds
nothing. Bounded: ``max_lines`` per excerpt, at most :data:`MAX_PENDING` waiting.

A source that fails is recorded too (``error``, no lines): the evidence then says why the
log is missing instead of showing nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Final

from konsole.collect.logs.reading import (
    CommandSource,
    LogConfig,
    LogSourceError,
    read_log,
    server_ref,
)
from konsole.model.logs import in_window
from store.rows import EventRow, LogExcerptRow

__all__ = [
    "AFTER_S",
    "BEFORE_S",
    "MAX_EXCERPT_LINES",
    "ExcerptKeeper",
    "command_sources",
    "take_excerpt",
]

BEFORE_S: Final = 60.0
AFTER_S: Final = 30.0
MAX_EXCERPT_LINES: Final = 300
#: Bytes of one excerpt (before compression), and of one line in it (a bucket list can be
#: tens of kilobytes on one line).
MAX_EXCERPT_BYTES: Final = 128 * 1024
MAX_LINE_BYTES: Final = 2048
MAX_PENDING: Final = 32
_SEVERITIES: Final = frozenset({"warning", "critical"})
_SERVER_PREFIXES: Final = ("tablet-server ", "coordinator ")


@dataclass(slots=True)
class _Pending:
    event: EventRow
    from_ms: int
    to_ms: int
    future: Future[LogExcerptRow] | None = None


def take_excerpt(
    logs: LogConfig, event: EventRow, from_ms: int, to_ms: int, max_lines: int
) -> LogExcerptRow:
    """Read the server's log now and keep the lines of the window (blocking)."""
    source = logs.source_for(event.subject)
    assert source is not None
    base = LogExcerptRow(event.at_ms, event.subject, event.kind, from_ms, to_ms, source.describe())
    try:
        server = server_ref(event.subject, _address(event))
        lines = read_log(source, server, since=from_ms / 1000)
    except LogSourceError as exc:
        return replace(base, error=str(exc))
    kept = in_window(lines, from_ms / 1000, to_ms / 1000)[-max_lines:]
    return replace(base, lines=_bounded([line.raw for line in kept]))


def _bounded(lines: list[str]) -> tuple[str, ...]:
    """The last lines within :data:`MAX_EXCERPT_BYTES`, each cut at :data:`MAX_LINE_BYTES`."""
    out: list[str] = []
    total = 0
    for line in reversed(lines):
        if len(line) > MAX_LINE_BYTES:
            line = line[:MAX_LINE_BYTES] + " [...]"
        total += len(line) + 1
        if total > MAX_EXCERPT_BYTES:
            break
        out.append(line)
    return tuple(reversed(out))


def _address(event: EventRow) -> str | None:
    """The server's ``host:port`` when the event carries it (server_left, server_joined)."""
    try:
        stored = json.loads(event.details or "{}")
    except ValueError:
        return None
    address = (stored.get("details") or stored).get("address")
    return address if isinstance(address, str) else None


def command_sources(logs: LogConfig) -> list[CommandSource]:
    """The commands among ``logs``' sources (their timeouts bound a wait for them)."""
    sources = [logs.default, *logs.servers.values()]
    return [s for s in sources if isinstance(s, CommandSource)]


class ExcerptKeeper:
    """Pending excerpts, read in one background thread once their window has passed."""

    def __init__(
        self,
        logs: LogConfig,
        *,
        before_s: float = BEFORE_S,
        after_s: float = AFTER_S,
        max_lines: int = MAX_EXCERPT_LINES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.logs = logs
        self._before_ms, self._after_ms = round(before_s * 1000), round(after_s * 1000)
        self._max_lines = max_lines
        self._clock = clock
        self._pending: list[_Pending] = []
        self._pool: ThreadPoolExecutor | None = None

    def note(self, events: Sequence[EventRow]) -> None:
        """Events just written: those about a server with a log source wait for their
        window to pass."""
        for event in events:
            if (
                event.severity not in _SEVERITIES
                or not event.subject.startswith(_SERVER_PREFIXES)
                or self.logs.source_for(event.subject) is None
                or len(self._pending) >= MAX_PENDING
            ):
                continue
            if any(
                p.event.subject == event.subject and p.from_ms <= event.at_ms <= p.to_ms
                for p in self._pending
            ):
                continue
            self._pending.append(
                _Pending(event, event.at_ms - self._before_ms, event.at_ms + self._after_ms)
            )

    def ready(self, *, all_now: bool = False, wait_s: float = 0.0) -> list[LogExcerptRow]:
        """Start the reads whose window has passed (every read with ``all_now``) and
        return the finished rows (waiting up to ``wait_s`` for each started one)."""
        now_ms = round(self._clock() * 1000)
        for p in self._pending:
            if p.future is None and (all_now or p.to_ms <= now_ms):
                to_ms = min(p.to_ms, now_ms) if all_now else p.to_ms
                p.future = self._executor().submit(
                    take_excerpt, self.logs, p.event, p.from_ms, to_ms, self._max_lines
                )
        done: list[LogExcerptRow] = []
        for p in list(self._pending):
            if p.future is None:
                continue
            if wait_s > 0:
                try:
                    p.future.result(wait_s)
                except TimeoutError:
                    continue
            if p.future.done():
                self._pending.remove(p)
                done.append(p.future.result())
        return done

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="konsole-log-excerpts")
        return self._pool

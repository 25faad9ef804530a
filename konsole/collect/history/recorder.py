"""The recorder: snapshots in, one committed transaction per poll out, never dead on a fault.

:class:`Recorder` writes what it is handed: each poll as judged
(:class:`~konsole.model.poll.JudgedPoll`: stamped and judged once, by the cluster session or
the command that polls, before it gets here) through :class:`store.HistoryWriter`, and
applies retention now and then. It derives nothing and stamps nothing.

A history that cannot be written does not stop it, and loses nothing it can keep: a full
disk, a read-only file system, a failed write, the file deleted, moved or replaced under
it, its directory removed, another recorder that took the file meanwhile. It says once
that it is not recording and why (``say``, :attr:`Recorder.status`, and a
``history_trouble`` event written into the next history it can write), keeps polling,
keeps the polls taken meanwhile in memory (up to ``backlog_polls``, the oldest dropped and
counted beyond that), opens the path again when the file there is not the one it had
(never a file that is not a konsole history: the store refuses those), and writes the kept
polls in order, each once, when it can. Refusals that no retry fixes (a newer schema, a
corrupt or foreign file, another recorder at start) raise at :meth:`Recorder.open`.

Poll times never go back (:class:`~konsole.collect.poll_timeline.Timeline`, which the
recorder floors with the newest poll of the file it opens; the poller's owner stamps on
it). Retention is scheduled and judges ages at the :class:`Pace`'s present: the
wall clock with its jumps either way held back, so a clock that leaps ahead and back
neither reorders polls nor deletes any that are not old.

Each poll carries the cluster's identity (:mod:`konsole.model.identity`, with ``run_id`` for
a local cluster): a poll of another cluster than the history's current epoch starts a new
epoch; :meth:`Recorder.another_cluster` tells the judge to start afresh (nothing of the
other cluster is compared).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from konsole.collect.history.rows import epoch_mark, event_row, poll_record, with_epoch
from konsole.collect.logs.excerpts import ExcerptKeeper, command_sources
from konsole.collect.logs.reading import LogConfig
from konsole.collect.poll_timeline import Timeline
from konsole.model.events import Event, EventKind, Severity
from konsole.model.events.base import Subject
from konsole.model.identity import UNIDENTIFIED, identity_of
from konsole.model.poll import JudgedPoll
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.timefmt import to_ms
from store import (
    HistoryError,
    HistoryGone,
    HistoryLocked,
    HistoryUnwritable,
    HistoryWriter,
    RetentionPolicy,
    apply_retention,
    open_writer,
)
from store.rows import EventRow, PollRecord

__all__ = [
    "BACKLOG_POLLS",
    "RETENTION_EVERY_S",
    "Pace",
    "Recorder",
    "RecorderStatus",
]

#: Retention runs at most this often (and once at start).
RETENTION_EVERY_S: Final = 600.0
#: Polls kept in memory while the history cannot be written: an hour of 10 s polls.
BACKLOG_POLLS: Final = 360


@dataclass(frozen=True, slots=True)
class RecorderStatus:
    recording: bool
    polls_recorded: int
    #: Polls that will never be written (dropped from a full backlog, or left at close).
    polls_missed: int
    #: Why the last poll was not recorded (None while recording).
    reason: str | None
    #: Polls taken while the history could not be written, kept to be written.
    polls_waiting: int = 0
    #: Every poll given to :meth:`Recorder.record`.
    polls_taken: int = 0
    #: Stretches of trouble begun (each said once): a fault, even one healed within a poll.
    troubles: int = 0


class Pace:
    """The present retention judges ages by: the wall clock, with its jumps held back.

    Between two looks the wall clock should move as the monotonic clock does; a step more
    than ``slack_ms`` away from it is a jump (an operator's typo, a bad time server, a
    resumed virtual machine) and is held back, so retention neither deletes a day of
    polls because the clock leapt a day ahead nor stops because it fell back. A jump back
    cancels the jump forward it undoes. A jump still held after ``settle_s`` is taken as
    the truth (a correction); the present never goes back, it waits for the wall instead.
    """

    def __init__(
        self, monotonic: Callable[[], float], *, settle_s: float = 3600.0, slack_ms: int = 5000
    ) -> None:
        self._monotonic = monotonic
        self._settle_s = settle_s
        self._slack_ms = slack_ms
        self._wall: int | None = None
        self._mono = 0.0
        self._held = 0  # ms the wall is ahead (+) or behind (-) of where it should be
        self._since: float | None = None
        self._last: int | None = None

    def present(self, wall_ms: int) -> tuple[int, int]:
        """(the present in ms, the jump seen at this look in ms, 0 for none)."""
        mono = self._monotonic()
        step = 0
        if self._wall is not None:
            step = (wall_ms - self._wall) - round((mono - self._mono) * 1000)
            if abs(step) > self._slack_ms:
                self._held += step
                self._since = mono if self._since is None else self._since
            else:
                step = 0
            if self._since is not None and (
                abs(self._held) <= self._slack_ms or mono - self._since >= self._settle_s
            ):
                self._held, self._since = 0, None
        self._wall, self._mono = wall_ms, mono
        now = wall_ms - self._held
        self._last = now if self._last is None else max(self._last, now)
        return self._last, step


@dataclass(slots=True)
class _Trouble:
    """One stretch of time in which the history could not be written."""

    since: float
    reasons: list[str] = field(default_factory=list)
    #: The history_trouble event, until a history holds it.
    unwritten: Event | None = None
    kept: int = 0


def _keep_excerpts(
    excerpts: ExcerptKeeper,
    writer: HistoryWriter | None,
    say: Callable[[str], None],
    *,
    all_now: bool = False,
) -> None:
    """Write the log excerpts whose reads finished (excerpts are evidence, not polls:
    one the history refuses is dropped and said)."""
    wait_s = max((s.timeout for s in command_sources(excerpts.logs)), default=2.0)
    for row in excerpts.ready(all_now=all_now, wait_s=wait_s if all_now else 0.0):
        if writer is None:
            continue
        try:
            writer.add_log_excerpt(row)
        except HistoryError as exc:
            say(f"log excerpt of {row.subject} not kept: {exc}")


class Recorder:
    def __init__(
        self,
        path: Path,
        *,
        policy: RetentionPolicy | None = None,
        timeline: Timeline | None = None,
        say: Callable[[str], None] = print,
        on_event: Callable[[Event], None] | None = None,
        on_commit: Callable[[ClusterSnapshot, int], None] | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        retention_every_s: float | None = RETENTION_EVERY_S,
        backlog_polls: int = BACKLOG_POLLS,
        run_id: str | None = None,
        logs: LogConfig | None = None,
    ) -> None:
        self.path = path
        #: The local cluster's run id (None for any other cluster): part of its identity.
        self.run_id = run_id
        self.policy = policy or RetentionPolicy()
        self._say = say
        #: Called with each event of the history's own (history_trouble) as it is made.
        self.on_event = on_event
        self._on_commit = on_commit
        self._clock = clock
        #: The poll timeline: floored here with the file's newest poll, stamped by the judge's
        #: owner (its own when none is given: a recorder handed stamped polls in tests).
        self.timeline = timeline or Timeline(monotonic)
        self._pace = Pace(monotonic)
        self._retention_every = retention_every_s
        self._writer: HistoryWriter | None = None
        #: The storage part last written (each is written once, on the poll that brought it).
        self._storage_at: float | None = None
        self._next_retention: int | None = None  # on the timeline, in ms
        self._reason: str | None = None
        self._taken = 0
        self._recorded = 0
        self._missed = 0
        self._backlog: deque[tuple[ClusterSnapshot, tuple[EventRow, ...]]] = deque()
        self._backlog_polls = max(1, backlog_polls)
        self._trouble: _Trouble | None = None
        self._troubles = 0
        # The console records and closes from worker threads: a close while a poll is
        # being written waits for it (the kept polls and the writer are not shared).
        self._busy = threading.Lock()
        #: Servers' log lines around warning and critical events (none without sources).
        self._excerpts = ExcerptKeeper(logs) if logs is not None and logs.configured else None

    @property
    def say(self) -> Callable[[str], None]:
        """Where this recorder says its lines (the judge's owner says its own there too)."""
        return self._say

    @property
    def status(self) -> RecorderStatus:
        return RecorderStatus(
            self._writer is not None and self._reason is None,
            self._recorded,
            self._missed,
            self._reason,
            len(self._backlog),
            self._taken,
            self._troubles,
        )

    def open(self) -> None:
        """Take the file. Raises HistoryLocked, NewerSchema, NotAHistoryFile (refused);
        an unwritable place is not fatal: the recorder starts not recording."""
        try:
            self._writer = open_writer(self.path)
        except HistoryUnwritable as exc:
            self._fault(str(exc), self._now())
        else:
            self.timeline.floor(self._writer.last_at_ms)

    def close(self) -> None:
        """Write what is kept if the history takes it now; the rest is counted missed."""
        with self._busy:
            self._close()

    def _close(self) -> None:
        if self._backlog:
            self._flush(None)
        if self._excerpts is not None:  # what the windows hold so far, bounded by the timeout
            _keep_excerpts(self._excerpts, self._writer, self._say, all_now=True)
            self._excerpts.close()
        if self._backlog:
            self._missed += len(self._backlog)
            self._say(f"stopping with {len(self._backlog)} poll(s) not written: {self._reason}")
            self._backlog.clear()
        self._drop_writer()

    def _drop_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    # ------------------------------------------------------------------ one poll

    def record(self, judged: JudgedPoll) -> int | None:
        """The judged poll and its events in one transaction; returns the poll id once
        committed, else None (the poll is then kept in memory and written with a later one)."""
        with self._busy:
            return self._record(judged.snapshot, judged.events)

    def _record(self, snapshot: ClusterSnapshot, events: tuple[Event, ...]) -> int | None:
        self._taken += 1
        if len(self._backlog) >= self._backlog_polls:
            self._backlog.popleft()
            self._missed += 1
            if self._missed == 1 or self._missed % self._backlog_polls == 0:
                self._say(
                    f"{self._missed} poll(s) lost: more than {self._backlog_polls} waited "
                    "for the history (the oldest are dropped)"
                )
        self._backlog.append((snapshot, tuple(event_row(e) for e in events)))
        written = self._flush(snapshot)
        if written is not None:
            self._maybe_retain()
        if self._excerpts is not None:
            _keep_excerpts(self._excerpts, self._writer, self._say)
        return written

    def _now(self) -> float:
        """Now on the poll timeline (for a fault seen between polls)."""
        return self.timeline.now_ms(to_ms(self._clock())) / 1000

    def _emit(self, event: Event) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _flush(self, current: ClusterSnapshot | None) -> int | None:
        """Write the kept polls in order, oldest first, the current one last; opens the
        path again at most once per call. Returns the current poll's id if written."""
        written: int | None = None
        reopens = 1
        while self._backlog:
            if self._writer is None:
                if reopens == 0 or not self._reopen():
                    break
                reopens -= 1
            snapshot, rows = self._backlog[0]
            try:
                poll_id = self._write(snapshot, rows)
            except HistoryGone as exc:
                self._drop_writer()
                self._fault(str(exc), snapshot.taken_at)
                if exc.poll_id is None:
                    continue  # nothing of it survives: written again into the next file
                poll_id = exc.poll_id  # committed into the file that moved: kept there
            except HistoryUnwritable as exc:
                self._fault(str(exc), snapshot.taken_at)
                break
            except HistoryError as exc:  # corrupt under our feet: open the path again
                self._drop_writer()
                self._fault(str(exc), snapshot.taken_at)
                break
            self._backlog.popleft()
            if poll_id is not None:
                if self._excerpts is not None:
                    self._excerpts.note(rows)
                self._committed(snapshot, poll_id)
                written = poll_id if snapshot is current else written
        if not self._backlog and self._writer is not None:
            self._resumed(current)
        return written

    def _write(self, snapshot: ClusterSnapshot, rows: tuple[EventRow, ...]) -> int | None:
        """One kept poll into the open file; None when the file already holds later polls
        (it replaced ours): the poll is dropped and counted rather than written out of order."""
        assert self._writer is not None
        last = self._writer.last_at_ms
        if last is not None and to_ms(snapshot.taken_at) <= last:
            self._missed += 1
            self._say(f"poll {snapshot.seq} not written: {self.path} holds later polls")
            return None
        trouble = self._trouble
        if trouble is not None and trouble.unwritten is not None:
            rows = (*rows, self._trouble_row(trouble, trouble.unwritten))
        part = snapshot.storage
        new_part = part is not None and part.taken_at != self._storage_at
        record = poll_record(snapshot, rows, storage=new_part)
        poll_id = self._writer.record(self._in_epoch(snapshot, record))
        if new_part and part is not None:
            self._storage_at = part.taken_at
        if trouble is not None:
            trouble.unwritten = None
        return poll_id

    def _committed(self, snapshot: ClusterSnapshot, poll_id: int) -> None:
        self._recorded += 1
        if self._trouble is not None:
            self._trouble.kept += 1
        if self._on_commit is not None:
            self._on_commit(snapshot, poll_id)

    # ------------------------------------------------------------------ epochs

    @property
    def other_cluster_until(self) -> float | None:
        """When the history's current epoch began, if an earlier one holds another cluster
        (epoch seconds), else None."""
        epoch = self._writer.epoch if self._writer is not None else None
        if epoch is None or epoch.id <= 1:
            return None
        return epoch.from_ms / 1000

    @property
    def other_cluster_proven(self) -> bool:
        """Whether the epoch before the current one is known to be another cluster (False
        after polls recorded without an identity: a konsole upgrade, not a new cluster)."""
        epoch = self._writer.epoch if self._writer is not None else None
        return epoch is None or epoch.reason != UNIDENTIFIED

    def another_cluster(self, snapshot: ClusterSnapshot) -> bool:
        """Whether ``snapshot`` (stamped, not yet judged) is of another cluster than the
        history's current epoch: its judge then starts afresh."""
        seen = identity_of(snapshot, run_id=self.run_id)
        if seen is None or self._writer is None:
            return False
        mark = epoch_mark(self._writer.epoch, seen)
        return mark is not None and mark.start

    def _in_epoch(self, snapshot: ClusterSnapshot, record: PollRecord) -> PollRecord:
        """``record`` with its epoch mark (none for a failed poll: it shows no identity)."""
        if self._writer is None:
            return record
        current = self._writer.epoch
        marked = with_epoch(record, snapshot, current, run_id=self.run_id)
        mark = marked.epoch
        if mark is not None and mark.start and current is not None:
            self._say(f"a new epoch of this history: {mark.reason}")
        elif mark is not None and not mark.start and mark.reason:
            self._say(mark.reason)  # the same cluster changed: said, no new epoch
        return marked

    def _reopen(self) -> bool:
        try:
            self._writer = open_writer(self.path)
        except (HistoryUnwritable, HistoryLocked) as exc:
            self._fault(str(exc), self._now())
            return False
        except HistoryError as exc:  # a foreign or corrupt file at the path: never written
            self._fault(str(exc), self._now())
            return False
        self.timeline.floor(self._writer.last_at_ms)
        return True

    # ------------------------------------------------------------------ trouble

    def _fault(self, reason: str, at: float) -> None:
        """Say once per reason; start a stretch of trouble (and its event) if none is on."""
        trouble = self._trouble
        if trouble is None:
            trouble = self._trouble = _Trouble(since=at)
            self._troubles += 1
            trouble.unwritten = Event(
                time=at,
                kind=EventKind.HISTORY_TROUBLE,
                severity=Severity.WARNING,
                subject=Subject("history", self.path.name),
                message=f"history not written: {reason}",
                details={"path": str(self.path), "reason": reason},
            )
            self._emit(trouble.unwritten)
        if reason not in trouble.reasons:
            trouble.reasons.append(reason)
        if reason != self._reason:
            self._say(
                f"NOT RECORDING (still polling; up to {self._backlog_polls} polls kept in "
                f"memory; retrying every poll): {reason}"
            )
        self._reason = reason

    def _trouble_row(self, trouble: _Trouble, event: Event) -> EventRow:
        details = {
            **event.details,
            "reasons": list(trouble.reasons),
            "waiting": len(self._backlog),
            "lost": self._missed,
        }
        return event_row(replace(event, details=details))

    def _resumed(self, current: ClusterSnapshot | None) -> None:
        if self._trouble is None and self._reason is None:
            return
        kept = self._trouble.kept if self._trouble is not None else 0
        seq = f"poll {current.seq}; " if current is not None else ""
        self._say(
            f"recording again ({seq}{kept} poll(s) written since the trouble began, "
            f"{self._missed} poll(s) not recorded in all)"
        )
        self._trouble = None
        self._reason = None

    # ------------------------------------------------------------------ retention

    def _maybe_retain(self) -> None:
        """Every ``retention_every_s`` at the :class:`Pace`'s present: a wall clock moved
        back neither postpones retention nor makes it judge ages from the past, and one
        leaping ahead does not make it delete what is not yet old."""
        now_ms, jump = self._pace.present(to_ms(self._clock()))
        if jump > 0:
            self._say(
                f"the wall clock jumped ahead {jump / 1000:.3f} s: retention goes on at the "
                "monotonic clock's pace (the jump is taken as the time after an hour)"
            )
        if (
            self._writer is None
            or self._retention_every is None  # a one-poll writer (check --record): none
            or (self._next_retention is not None and now_ms < self._next_retention)
        ):
            return
        self._next_retention = now_ms + round(self._retention_every * 1000)
        try:
            apply_retention(self._writer, self.policy, now_ms)
        except HistoryUnwritable as exc:
            self._say(f"retention not applied (tried again in {self._retention_every:g} s): {exc}")

    # ------------------------------------------------------------------ loop

    async def run(self, polls: AsyncIterator[JudgedPoll]) -> None:
        """Record every judged poll until the source ends (the caller stops it)."""
        async for judged in polls:
            self.record(judged)

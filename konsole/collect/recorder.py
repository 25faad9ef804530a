"""The recorder: snapshots in, one committed transaction per poll out, never dead on a fault.

:class:`Recorder` takes snapshots from any async source (the live poller, or a fake in
tests), derives the events (:func:`konsole.model.events.advance`), writes both through
:class:`store.HistoryWriter` and applies retention now and then. A history that cannot be
written (full disk, read-only file system, another recorder that took the file meanwhile)
does not stop it: it says once that it is not recording and why, keeps polling, and says
so again when a poll is recorded. Refusals that no retry fixes (a newer schema, a corrupt
or foreign file, another recorder at start) raise at :meth:`Recorder.open`.

Each poll carries the cluster's identity (:mod:`konsole.model.identity`, with ``run_id`` for
a local cluster): a poll of another cluster than the history's current epoch starts a new
epoch, and the event detectors start afresh (nothing of the other cluster is compared).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from konsole.collect.history import epoch_mark, event_row, poll_record, with_epoch
from konsole.model.events import Event, EventConfig, EventState, advance
from konsole.model.health import Health
from konsole.model.identity import identity_of
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.timefmt import to_ms
from store import (
    HistoryError,
    HistoryLocked,
    HistoryUnwritable,
    HistoryWriter,
    RetentionPolicy,
    apply_retention,
    open_writer,
)
from store.rows import PollRecord

__all__ = ["RETENTION_EVERY_S", "Recorder", "RecorderStatus"]

#: Retention runs at most this often (and once at start).
RETENTION_EVERY_S: Final = 600.0


@dataclass(frozen=True, slots=True)
class RecorderStatus:
    recording: bool
    polls_recorded: int
    polls_missed: int
    #: Why the last poll was not recorded (None while recording).
    reason: str | None


class Recorder:
    def __init__(
        self,
        path: Path,
        *,
        policy: RetentionPolicy | None = None,
        config: EventConfig | None = None,
        say: Callable[[str], None] = print,
        on_event: Callable[[Event], None] | None = None,
        on_commit: Callable[[ClusterSnapshot, int], None] | None = None,
        clock: Callable[[], float] = time.time,
        retention_every_s: float = RETENTION_EVERY_S,
        run_id: str | None = None,
    ) -> None:
        self.path = path
        #: The local cluster's run id (None for any other cluster): part of its identity.
        self.run_id = run_id
        self.policy = policy or RetentionPolicy()
        self._config = config or EventConfig()
        self._say = say
        #: Called with each event as it is derived (before the poll is written).
        self.on_event = on_event
        self._on_commit = on_commit
        self._clock = clock
        self._retention_every = retention_every_s
        self._writer: HistoryWriter | None = None
        self._state = EventState()
        self._next_retention = 0.0
        self._reason: str | None = None
        self._recorded = 0
        self._missed = 0

    @property
    def status(self) -> RecorderStatus:
        return RecorderStatus(
            self._writer is not None and self._reason is None,
            self._recorded,
            self._missed,
            self._reason,
        )

    @property
    def health(self) -> Health | None:
        """The health as of the last poll (what the events were derived with)."""
        return self._state.health

    def open(self) -> None:
        """Take the file. Raises HistoryLocked, NewerSchema, NotAHistoryFile (refused);
        an unwritable place is not fatal: the recorder starts not recording."""
        try:
            self._writer = open_writer(self.path)
        except HistoryUnwritable as exc:
            self._not_recording(str(exc))

    def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    # ------------------------------------------------------------------ one poll

    def record(self, snapshot: ClusterSnapshot) -> int | None:
        """Events, then one transaction; returns the poll id once committed, else None."""
        self._forget_other_cluster(snapshot)
        events, self._state = advance(self._state, snapshot, config=self._config)
        for event in events:
            if self.on_event is not None:
                self.on_event(event)
        if self._writer is None and not self._reopen():
            self._missed += 1
            return None
        assert self._writer is not None
        try:
            poll_id = self._writer.record(
                self._in_epoch(snapshot, poll_record(snapshot, [event_row(e) for e in events]))
            )
        except HistoryUnwritable as exc:
            self._missed += 1
            self._not_recording(str(exc))
            return None
        except HistoryError as exc:  # corrupt under our feet: nothing more can be written
            self._missed += 1
            self.close()
            self._not_recording(str(exc))
            return None
        self._recorded += 1
        if self._reason is not None:
            self._say(f"recording again (poll {snapshot.seq}; {self._missed} poll(s) not recorded)")
            self._reason = None
        if self._on_commit is not None:
            self._on_commit(snapshot, poll_id)
        self._maybe_retain()
        return poll_id

    # ------------------------------------------------------------------ epochs

    @property
    def other_cluster_until(self) -> float | None:
        """When the history's current epoch began, if an earlier one holds another cluster
        (epoch seconds), else None."""
        epoch = self._writer.epoch if self._writer is not None else None
        if epoch is None or epoch.id <= 1:
            return None
        return epoch.from_ms / 1000

    def _forget_other_cluster(self, snapshot: ClusterSnapshot) -> None:
        """Another cluster than the last one seen: the detectors start afresh."""
        seen = identity_of(snapshot, run_id=self.run_id)
        if seen is None or self._writer is None or self._state.health is None:
            return
        mark = epoch_mark(self._writer.epoch, seen)
        if mark is not None and mark.start:
            self._state = EventState()

    def _in_epoch(self, snapshot: ClusterSnapshot, record: PollRecord) -> PollRecord:
        """``record`` with its epoch mark (none for a failed poll: it shows no identity)."""
        if self._writer is None:
            return record
        current = self._writer.epoch
        marked = with_epoch(record, snapshot, current, run_id=self.run_id)
        if marked.epoch is not None and marked.epoch.start and current is not None:
            self._say(f"a new epoch of this history: {marked.epoch.reason}")
        return marked

    def _reopen(self) -> bool:
        try:
            self._writer = open_writer(self.path)
        except (HistoryUnwritable, HistoryLocked) as exc:
            self._not_recording(str(exc))
            return False
        except HistoryError as exc:
            self._not_recording(str(exc))
            return False
        return True

    def _not_recording(self, reason: str) -> None:
        if reason != self._reason:
            self._say(f"NOT RECORDING (still polling; retrying every poll): {reason}")
        self._reason = reason

    def _maybe_retain(self) -> None:
        now = self._clock()
        if self._writer is None or now < self._next_retention:
            return
        self._next_retention = now + self._retention_every
        try:
            apply_retention(self._writer, self.policy, to_ms(now))
        except HistoryUnwritable as exc:
            self._not_recording(f"retention: {exc}")

    # ------------------------------------------------------------------ loop

    async def run(self, snapshots: AsyncIterator[ClusterSnapshot]) -> None:
        """Record every snapshot until the source ends (the caller stops it)."""
        async for snapshot in snapshots:
            self.record(snapshot)

"""One judged poll: the verdict every face reads, made by one judge.

A poll is judged once: its events, its health and the facts of the last good poll
(placement, replication, headroom, storage: :mod:`konsole.model.poll_facts`) are made
together, on the snapshot as stamped (poll times never go back), and carried together in a
:class:`JudgedPoll`. The console, ``watch``, ``record``, ``check``, ``serve`` and time
travel read that one; none of them judges a poll again.

- :class:`Judge` judges polled snapshots in order (:meth:`Judge.judge`: the event detectors
  and the health), or polls another process recorded (:meth:`Judge.followed`: their events
  are the writer's, the health is judged here);
- :func:`judge_recorded` judges one recorded moment (a followed poll, a past moment for
  time travel) from what came before it, and :func:`judge_look` one look that is no part
  of a stream (``check``'s look and its second look, an action's look before it acts): the
  same code for all three.

Pure: no I/O, no clock. The event detectors are imported when a :class:`Judge` is made:
``check`` judges its look without them (its start-up is part of its answer's time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from konsole.model.health import Health, HealthRules, evaluate
from konsole.model.poll_facts import PollFacts, facts_of
from konsole.model.snapshot import ClusterSnapshot

if TYPE_CHECKING:
    from konsole.model.events import Event, EventConfig, EventState
    from konsole.model.headroom import ServerHeadroom
    from konsole.model.placement import Placement, Replication

__all__ = ["Judge", "JudgedPoll", "judge_look", "judge_recorded"]


def advance(
    state: EventState, current: ClusterSnapshot, *, config: EventConfig
) -> tuple[list[Event], EventState]:
    """:func:`konsole.model.events.advance`, imported on first use (see the module docs)."""
    from konsole.model.events import advance as run

    return run(state, current, config=config)


@dataclass(frozen=True, slots=True)
class JudgedPoll:
    """One poll as judged: what every face shows of it."""

    #: The poll, stamped on the poll timeline (failed polls included).
    snapshot: ClusterSnapshot
    #: The events this poll brought, in the detectors' order.
    events: tuple[Event, ...]
    #: The health of ``snapshot`` (its ``taken_at`` is the snapshot's).
    health: Health
    #: The last good poll (``snapshot`` itself when it is good; None before any).
    last_ok: ClusterSnapshot | None
    #: The good poll before ``last_ok`` (rates and growth need two).
    previous_ok: ClusterSnapshot | None
    #: The facts of ``last_ok`` (placement, replication, headroom, storage), derived once as
    #: that poll was judged; None before any good poll.
    facts: PollFacts | None

    @property
    def own_facts(self) -> PollFacts | None:
        """This poll's own facts: None when it failed (``facts`` are then the last good's)."""
        return self.facts if self.snapshot.ok else None

    @property
    def placement(self) -> Placement | None:
        return None if self.facts is None else self.facts.placement

    @property
    def replication(self) -> Replication | None:
        return None if self.facts is None else self.facts.replication

    @property
    def capacity(self) -> tuple[ServerHeadroom, ...]:
        """Every tablet server's headroom at ``last_ok`` (empty before any good poll)."""
        return () if self.facts is None else self.facts.capacity


def _judged(
    snapshot: ClusterSnapshot,
    events: tuple[Event, ...],
    health: Health,
    last_ok: ClusterSnapshot | None,
    previous_ok: ClusterSnapshot | None,
    facts: PollFacts | None,
) -> JudgedPoll:
    """``snapshot`` judged after a last good poll ``last_ok`` and the one before it;
    ``facts``: the snapshot's own when it is good, else ``last_ok``'s (carried)."""
    if snapshot.ok:
        return JudgedPoll(snapshot, events, health, snapshot, last_ok, facts)
    return JudgedPoll(snapshot, events, health, last_ok, previous_ok, facts)


def judge_recorded(
    snapshot: ClusterSnapshot,
    events: tuple[Event, ...],
    rules: HealthRules | None,
    *,
    last_ok: ClusterSnapshot | None,
    previous_ok: ClusterSnapshot | None,
    facts: PollFacts | None,
) -> JudgedPoll:
    """A recorded poll (a followed one, a past moment) judged after the last good poll
    before it, ``last_ok`` (``facts``: its facts, carried when this poll failed;
    ``previous_ok``: the good one before that). Its events are the writer's, read from
    the history. A good poll's own facts are derived here, once."""
    own = facts_of(snapshot, rules or HealthRules())
    health = evaluate(snapshot, rules, previous=last_ok, facts=own)
    return _judged(snapshot, events, health, last_ok, previous_ok, own or facts)


def judge_look(
    snapshot: ClusterSnapshot, rules: HealthRules | None, *, after: JudgedPoll | None = None
) -> JudgedPoll:
    """One look at a cluster, judged alone (no events: nothing came before it) or ``after``
    an earlier look of the same moment's question (``check``'s second metrics look)."""
    return judge_recorded(
        snapshot,
        (),
        rules,
        last_ok=after.last_ok if after is not None else None,
        previous_ok=after.previous_ok if after is not None else None,
        facts=after.facts if after is not None else None,
    )


class Judge:
    """Judges one cluster's polls in order; holds what the next poll is compared with."""

    __slots__ = ("_config", "_epoch", "_judged", "_state")

    def __init__(self, config: EventConfig | None = None) -> None:
        from konsole.model.events import EventConfig, EventState

        self._config = config or EventConfig()
        self._state: EventState = EventState()
        self._judged: JudgedPoll | None = None
        #: The history epoch of the last followed poll (:meth:`followed`).
        self._epoch: int | None = None

    @property
    def config(self) -> EventConfig:
        return self._config

    @property
    def last(self) -> JudgedPoll | None:
        """The last poll judged (None before the first, or after :meth:`forget`)."""
        return self._judged

    def forget(self) -> None:
        """Start afresh: the next poll is another cluster's (nothing of this one compares)."""
        self._state = type(self._state)()
        self._judged = None

    def judge(self, snapshot: ClusterSnapshot) -> JudgedPoll:
        """A polled (and stamped) snapshot: its events, health and facts."""
        events, self._state = advance(self._state, snapshot, config=self._config)
        health = self._state.health
        assert health is not None  # advance judges every poll's health
        before = self._judged
        last_ok = before.last_ok if before is not None else None
        previous_ok = before.previous_ok if before is not None else None
        facts = self._state.facts  # the last good poll's, this one's when it is good
        judged = _judged(snapshot, tuple(events), health, last_ok, previous_ok, facts)
        self._judged = judged
        return judged

    def followed(
        self, snapshot: ClusterSnapshot, events: tuple[Event, ...], *, epoch: int | None
    ) -> JudgedPoll:
        """A poll another process recorded (``events``: the ones it wrote with it) in the
        history's ``epoch`` (None: a file without epochs). A poll of another epoch is
        another cluster's: it is judged afresh, as the writer judged it."""
        if epoch != self._epoch:
            self.forget()
            self._epoch = epoch
        before = self._judged
        judged = judge_recorded(
            snapshot,
            events,
            self._config.rules,
            last_ok=before.last_ok if before is not None else None,
            previous_ok=before.previous_ok if before is not None else None,
            facts=before.facts if before is not None else None,
        )
        self._judged = judged
        return judged

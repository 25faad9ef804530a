"""``konsole demo --upgrade``: a rolling upgrade played on the demo's local cluster.

After ``after_s`` the script moves every server onto the distribution in ``fluss_home``,
in Fluss's order (docs/upgrade.md): the tablet servers by id, then the standby
coordinators, then the active coordinator last. Before each move it asks the gate
(``konsole upgrade gate``'s own loop, handed in by the command line: this package knows
no face) with the tablet server's id, and moves only when the gate says safe; a gate
that does not open ends the upgrade there, with every server still up. After the last
move the gate is asked once more (the cluster has recovered). Every step and every wait
the gate says is said first through ``note`` (the demo writes it into the history as an
operator note: the Events screen shows it); :meth:`UpgradePlay.stop` ends it between
steps (the demo's exit).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from konsole.model import subjects

if TYPE_CHECKING:
    from konsole.localcluster.cluster import ClusterDescription, LocalCluster

__all__ = ["AFTER_S", "GateAnswer", "Move", "MoveRecord", "UpgradePlay", "upgrade_order"]

#: When the upgrade begins, after the demo started (the console has shown the 0.9 cluster).
AFTER_S: Final = 30.0
#: Seconds a moved server has to be ready again (its own readiness, before the next gate).
READY_S: Final = 180.0


@dataclass(frozen=True, slots=True)
class GateAnswer:
    """What one gate said: safe or not, its verdict line, the waits it said on the way."""

    safe: bool
    summary: str
    waited_s: float
    said: tuple[str, ...] = ()


#: The gate: the tablet server about to go down (None: cluster-wide) and where to say each
#: new set of waits as it comes -> its answer.
Gate = Callable[[int | None, Callable[[str], None]], GateAnswer]


@dataclass(frozen=True, slots=True)
class Move:
    """One step: a server stopped and started again on the new distribution."""

    role: str  # "tablet-server" or "coordinator"
    sid: int

    @property
    def subject(self) -> str:
        if self.role == "tablet-server":
            return subjects.tablet_server(self.sid)
        return f"coordinator {self.sid}"  # the runner's name (its address is the history's)


@dataclass(frozen=True, slots=True)
class MoveRecord:
    move: Move
    gate: GateAnswer
    #: Seconds from the stop until the server was ready again on the new distribution.
    restart_s: float
    #: The version the server runs after the move (as the runner describes it).
    version: str | None


def upgrade_order(desc: ClusterDescription, active: int | None) -> list[Move]:
    """Tablet servers by id, then the standby coordinators, the ``active`` one last."""
    tablets = sorted(p.id for p in desc.processes if p.role == "tablet-server")
    coords = sorted(p.id for p in desc.processes if p.role == "coordinator")
    if active in coords:
        coords = [c for c in coords if c != active] + [active]
    return [Move("tablet-server", t) for t in tablets] + [Move("coordinator", c) for c in coords]


class UpgradePlay:
    """Plays ``moves`` on ``cluster`` onto ``fluss_home`` in a daemon thread (or
    :meth:`run` in the caller's), ``after_s`` after it starts."""

    def __init__(
        self,
        cluster: LocalCluster,
        moves: Sequence[Move],
        *,
        fluss_home: Path | str,
        version: str,
        gate: Gate,
        note: Callable[[str], object],
        after_s: float = AFTER_S,
        on_move: Callable[[MoveRecord], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cluster, self.moves, self.fluss_home = cluster, tuple(moves), fluss_home
        self.version, self.gate, self.note, self.after_s = version, gate, note, after_s
        self.on_move = on_move
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: The moves done, in order; what failed (a gate that did not open, a server that
        #: did not start), and the gate's answer after the last move.
        self.done: list[MoveRecord] = []
        self.failed: list[str] = []
        self.final: GateAnswer | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="konsole-demo-upgrade", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop between steps (a gate or a restart under way ends first, bounded by its
        own timeout; the demo's exit stops the whole cluster after this)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def summary(self) -> str:
        """One line for the demo's exit."""
        line = f"upgrade: {len(self.done)} of {len(self.moves)} servers on {self.version}"
        return line if not self.failed else f"{line}; stopped: {'; '.join(self.failed)}"

    def _say(self, text: str) -> None:
        self.note(f"demo upgrade: {text}")

    def _ask(self, server: int | None, before: str) -> GateAnswer:
        self._say(f"gate before {before}")
        answer = self.gate(server, lambda line: self._say(f"gate {line}"))
        self._say(f"gate after {answer.waited_s:.0f} s: {answer.summary}")
        return answer

    def run(self) -> None:
        self._say(
            f"begins in {self.after_s:g} s: {len(self.moves)} servers onto {self.version}, "
            "tablet servers one by one, then the coordinator, the gate before each"
        )
        if self._stop.wait(max(0.0, self.after_s)):
            return
        for move in self.moves:
            if self._stop.is_set():
                return
            server = move.sid if move.role == "tablet-server" else None
            answer = self._ask(server, move.subject)
            if self._stop.is_set():
                return
            if not answer.safe:
                self.failed.append(f"the gate did not open before {move.subject}")
                self._say(f"the gate did not open: the upgrade stops before {move.subject}")
                return
            if not self._move(move, answer):
                return
        self.final = self._ask(None, "the end (recovered from the last step?)")
        self._say("over" if self.final.safe else "over, the cluster not yet safe")

    def _move(self, move: Move, answer: GateAnswer) -> bool:
        self._say(f"{move.subject}: stopping it, starting it again on {self.version}")
        began = self._clock()
        try:
            self.cluster.stop_server(move.role, move.sid)
            info = self.cluster.start_server(
                move.role, move.sid, ready_timeout=READY_S, fluss_home=self.fluss_home
            )
        except Exception as exc:  # said, and the upgrade stops there: it is a demo
            self.failed.append(f"{move.subject}: {exc}")
            self._say(f"{move.subject} failed: {exc}")
            return False
        record = MoveRecord(move, answer, self._clock() - began, info.version)
        self.done.append(record)
        self._say(f"{move.subject} runs {info.version or self.version} ({record.restart_s:.0f} s)")
        if self.on_move is not None:
            self.on_move(record)
        return True

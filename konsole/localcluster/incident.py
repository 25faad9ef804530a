"""``konsole demo --incident``: a short scripted incident on the demo's local cluster.

After ``after_s`` (a minute) the script stops a tablet server and starts it again; on the
1.0 line it starts it with a tiny disk write limit (its write lock engages), kills the
active coordinator (the standby takes over), starts that coordinator again (a standby now)
and finally restarts the tablet server with its normal settings. Every step is said first
through ``note`` (the demo writes it into the history as an operator note, so it shows in
the Events screen, the evidence view and a report), then done; a step that fails is said
and the script goes on. :meth:`DemoIncident.stop` ends it between steps (the demo's exit).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from konsole.model import subjects

if TYPE_CHECKING:
    from konsole.localcluster.cluster import LocalCluster

__all__ = ["AFTER_S", "WRITE_LOCK_SETTINGS", "DemoIncident", "Step", "incident_steps"]

#: When the incident begins, after the demo started.
AFTER_S: Final = 60.0
#: A write limit every disk exceeds: the tablet server's write lock engages at once.
WRITE_LOCK_SETTINGS: Final = (
    "server.data-disk.write-limit-ratio=0.01",
    "server.data-disk.write-recover-ratio=0.005",
    "server.data-disk.check-interval=1s",
)


@dataclass(frozen=True, slots=True)
class Step:
    #: Seconds after the incident began.
    at_s: float
    what: str
    run: Callable[[LocalCluster], None]


def incident_steps(tablet: int, *, one_zero: bool) -> list[Step]:
    """The script: tablet server ``tablet`` stopped and started; on the 1.0 line also a
    write lock and a coordinator failover."""
    name = subjects.tablet_server(tablet)
    if not one_zero:
        return [
            Step(0, f"stopping {name}", lambda lc: lc.stop_server("tablet-server", tablet)),
            Step(25, f"starting {name} again", lambda lc: _start(lc, tablet)),
        ]
    killed: list[int] = []

    def kill_active(lc: LocalCluster) -> None:
        active = lc.active_coordinator()
        if active is None:
            raise RuntimeError("no active coordinator to kill")
        lc.kill("coordinator", active)
        killed.append(active)

    def restart_killed(lc: LocalCluster) -> None:
        for sid in killed:
            lc.start_server("coordinator", sid)

    def unlock(lc: LocalCluster) -> None:
        lc.stop_server("tablet-server", tablet)
        _start(lc, tablet)

    return [
        Step(0, f"stopping {name}", lambda lc: lc.stop_server("tablet-server", tablet)),
        Step(
            25,
            f"starting {name} with a tiny disk write limit (its write lock engages)",
            lambda lc: _start(lc, tablet, WRITE_LOCK_SETTINGS),
        ),
        Step(55, "killing the active coordinator (the standby takes over)", kill_active),
        Step(75, "starting the killed coordinator again (a standby now)", restart_killed),
        Step(95, f"restarting {name} with its normal settings (write lock released)", unlock),
    ]


def _start(lc: LocalCluster, tablet: int, settings: Sequence[str] = ()) -> None:
    lc.start_server("tablet-server", tablet, ready_timeout=120, settings=settings)


class DemoIncident:
    """Plays ``steps`` on ``cluster`` in a daemon thread, ``after_s`` after :meth:`start`."""

    def __init__(
        self,
        cluster: LocalCluster,
        steps: Sequence[Step],
        *,
        note: Callable[[str], None],
        after_s: float = AFTER_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cluster, self.steps, self.note, self.after_s = cluster, tuple(steps), note, after_s
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: The steps done, in order (their ``what``), and those that failed.
        self.done: list[str] = []
        self.failed: list[str] = []

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="konsole-demo-incident", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop between steps (a step under way finishes first, bounded by its own timeouts;
        the demo's exit stops the whole cluster after this)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def summary(self) -> str:
        """One line for the demo's exit: the steps done and those that failed."""
        line = f"incident: {len(self.done)} of {len(self.steps)} steps done"
        return line if not self.failed else f"{line}; failed: {'; '.join(self.failed)}"

    def run(self) -> None:
        began = self._clock()
        self.note(f"demo incident: begins in {self.after_s:g} s")
        for step in self.steps:
            if self._stop.wait(max(0.0, began + self.after_s + step.at_s - self._clock())):
                return
            self.note(f"demo incident: {step.what}")
            try:
                step.run(self.cluster)
            except Exception as exc:  # said, and the script goes on: it is a demo
                self.failed.append(step.what)
                self.note(f"demo incident: {step.what} failed: {exc}")
                continue
            self.done.append(step.what)
        self.note("demo incident: over")

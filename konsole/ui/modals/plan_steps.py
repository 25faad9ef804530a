"""What the action modals share: the steps after a plan is read.

:class:`PlanStepsScreen` is the base of the server actions' modal and the cluster actions'
confirmation modal: the plan read, the subject typed in full (anything else sends
nothing), a rebalance's progress, the end (done, or failed with the server's error) and
the refused line. Each modal draws its own steps (``_show``) and names its status line
and progress bar.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import ClassVar, TypeVar

from rich.text import Text
from textual.screen import ModalScreen
from textual.widgets import ProgressBar, Static

from konsole.errors import KonsoleError
from konsole.model.actions import Plan

__all__ = ["PlanStepsScreen"]

T = TypeVar("T")


class PlanStepsScreen(ModalScreen[T]):
    #: The ids of the modal's status line and progress bar.
    STATUS_ID: ClassVar[str]
    PROGRESS_ID: ClassVar[str]

    def __init__(self) -> None:
        super().__init__()
        self.step = ""
        self.plan: Plan | None = None

    def _show(self) -> None:
        """Draw the current step."""
        raise NotImplementedError

    def _subject_typed(self, typed: str) -> bool:
        """True when ``typed`` is the plan's subject; else says so (nothing is sent)."""
        assert self.plan is not None
        if typed == self.plan.subject:
            return True
        self._status(f"type {self.plan.subject} exactly (not {typed!r}): nothing sent", "red")
        return False

    def _progress(self, done: int, total: int, status: str) -> None:
        bar = self.query_one(f"#{self.PROGRESS_ID}", ProgressBar)
        bar.update(total=max(total, 1), progress=done)
        self._status(f"rebalance {status}: {done}/{total} buckets done", "")

    async def _take_plan(self, plan: Awaitable[Plan]) -> None:
        """Await the plan: shown to be confirmed, or refused by a rail, or failed (bad
        input, the cluster not reached)."""
        try:
            self.plan = await plan
        except KonsoleError as exc:
            self._end("failed", str(exc))
            return
        self.step = "refused" if self.plan.blocking(force=False) else "plan"
        self._show()

    async def _run_to_end(self, outcome: Awaitable[str]) -> None:
        """Await the action's outcome line: done, or failed with its error."""
        try:
            text = await outcome
        except KonsoleError as exc:
            self._end("failed", str(exc))
            return
        self._end("done", text)

    def _end(self, step: str, text: str) -> None:
        self.step = step
        self._show()
        self._status(text, "green" if step == "done" else "bold red")

    def _refused(self) -> None:
        assert self.plan is not None
        reason = self.plan.blocking(force=False)[0].reason
        self._status(f"REFUSED: {reason} (`konsole admin` takes --force)", "bold red")

    def _status(self, text: str, style: str) -> None:
        self.query_one(f"#{self.STATUS_ID}", Static).update(Text(text, style=style))

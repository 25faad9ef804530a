"""A tablet server's operator actions: choose, read the plan, type the subject, follow it.

Opened from the server detail (``a``). Four steps in one modal: the choice (``d`` drain,
``t`` tag temporary-offline, ``u`` untag; all greyed, with the reason, when actions are
off: a profile without ``writes = true``, time travel, a coordinator); the plan, read in
a worker (a refused plan shows why and offers nothing to send); the confirmation, the
server id typed in full; then the progress and the outcome (or the server's error). The
work goes through :class:`~konsole.ui.actions.ServerActions`; escape closes at any step
(a rebalance already started keeps running on the server).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, ProgressBar, Static

from konsole.model import subjects
from konsole.model.actions import Plan
from konsole.ui.actions import ACTIONS, ServerActions
from konsole.ui.modals.plan_steps import PlanStepsScreen
from konsole.ui.widgets.text_input import TextInput

__all__ = ["ServerActionScreen"]

_KEYS = {"d": "drain", "t": "tag", "u": "untag"}
_WHAT = {
    "drain": "tag PERMANENT_OFFLINE, then rebalance every replica off it",
    "tag": "tag TEMPORARY_OFFLINE (a rebalance then leaves it out)",
    "untag": "remove its TEMPORARY_OFFLINE tag",
}


class ServerActionScreen(PlanStepsScreen[None]):
    STATUS_ID = "action-status"
    PROGRESS_ID = "action-progress"
    #: Nothing focused at first: the choice keys go to the screen, not the hidden input.
    AUTO_FOCUS = None
    DEFAULT_CSS = """
    ServerActionScreen { align: center middle; }
    #action-box {
        width: 80; max-width: 100%; height: auto; max-height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    #action-body { height: auto; }
    #action-status { height: auto; margin: 1 0 0 0; }
    #action-progress { margin: 1 0 0 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        *(Binding(key, f"choose('{name}')", name.capitalize()) for key, name in _KEYS.items()),
    ]

    def __init__(self, server_id: int, actions: ServerActions, unavailable: str | None) -> None:
        super().__init__()
        self.server_id = server_id
        self.actions = actions
        self.unavailable = unavailable
        #: "choose", "planning", "plan", "refused", "running", "done", "failed".
        self.step = "choose"
        self.action: str | None = None
        self.plan: Plan | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="action-box"):
            yield Static(id="action-body")
            yield TextInput(
                placeholder="the server id, typed in full", id="action-confirm", disabled=True
            )
            yield ProgressBar(id="action-progress", show_eta=False)
            yield Static(id="action-status")

    def on_mount(self) -> None:
        self.query_one(
            "#action-box"
        ).border_title = f"Actions · {subjects.tablet_server(self.server_id)}"
        self._show()

    # ------------------------------------------------------------------ steps

    def action_choose(self, name: str) -> None:
        if self.step != "choose" or self.unavailable is not None:
            return
        self.action, self.step = name, "planning"
        self._show()
        self._plan(name)

    @work(exclusive=True, group="server-action", exit_on_error=False)
    async def _plan(self, name: str) -> None:
        await self._take_plan(self.actions.plan(name, self.server_id))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.step != "plan" or self.plan is None or self.action is None:
            return
        if not self._subject_typed(event.value.strip()):
            return
        self.step = "running"
        self._show()
        self._execute(self.action)

    @work(exclusive=True, group="server-action", exit_on_error=False)
    async def _execute(self, name: str) -> None:
        await self._run_to_end(self.actions.execute(name, self.server_id, self._progress))

    # ------------------------------------------------------------------ drawing

    def _show(self) -> None:
        body = self.query_one("#action-body", Static)
        confirm = self.query_one("#action-confirm", TextInput)
        # Disabled unless asked for: a hidden input must not take the choice keys.
        confirm.display = self.step == "plan"
        confirm.disabled = self.step != "plan"
        self.query_one("#action-progress", ProgressBar).display = self.step == "running"
        if self.step == "choose":
            body.update(self._choices())
            self._status(
                "actions off: " + self.unavailable
                if self.unavailable
                else "press a key to see its plan · escape: close",
                "yellow" if self.unavailable else "dim",
            )
        elif self.step == "planning":
            body.update(Text(f"reading the cluster for the {self.action} plan..."))
            self._status("", "")
        elif self.plan is not None:
            body.update(_plan_text(self.plan))
            if self.step == "plan":
                self._status(f"type {self.plan.subject} and enter to send it · escape: cancel", "")
                confirm.focus()
            elif self.step == "refused":
                self._refused()
            elif self.step == "running":
                self._status(f"{self.plan.action} {self.plan.subject}: sent", "")

    def _choices(self) -> Text:
        off = self.unavailable is not None
        t = Text()
        for key, (name, label) in zip(_KEYS, ACTIONS, strict=True):
            t.append(f" {key} ", style="dim" if off else "bold reverse")
            t.append(f" {label:<24}", style="dim" if off else "bold")
            t.append(f"{_WHAT[name]}\n", style="dim")
        return t


def _plan_text(plan: Plan) -> Text:
    t = Text()
    for i, line in enumerate(plan.lines()):
        style = "bold" if i == 0 else "red" if "REFUSED" in line else ""
        t.append(line + "\n", style=style)
    return t

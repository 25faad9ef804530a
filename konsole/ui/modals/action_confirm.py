"""One cluster action, confirmed: (ask for its value,) read the plan, type the subject,
follow it.

The modal the Rebalance, Config and Tables screens open for an
:class:`~konsole.ui.cluster_actions.ActionRequest`. Steps: ``ask`` (a value typed: a
config's new value, a partition spec, a table property; skipped when the request is
whole), ``planning`` (the plan, read in a worker), ``plan`` (shown with each change as a
diff, old ``-`` / new ``+``; the subject typed in full sends it), ``refused`` (a rail
stops it: the reason, nothing to send), ``running`` (a rebalance shows its per-bucket
progress), ``done`` or ``failed`` (the server's error). Actions off (no ``writes = true``,
time travel) show only the reason. Escape closes at any step; what was sent stays sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, ProgressBar, Static

from konsole.errors import KonsoleError
from konsole.model.actions import Plan
from konsole.ui.cluster_actions import ActionRequest, ClusterActions
from konsole.ui.modals.plan_steps import PlanStepsScreen
from konsole.ui.services import services
from konsole.ui.widgets.text_input import TextInput

__all__ = ["ActionConfirmScreen", "open_action", "plan_text"]

#: Why actions are off in time travel (the same words as the server actions').
TIME_TRAVEL = "time travel shows the past; actions act on the live cluster (L: live)"


def open_action(
    app: App[object],
    title: str,
    request: ActionRequest,
    *,
    ask: str | None = None,
    initial: str = "",
    on_end: Callable[[bool | None], None] | None = None,
) -> None:
    """Push the modal for ``request``, greyed with why when actions are off (the profile
    has no writes, or the console shows the past)."""
    konsole = services(app)
    actions = konsole.cluster_actions()
    why = actions.unavailable()
    state = konsole.state
    if why is None and state is not None and state.historic:
        why = TIME_TRAVEL
    modal = ActionConfirmScreen(title, request, actions, why, ask=ask, initial=initial)
    app.push_screen(modal, on_end)


class ActionConfirmScreen(PlanStepsScreen[bool]):
    """Dismissed with True when the action ran to its end (done or failed)."""

    STATUS_ID = "confirm-status"
    PROGRESS_ID = "confirm-progress"

    DEFAULT_CSS = """
    ActionConfirmScreen { align: center middle; }
    #confirm-box {
        width: 84; max-width: 100%; height: auto; max-height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    #confirm-body { height: auto; }
    #confirm-status { height: auto; margin: 1 0 0 0; }
    #confirm-progress { margin: 1 0 0 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(
        self,
        title: str,
        request: ActionRequest,
        actions: ClusterActions,
        unavailable: str | None,
        *,
        ask: str | None = None,
        initial: str = "",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.request = request
        self.actions = actions
        self.unavailable = unavailable
        self.ask = ask
        self.initial = initial
        #: "off", "ask", "planning", "plan", "refused", "running", "done", "failed".
        self.step = "off" if unavailable else "ask" if ask else "planning"
        self.ran = False

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(id="confirm-body")
            yield TextInput(id="confirm-input")
            yield ProgressBar(id="confirm-progress", show_eta=False)
            yield Static(id="confirm-status")

    def on_mount(self) -> None:
        self.query_one("#confirm-box").border_title = self.title_text
        if self.step == "ask":
            self.query_one("#confirm-input", TextInput).value = self.initial
        self._show()
        if self.step == "planning":
            self._plan()

    def action_close(self) -> None:
        self.dismiss(self.ran)

    # ------------------------------------------------------------------ steps

    @work(exclusive=True, group="cluster-action", exit_on_error=False)
    async def _plan(self) -> None:
        await self._take_plan(self.actions.plan(self.request))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        typed = event.value.strip()
        if self.step == "ask":
            if not typed:
                self._status(f"{self.ask}: nothing typed", "red")
                return
            try:
                self.request = self.request.with_value(typed)
            except KonsoleError as exc:
                self._status(str(exc), "red")
                return
            self.step = "planning"
            self._show()
            self._plan()
            return
        if self.step != "plan" or self.plan is None or not self._subject_typed(typed):
            return
        self.step = "running"
        self._show()
        self._execute()

    @work(exclusive=True, group="cluster-action", exit_on_error=False)
    async def _execute(self) -> None:
        self.ran = True
        await self._run_to_end(self.actions.execute(self.request, self._progress))

    # ------------------------------------------------------------------ drawing

    def _show(self) -> None:
        body = self.query_one("#confirm-body", Static)
        field = self.query_one("#confirm-input", TextInput)
        typing = self.step in ("ask", "plan")
        # Disabled unless asked for: a hidden input must not take the screen's keys.
        field.display, field.disabled = typing, not typing
        # A bar only for what has progress to show: a rebalance.
        bar = self.query_one("#confirm-progress", ProgressBar)
        bar.display = self.step == "running" and self.request.kind == "rebalance"
        if self.step == "off":
            body.update(Text(f"{_describe(self.request)}\n", style="dim"))
            self._status(f"actions off: {self.unavailable}", "yellow")
        elif self.step == "ask":
            body.update(Text(_describe(self.request) + "\n"))
            field.placeholder = self.ask or ""
            self._status(f"{self.ask}, then enter for the plan · escape: cancel", "")
            field.focus()
        elif self.step == "planning":
            body.update(Text(f"reading the cluster for the plan of {_describe(self.request)}..."))
            self._status("", "")
        elif self.plan is not None:
            body.update(plan_text(self.plan))
            if self.step == "plan":
                field.value, field.placeholder = "", f"{self.plan.subject}, typed in full"
                self._status(f"type {self.plan.subject} and enter to send it · escape: cancel", "")
                field.focus()
            elif self.step == "refused":
                self._refused()
            elif self.step == "running":
                self._status(f"{self.plan.action} {self.plan.subject}: sent", "")


def _describe(request: ActionRequest) -> str:
    what = request.kind.replace("-", " ")
    return f"{what} {request.target}".strip()


def plan_text(plan: Plan) -> Text:
    """The plan's lines, then each change as a diff: ``-`` the value now, ``+`` the new."""
    t = Text()
    for i, line in enumerate(plan.lines()):
        if line.startswith("  change "):
            continue
        style = "bold" if i == 0 else "red" if "REFUSED" in line else ""
        t.append(line + "\n", style=style)
    for change in plan.changes:
        t.append(f"\n  {change.what}\n", style="bold")
        t.append(f"  - {_value(change.before)}\n", style="red")
        t.append(f"  + {_value(change.after)}\n", style="green")
    return t


def _value(value: str | None) -> str:
    return "(not set)" if value is None else value

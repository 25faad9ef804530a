"""Config (``C``): the cluster's configs with their source, edit one with a diff, delete.

The list is DescribeClusterConfigs read live (a read: no opt-in) when the screen is shown
and on ``r``, over the action service's one read client, held from the screen's mount to
its unmount (shared with the Rebalance screen): key, value (a value the server does not
send shows as not shown, never as empty), source (the server file's ``INITIAL_SERVER_CONFIG`` or a
``DYNAMIC_SERVER_CONFIG`` set at run time). ``enter`` / ``v`` edits the selected key
(``n`` a key not listed) and ``d`` deletes its dynamic value, through the confirmation
modal: the plan shows old and new as a diff, the key is typed in full, and the audit keeps
the old value for undo. Which keys the server takes at run time is its rule: a key it
does not take comes back as its error, nothing changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from fluss_proto.errors import FlussError
from konsole.errors import KonsoleError
from konsole.ui.cluster_actions import ActionRequest, HeldReads
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.widgets.grid import KeyedGrid

if TYPE_CHECKING:
    from fluss_proto.model import ConfigEntry

__all__ = ["ConfigScreen"]

_SOURCES = {"DYNAMIC_SERVER_CONFIG": "dynamic", "INITIAL_SERVER_CONFIG": "initial (file)"}


class ConfigScreen(ConsoleScreen):
    DEFAULT_CSS = """
    ConfigScreen #cfg-title { height: auto; padding: 0 1; }
    ConfigScreen KeyedGrid { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "edit", "Edit value"),
        Binding("n", "new", "Set another key"),
        Binding("d", "delete", "Delete dynamic value"),
        Binding("r", "refresh", "Reload"),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: The configs last read (None: not read yet); the error when the read failed.
        self.configs: Sequence[ConfigEntry] | None = None
        self.error: str | None = None
        self.held = HeldReads(lambda: self.konsole)

    def compose_body(self) -> ComposeResult:
        yield Static(id="cfg-title")
        yield KeyedGrid(id="cfg-table")

    def on_mount(self) -> None:
        self.held.open()
        self.query_one(KeyedGrid).set_columns(
            (("key", "Key"), ("value", "Value"), ("source", "Source"))
        )
        self._draw()

    async def on_unmount(self) -> None:
        await self.held.close()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.action_refresh()

    @work(exclusive=True, group="configs", exit_on_error=False)
    async def action_refresh(self) -> None:
        reads, _ = await self.held.current()
        if reads is None:
            return  # unmounted
        try:
            self.configs = sorted(await reads.configs(), key=_key)
            self.error = None
        except (KonsoleError, FlussError, OSError) as exc:  # unknown, said so
            self.error = str(exc) or type(exc).__name__
        if self.is_mounted:
            self._draw()

    # ------------------------------------------------------------------ actions

    def _selected(self) -> ConfigEntry | None:
        key = self.query_one(KeyedGrid).selected_key
        return next((c for c in self.configs or () if c.key == key), None)

    def on_keyed_grid_row_selected(self, event: KeyedGrid.RowSelected) -> None:
        event.stop()
        self.action_edit()

    def action_edit(self) -> None:
        entry = self._selected()
        if entry is not None:
            self._open(
                ActionRequest("config-set", entry.key),
                f"the new value of {entry.key}",
                entry.value or "",
            )

    def action_new(self) -> None:
        self._open(ActionRequest("config-set"), "KEY=VALUE of a dynamic config", "")

    def action_delete(self) -> None:
        entry = self._selected()
        if entry is not None:
            self._open(ActionRequest("config-delete", entry.key), None, "")

    def _open(self, request: ActionRequest, ask: str | None, initial: str) -> None:
        from konsole.ui.modals.action_confirm import open_action

        what = "delete" if request.kind == "config-delete" else "set"
        title = f"Config · {what} {request.target}".rstrip()
        open_action(
            self.app,
            title,
            request,
            ask=ask,
            initial=initial,
            on_end=self._after,
        )

    def _after(self, ran: bool | None) -> None:
        if ran:
            self.action_refresh()

    # ------------------------------------------------------------------ drawing

    def _draw(self) -> None:
        title = self.query_one("#cfg-title", Static)
        table = self.query_one(KeyedGrid)
        if self.error is not None:
            title.update(Text(f"Configs unknown: {self.error}", style="bold red"))
            table.sync([])
        elif self.configs is None:
            title.update(Text("Configs: reading the cluster...", style="dim"))
            table.sync([])
        elif not self.configs:
            title.update(Text("Configs: the cluster reports none", style="dim"))
            table.sync([])
        else:
            dynamic = sum(1 for c in self.configs if c.source == "DYNAMIC_SERVER_CONFIG")
            title.update(
                Text(
                    f"Configs: {len(self.configs)}, {dynamic} set at run time · "
                    "enter/v: edit · n: another key · d: delete the dynamic value",
                    style="bold",
                )
            )
            table.sync(
                [
                    (
                        c.key,
                        (
                            c.key,
                            "(not shown)" if c.value is None else c.value,
                            _SOURCES.get(c.source, c.source),
                        ),
                    )
                    for c in self.configs
                ]
            )


def _key(entry: ConfigEntry) -> str:
    return entry.key

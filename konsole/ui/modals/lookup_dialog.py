"""Asks for a primary key to look up: one input per key column, typed from the schema.

Every key column (partition keys included) given: a key lookup. Only the bucket key's
columns (and the partition keys) given, where the table's bucket key is a proper prefix of
its primary key: a prefix lookup (every row under it). The key is typed and checked here
(:func:`fluss_proto.lookup.plan_keys`, pure) so that a wrong value is one line under the
inputs, never a traceback; nothing is sent before it fits. A masked key column cannot be
looked up by (whether a key exists would tell its values).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from konsole.collect.cluster.table_reads import LookupRequest
from konsole.model.masking import MaskRules
from konsole.ui.widgets.text_input import TextInput

if TYPE_CHECKING:
    from fluss_proto.lookup import LookupSpec
    from fluss_proto.types.info import TableInfo

__all__ = ["LookupDialog", "lookup_specs"]


def lookup_specs(info: TableInfo) -> tuple[LookupSpec, LookupSpec | None]:
    """The key lookup's spec and the prefix lookup's (None where the table has none);
    raises :class:`~fluss_proto.errors.InputError` for a table without a usable key."""
    from fluss_proto.errors import InputError, UnsupportedTableError
    from fluss_proto.lookup import lookup_spec

    key = lookup_spec(info)
    try:
        prefix: LookupSpec | None = lookup_spec(info, prefix=True)
    except (InputError, UnsupportedTableError):
        prefix = None
    return key, prefix


class LookupDialog(ModalScreen[LookupRequest | None]):
    """Returns the lookup to run (None when cancelled)."""

    DEFAULT_CSS = """
    LookupDialog { align: center middle; }
    LookupDialog > Vertical {
        width: 76; max-width: 100%; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    LookupDialog Label { width: 100%; }
    LookupDialog .key-label { color: $text-muted; }
    LookupDialog #lookup-error { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self,
        info: TableInfo,
        key: LookupSpec,
        prefix: LookupSpec | None,
        masks: MaskRules | None = None,
    ) -> None:
        super().__init__()
        self.info = info
        self.key = key
        self.prefix = prefix
        self.masks = masks or MaskRules()

    def compose(self) -> ComposeResult:
        path = self.info.table_path
        with Vertical():
            hint = "every key column"
            if self.prefix is not None:
                hint += f", or only {', '.join(self.prefix.columns)} for a prefix lookup"
            yield Label(f"Look up a row of {path} by key ({hint}; enter: look up, escape: cancel)")
            for i, column in enumerate(self.key.columns):
                masked = self.masks.masked(path, column)
                note = "  masked: cannot be looked up by" if masked else ""
                yield Label(f"{column} {self.key.types[column]}{note}", classes="key-label")
                yield TextInput(id=f"key-{i}", disabled=masked)
            yield Label("", id="lookup-error")

    def on_mount(self) -> None:
        for box in self.query(Input):
            if not box.disabled:
                box.focus()
                return

    def values(self) -> dict[str, str]:
        """The columns given (a box left empty is a column not given)."""
        out = {}
        for i, column in enumerate(self.key.columns):
            text = self.query_one(f"#key-{i}", Input).value
            if text.strip():
                out[column] = text.strip()
        return out

    def request(self) -> LookupRequest:
        """The lookup the boxes ask for; raises :class:`ValueError` (one line) when they do
        not make a key that fits the table."""
        from fluss_proto.lookup import plan_keys

        given = self.values()
        if not given:
            raise ValueError("give a value for each key column")
        spec = self.key
        if set(given) != set(self.key.columns):
            if self.prefix is None or set(given) != set(self.prefix.columns):
                missing = [c for c in self.key.columns if c not in given]
                text = f"missing key column(s): {', '.join(missing)}"
                if self.prefix is not None:
                    text += f" (or give only {', '.join(self.prefix.columns)})"
                raise ValueError(text)
            spec = self.prefix
        plan_keys(spec, [given])  # typed and encoded: a wrong value is refused here
        database, _, table = self.info.table_path.partition(".")
        return LookupRequest(
            (database, table),
            tuple((c, given[c]) for c in spec.columns),
            prefix=spec is self.prefix,
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            request = self.request()
        except ValueError as exc:  # InputError is one too: one line, nothing sent
            self.query_one("#lookup-error", Label).update(str(exc).splitlines()[0])
            return
        self.dismiss(request)

    def action_cancel(self) -> None:
        self.dismiss(None)

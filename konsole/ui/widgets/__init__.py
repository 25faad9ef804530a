"""Widgets of the Textual console (styles in ``.tcss`` files beside them)."""

"""Masking rules: which columns' values never leave konsole (pure).

A profile lists patterns (``mask = ["ssn", "*_token", "shop.orders.card_*"]``):

- a pattern without a dot names columns in every table (``ssn``, ``card_*``);
- ``DB.TABLE.COLUMN`` names columns of matching tables (each part may use ``*``, ``?`` and
  ``[...]``; ``shop.*.email`` is the email column of every table of ``shop``).

Matching ignores case (a rule that masks more than meant is the safe mistake). A masked
column's every value, NULL included, is written as :data:`MASK_TEXT` wherever rows go out:
stdout in every format, export files, the console (``konsole.export.mask`` applies it where
every writer passes). Masked columns cannot be filtered on or looked up by: the rows a
filter keeps, or whether a key exists, would tell their values.

Masking keeps values off screens and out of files konsole writes; it is not access control
(the same cluster reached without the profile shows the values: use Fluss's ACLs for that).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Final

from konsole.errors import MaskedColumnError

__all__ = ["MASK_TEXT", "MaskRules", "missing_partition_text", "pattern_problem"]

#: What a masked value is written as.
MASK_TEXT: Final = "****"


def pattern_problem(pattern: object) -> str | None:
    """Why ``pattern`` is not a masking rule, or None when it is one."""
    if not isinstance(pattern, str):
        return f"a rule is a text, not {type(pattern).__name__}"
    if not pattern.strip():
        return "a rule cannot be empty"
    parts = pattern.split(".")
    if len(parts) not in (1, 3) or not all(parts):
        return f"{pattern!r} is neither COLUMN nor DB.TABLE.COLUMN"
    return None


@dataclass(frozen=True, slots=True)
class MaskRules:
    """A profile's masking patterns (:func:`pattern_problem` has checked each)."""

    patterns: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def masked(self, table: str, column: str) -> bool:
        """Whether ``column`` of ``table`` (``db.table``) is masked."""
        column_l = column.lower()
        qualified = f"{table}.{column}".lower()
        for pattern in self.patterns:
            p = pattern.lower()
            target = qualified if "." in p else column_l
            if fnmatchcase(target, p):
                return True
        return False

    def columns(self, table: str, names: Iterable[str]) -> frozenset[str]:
        """The masked ones among ``names`` (columns of ``table``)."""
        return frozenset(n for n in names if self.masked(table, n))

    def refuse(
        self, table: str, names: Iterable[str], what: str, *, profile: str | None = None
    ) -> None:
        """Raises :class:`MaskedColumnError` when a column among ``names`` is masked: it
        cannot be ``what`` (``filtered on``, ``looked up by``), as the rows a filter keeps or
        whether a key exists would tell its values. Every face refuses through this."""
        hidden = sorted(self.columns(table, names))
        if hidden:
            where = "" if profile is None else f" in profile {profile!r}"
            raise MaskedColumnError(
                f"column(s) {', '.join(hidden)} of {table} are masked{where}: they cannot be {what}"
            )


def missing_partition_text(partition: str | None, table: str) -> str:
    """The text of an unknown partition's error under masking rules: the server's lists the
    table's partitions, whose names hold partition-key values (which may be masked)."""
    return f"partition {partition!r} of {table} does not exist"

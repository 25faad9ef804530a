"""The words of the filter language that both the parser and the renderer need (pure).

A bare column name is an identifier that is not a keyword; any other name is written
quoted. Kept apart so that :mod:`.tree` (rendering a filter back to text) and :mod:`.parse`
(reading one) share them without importing each other.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["IDENTIFIER", "KEYWORDS", "is_identifier"]

#: Words with a meaning of their own (any case); a column of that name must be quoted.
KEYWORDS: Final = frozenset(
    {"AND", "OR", "NOT", "IS", "NULL", "IN", "TRUE", "FALSE", "DATE", "TIME", "TIMESTAMP", "X"}
)
#: A bare (unquoted) column name.
IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def is_identifier(name: str) -> bool:
    return IDENTIFIER.fullmatch(name) is not None

"""Fluss's rule for database and table names (``TablePath.detectInvalidName``), checked
before connecting, so a typo costs no round trip and gets the server's reason at once."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_NAME_LENGTH", "invalid_name"]

MAX_NAME_LENGTH: Final = 200
_NAME: Final = re.compile(r"[A-Za-z0-9_-]+")


def invalid_name(identifier: str) -> str | None:
    """Why Fluss would refuse this database or table name, or None when it is valid."""
    if len(identifier) > MAX_NAME_LENGTH:
        return f"longer than {MAX_NAME_LENGTH} characters"
    if not _NAME.fullmatch(identifier):
        return "only ASCII letters, digits, '_' and '-' are allowed"
    return None

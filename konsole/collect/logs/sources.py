"""A profile's log sources as plain declarations (``[profiles.NAME.logs]``).

Reading a profile needs only these; reading a log (:mod:`konsole.collect.logs.reading`, which
re-exports them) needs subprocesses, globs and the line parser, so every command that
reads a profile (``konsole check`` above all) does not import those (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = ["DEFAULT_TIMEOUT", "CommandSource", "FileSource", "LogConfig", "LogSource"]

#: Seconds a command may run unless its source says otherwise.
DEFAULT_TIMEOUT: Final = 10.0


@dataclass(frozen=True, slots=True)
class FileSource:
    """A path or glob (``*``, ``?``, ``[...]``) on this host; ``~`` is expanded."""

    pattern: str

    def describe(self) -> str:
        return self.pattern


@dataclass(frozen=True, slots=True)
class CommandSource:
    """An argv template, run without a shell, killed after ``timeout`` seconds."""

    argv: tuple[str, ...]
    timeout: float = DEFAULT_TIMEOUT

    def describe(self) -> str:
        return " ".join(self.argv)


LogSource = FileSource | CommandSource


@dataclass(frozen=True, slots=True)
class LogConfig:
    """A profile's log sources: one per server subject, else the default (or none)."""

    default: LogSource | None = None
    servers: Mapping[str, LogSource] = field(default_factory=dict)

    def source_for(self, subject: str) -> LogSource | None:
        return self.servers.get(subject, self.default)

    @property
    def configured(self) -> bool:
        return self.default is not None or bool(self.servers)

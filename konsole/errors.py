"""konsole's own failures and its exit codes.

:class:`KonsoleError` is the base of every failure konsole raises on purpose (local cluster
runner, jar fetch, Java, unknown version, configuration), so a command can catch them once.
Errors of the wire protocol stay :class:`fluss_proto.errors.FlussError`.

:class:`ExitCode` follows monitoring-plugin habits (0 OK, 1 WARNING, 2 CRITICAL,
3 UNKNOWN) and is what every command returns: ``konsole preview``, ``konsole cluster
status``, and the coming ``check``, ``watch`` and ``record``.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode", "KonsoleError"]


class KonsoleError(Exception):
    """Base of konsole's own failures; the message is meant for the operator."""


class ExitCode(IntEnum):
    """Process exit codes shared by every konsole command."""

    #: Everything asked for was done (preview: every bucket read).
    OK = 0
    #: Done in part (preview: some bucket failed, timed out or sits in remote storage).
    WARNING = 1
    #: Nothing could be done (cluster unreachable, unknown table, every bucket failed).
    CRITICAL = 2
    #: Bad arguments or configuration, rejected credentials, internal failure.
    UNKNOWN = 3
    #: Stopped by SIGINT (128 + 2), as shells report it.
    INTERRUPTED = 130
    #: Stopped by SIGTERM (128 + 15).
    TERMINATED = 143

"""konsole's own failures and its exit codes.

:class:`KonsoleError` is the base of every failure konsole raises on purpose (local cluster
runner, jar fetch, Java, unknown version, configuration, export; the demo seed's
``SeedError`` lives beside the seed), so the CLI catches them once.
Errors of the wire protocol stay :class:`fluss_proto.errors.FlussError`.

:class:`ExitCode` follows monitoring-plugin habits (0 OK, 1 WARNING, 2 CRITICAL,
3 UNKNOWN), plus 74 for an output that could not be written and 130 / 143 for SIGINT /
SIGTERM, and is what every command returns (each command's module says what each code
means for it).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from pathlib import Path

__all__ = [
    "ActionError",
    "ActionFailedError",
    "ActionInputError",
    "ActionInterruptedError",
    "ActionRefusedError",
    "ClusterAlreadyRunningError",
    "ClusterError",
    "DistributionError",
    "ExitCode",
    "ExportForbiddenError",
    "JarFetchError",
    "JavaError",
    "KonsoleError",
    "MaskedColumnError",
    "ProfileError",
    "UnknownVersionError",
    "WritesNotAllowedError",
]


class ExitCode(IntEnum):
    """Process exit codes shared by every konsole command."""

    #: Everything asked for was done (preview: every bucket read).
    OK = 0
    #: A warning, or not everything asked for was done: check: a WARNING finding; preview:
    #: some bucket failed, timed out or sits in remote storage; a command that acts or reads
    #: a file (``cluster start``, ``seed``, ``record``, ``history``): it failed or was
    #: refused, the arguments being fine (1, the code shells read as failure).
    WARNING = 1
    #: Nothing could be done (cluster unreachable, unknown table, every bucket failed).
    CRITICAL = 2
    #: Bad arguments or configuration, rejected credentials, internal failure.
    UNKNOWN = 3
    #: An operator action's input is wrong (unknown server id, config key, value type,
    #: principal type), or a lookup key or a filter does not fit the table: sysexits'
    #: EX_DATAERR; nothing was sent.
    DATA_ERROR = 65
    #: An operator action was refused by a safety rail or the server is busy with another
    #: (a rebalance runs): sysexits' EX_TEMPFAIL; try again later or with --force.
    REFUSED = 75
    #: An operator action without the profile's opt-in (``writes = true`` /
    #: ``--allow-writes``), an export the profile forbids, a filter or key on a masked
    #: column: sysexits' EX_NOPERM; refused, nothing sent or read.
    NO_PERMISSION = 77
    #: The output could not be written (missing or read-only directory, full disk):
    #: sysexits' EX_IOERR, so a script tells a local I/O failure from a cluster problem.
    IO_ERROR = 74
    #: Stopped by SIGINT (128 + 2), as shells report it.
    INTERRUPTED = 130
    #: Stopped by SIGTERM (128 + 15).
    TERMINATED = 143


class KonsoleError(Exception):
    """Base of konsole's own failures; the message is meant for the operator.

    The CLI catches it once (``konsole.cli.main``), prints ``error: <message>`` and exits with
    :attr:`exit_code`: 1 (the action failed) unless a subclass says otherwise.
    """

    exit_code: ExitCode = ExitCode.WARNING


# ----------------------------------------------------------------------- local cluster


class ClusterError(KonsoleError):
    """The local cluster could not do what was asked; the message says why."""


class ClusterAlreadyRunningError(ClusterError):
    """A live cluster holds the run dir: nothing was started."""


class DistributionError(KonsoleError):
    """The server jars cannot be used; the message is one line saying what is missing."""


class JarFetchError(KonsoleError):
    """Maven could not provide the jars; the message is Maven's error summary."""


class JavaError(KonsoleError):
    """No Java runtime, or one too old for the Fluss servers."""


class UnknownVersionError(KonsoleError, ValueError):
    """A ``--version`` the runner does not know how to fetch."""

    def __init__(self, version: str, supported: Iterable[str] = ()) -> None:
        known = ", ".join(supported)
        super().__init__(f"unknown Fluss version {version!r}; supported: {known}")


# ----------------------------------------------------------------------- configuration


class ProfileError(KonsoleError):
    """Bad configuration: one line naming the file, the line and the key where known."""

    exit_code = ExitCode.UNKNOWN

    def __init__(
        self,
        message: str,
        *,
        path: Path | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        self.path, self.line, self.key, self.reason = path, line, key, message
        where = str(path) if path else ""
        if path and line:
            where += f":{line}"
        if key:
            where += f"{': ' if where else ''}{key}"
        super().__init__(f"{where}: {message}" if where else message)


# ----------------------------------------------------------------------- masking, export


class MaskedColumnError(KonsoleError):
    """A filter or a lookup key names a column the profile masks (which rows match, or
    whether a key exists, would tell its values): refused, nothing read."""

    exit_code = ExitCode.NO_PERMISSION


class ExportForbiddenError(KonsoleError):
    """The profile forbids writing rows to a file (``export = false``): refused before
    connecting."""

    exit_code = ExitCode.NO_PERMISSION


# ----------------------------------------------------------------------- operator actions


class ActionError(KonsoleError):
    """An operator action (``konsole admin``) did not happen; the message is one line."""


class WritesNotAllowedError(ActionError):
    """The profile did not opt in to writes: refused before connecting, nothing sent."""

    exit_code = ExitCode.NO_PERMISSION


class ActionInputError(ActionError):
    """The action's input is wrong (unknown server, key, type, principal): nothing sent."""

    exit_code = ExitCode.DATA_ERROR


class ActionRefusedError(ActionError):
    """A safety rail (or the server's one-rebalance-at-a-time rule) refused the action."""

    exit_code = ExitCode.REFUSED


class ActionFailedError(ActionError):
    """The server answered the action with an error; the message carries its first line."""


class ActionInterruptedError(ActionError):
    """Ctrl-C (or SIGTERM) stopped the wait; the server-side operation keeps running."""

    exit_code = ExitCode.INTERRUPTED

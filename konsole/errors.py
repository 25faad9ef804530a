"""konsole's own failures and its exit codes.

:class:`KonsoleError` is the base of every failure konsole raises on purpose (local cluster
runner, jar fetch, Java, unknown version, configuration, export; the demo seed's
``SeedError`` lives beside the seed), so the CLI catches them once.
Errors of the wire protocol stay :class:`fluss_proto.errors.FlussError`.

:class:`ExitCode` follows monitoring-plugin habits (0 OK, 1 WARNING, 2 CRITICAL,
3 UNKNOWN, which is also every usage error), the sysexits codes for the rest (65 data,
66 no input, 69 unavailable, 70 internal error, 74 I/O, 75 try again, 77 no permission)
and 130 / 143 for SIGINT / SIGTERM. It is what every command returns; docs/cli.md holds
the table (the tests read it there) and ``konsole check`` turns every code above 3 into 3.
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
    "NoLocalClusterError",
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
    #: Bad arguments or configuration, rejected credentials; check: anything it could not
    #: judge (every code below is 3 for it).
    UNKNOWN = 3
    #: A usage error (unknown command or option, bad value, missing argument, conflicting
    #: options): the same code as UNKNOWN, for every command (docs/cli.md says why).
    USAGE = 3
    #: The input is wrong: an operator action's (unknown server id, config key, value
    #: type, principal type; nothing was sent), a lookup key or a filter that does not fit
    #: the table, or a history file konsole cannot read (not SQLite, corrupt, another
    #: program's, a newer konsole's): sysexits' EX_DATAERR.
    DATA_ERROR = 65
    #: The input file is missing (a history file that does not exist): EX_NOINPUT.
    NO_INPUT = 66
    #: Something on this machine konsole needs is not there: no local cluster in the run
    #: dir, the listen address taken, no terminal for the console: EX_UNAVAILABLE.
    UNAVAILABLE = 69
    #: An internal error (a bug in konsole): one line, never a traceback: EX_SOFTWARE.
    SOFTWARE = 70
    #: Try again later: an operator action was refused by a safety rail or the server is
    #: busy with another (a rebalance runs; or with --force), another recorder holds the
    #: history file: sysexits' EX_TEMPFAIL.
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

    The CLI catches it once (``konsole.cli.main``), prints ``konsole: error: <message>`` and
    exits with :attr:`exit_code`: 1 (the action failed) unless a subclass says otherwise.
    """

    exit_code: ExitCode = ExitCode.WARNING


# ----------------------------------------------------------------------- local cluster


class ClusterError(KonsoleError):
    """The local cluster could not do what was asked; the message says why."""


class NoLocalClusterError(ClusterError):
    """No (running) local cluster in the run dir: for ``--local`` and the ``cluster``
    commands that need one (exit 69, EX_UNAVAILABLE)."""

    exit_code = ExitCode.UNAVAILABLE


class ClusterAlreadyRunningError(ClusterError):
    """A live cluster holds the run dir: nothing was started."""


class DistributionError(KonsoleError):
    """The server jars cannot be used; the message is one line saying what is missing."""


class JarFetchError(KonsoleError):
    """Maven could not provide the jars; the message is Maven's error summary."""


class JavaError(KonsoleError):
    """No Java runtime, or one too old for the Fluss servers."""


class UnknownVersionError(KonsoleError, ValueError):
    """A ``--version`` the runner does not know how to fetch (a usage error)."""

    exit_code = ExitCode.USAGE

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


class OutputPathError(KonsoleError):
    """A file konsole was told to write cannot be: its directory is missing, or the path
    names a link, a device or a FIFO (``store.file_kinds``)."""

    exit_code = ExitCode.IO_ERROR


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

"""How every konsole command fails: one line on stderr, one prefix, the documented exit code.

docs/cli.md is the source of truth (its exit-code table is the one the tests read); this
module is where the command line keeps it:

- :func:`fail` and :func:`error_line`: ``konsole: error: <message>``, one line, on stderr;
- :func:`history_failure`: a history file that cannot be used, by why (66 missing, 65 not
  a konsole history or a newer one, 75 another recorder holds it, 74 cannot be written);
- :func:`run_guarded`: what the top-level group runs a command under. Whatever escapes the
  command becomes one line and a code: a usage error (click's, or konsole's own) 3, a
  :class:`~konsole.errors.KonsoleError` its own code, an output that cannot be written
  (stdout full, ``> /dev/full``) 74, a reader that went away (``| head``) nothing and 0,
  Ctrl-C 130, anything else 70 ("internal error", never a traceback;
  ``KONSOLE_TRACEBACK=1`` prints one as well). ``konsole check`` turns every code above 3
  into 3 and still prints its status line (monitoring-plugin rule).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, NoReturn

import click

from konsole.errors import ExitCode, KonsoleError

if TYPE_CHECKING:
    from konsole.collect.history.files import HistoryError

__all__ = [
    "PLUGIN_COMMANDS",
    "PREFIX",
    "error_line",
    "fail",
    "history_failure",
    "run_guarded",
]

#: The one prefix of the line that says why a command failed.
PREFIX: Final = "konsole: error: "
#: Commands that answer as monitoring plugins: every exit code above 3 is 3 (UNKNOWN) for
#: them, and a failure still prints the plugin's status line on stdout.
PLUGIN_COMMANDS: Final = frozenset({"check"})
#: The environment variable that prints the traceback of an internal error as well.
TRACEBACK_ENV: Final = "KONSOLE_TRACEBACK"


def one_line(message: object) -> str:
    """``message`` as one line: its lines joined with ``; ``, except a line that goes on
    (ends with ``,`` or ``:``, as click's "Choose from:" list): joined with a space."""
    out = ""
    for part in (p.strip() for p in str(message).splitlines()):
        if part:
            out += ("" if not out else " " if out.endswith((",", ":")) else "; ") + part
    return out


def error_line(message: object) -> None:
    """``konsole: error: <message>`` on stderr, one line; never raises (stderr may be full)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{PREFIX}{one_line(message)}\n")
        sys.stderr.flush()


def fail(message: object, code: int) -> NoReturn:
    """Say why on stderr (:func:`error_line`) and exit with ``code``."""
    error_line(message)
    sys.exit(int(code))


def history_failure(exc: HistoryError) -> NoReturn:
    """Fail with the code docs/cli.md gives a history file that cannot be used."""
    from konsole.collect.history.files import HistoryLocked, HistoryUnwritable

    if isinstance(exc, HistoryLocked):
        code = ExitCode.REFUSED
    elif isinstance(exc, HistoryUnwritable):
        code = ExitCode.IO_ERROR
    else:
        code = ExitCode.DATA_ERROR
    fail(exc, code)


def _usage_text(exc: click.UsageError) -> str:
    message = exc.format_message()
    if exc.ctx is not None:
        message += f" (see `{exc.ctx.command_path} --help`)"
    return message


def _os_error_text(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else "stdout"
    return f"cannot write {where}: {exc.strerror or exc}"


def _quiet_stdout() -> None:
    """stdout cannot take more (full, or a closed pipe): point its descriptor at /dev/null,
    so that the interpreter's last flush neither fails nor prints a warning."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _flush_stdout() -> OSError | None:
    try:
        sys.stdout.flush()
    except OSError as exc:
        return exc
    except ValueError:  # closed
        return None
    return None


def run_guarded(
    body: Callable[[], object],
    command: Callable[[], str | None],
    plugin_format: Callable[[], str] = lambda: "nagios",
) -> int:
    """Run ``body`` (the group's own main, not standalone) and return the exit code; what
    escapes it is said in one line. ``command`` names the command that ran (None before
    one was chosen), for the plugin rule; ``plugin_format`` the ``--format`` it was
    asked for (a plugin asked for JSON answers a failure in JSON too)."""
    code: int
    said: str | None = None
    help_text: str | None = None
    try:
        result = body()
        code = result if isinstance(result, int) else ExitCode.OK
    except SystemExit as exc:
        code = _system_exit_code(exc)
    except click.exceptions.NoArgsIsHelpError as exc:  # a group alone: what is in it
        help_text, code = exc.format_message(), ExitCode.OK
    except click.UsageError as exc:
        said, code = _usage_text(exc), ExitCode.USAGE
    except click.ClickException as exc:
        said, code = exc.format_message(), exc.exit_code
    except (click.Abort, KeyboardInterrupt, EOFError):
        said, code = "interrupted", ExitCode.INTERRUPTED
    except KonsoleError as exc:
        said, code = str(exc), exc.exit_code
    except OSError as exc:
        if exc.errno == errno.EPIPE:  # the reader went away (| head): not an error
            _quiet_stdout()
            code = ExitCode.OK
        else:
            _quiet_stdout()
            said, code = _os_error_text(exc), ExitCode.IO_ERROR
    except Exception as exc:
        if os.environ.get(TRACEBACK_ENV):
            with contextlib.suppress(OSError):
                traceback.print_exc()
        said, code = f"internal error: {type(exc).__name__}: {exc}", ExitCode.SOFTWARE
    if help_text is not None:
        try:
            click.echo(help_text)
        except OSError as exc:
            _quiet_stdout()
            said, code = _os_error_text(exc), ExitCode.IO_ERROR
    late = _flush_stdout()
    if late is not None:
        _quiet_stdout()
        if late.errno != errno.EPIPE and said is None:
            said, code = _os_error_text(late), ExitCode.IO_ERROR
    name = command()
    if name in PLUGIN_COMMANDS and code > ExitCode.UNKNOWN:
        code = ExitCode.UNKNOWN
    if said is not None:
        if name in PLUGIN_COMMANDS:
            _plugin_line(said, plugin_format())
        error_line(said)
    return int(code)


def _plugin_line(message: str, fmt: str = "nagios") -> None:
    """A monitoring plugin's answer when it could not judge: stdout's first line, or with
    ``--format json`` the check's one JSON object (status UNKNOWN)."""
    text = f"FLUSS UNKNOWN: {one_line(message)}"
    if fmt == "json":
        from konsole.model.check import failure
        from konsole.render.check import render

        text = render(failure(ExitCode.UNKNOWN, one_line(message), cluster={}), "json")
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(f"{text}\n")
        sys.stdout.flush()
    if _flush_stdout() is not None:
        _quiet_stdout()


def _system_exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return ExitCode.OK
    if isinstance(exc.code, int):
        return exc.code
    error_line(exc.code)
    return ExitCode.WARNING

"""Log sources: where a server's log lines come from, and reading them, bounded.

A profile names, per server or for every server (``[profiles.NAME.logs]``, see
docs/incidents.md), one source:

- :class:`FileSource`: a path or a glob on this host (a mounted volume); the newest
  matching files are read from their end;
- :class:`CommandSource`: an argv list run **without a shell**; ``{server}``, ``{host}``,
  ``{id}`` and ``{since}`` are replaced inside each argument (a value from the cluster can
  never become a new argument or a shell word), with a timeout and bounded output;
- the local cluster: each server's own log file (a :class:`FileSource` per server, made
  by :func:`konsole.collect.profiles.profile_from_local`).

Lines are parsed and masked by :mod:`konsole.model.logs`. Every failure is a
:class:`LogSourceError` naming the server and the source: a command that outlived its
timeout (:class:`LogTimeout`), a glob matching nothing (:class:`LogNotFound`), a file that
cannot be read or a command that failed (:class:`LogUnreadable`).
"""

from __future__ import annotations

import contextlib
import glob
import os
import selectors
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from konsole.collect.logs.sources import (
    CommandSource,
    FileSource,
    LogConfig,
    LogSource,
)
from konsole.errors import KonsoleError
from konsole.model.logs import LogLine, parse_lines
from konsole.model.timefmt import iso_seconds_text

__all__ = [
    "MAX_BYTES",
    "MAX_LINES",
    "CommandSource",
    "FileSource",
    "LogConfig",
    "LogNotFound",
    "LogSource",
    "LogSourceError",
    "LogTimeout",
    "LogUnreadable",
    "ServerRef",
    "read_log",
    "server_ref",
]

#: Bounds of one read: the last lines, from at most the last bytes of a file or an output.
MAX_LINES: Final = 2000
MAX_BYTES: Final = 512 * 1024
PLACEHOLDERS: Final = ("{server}", "{host}", "{id}", "{since}")


class LogSourceError(KonsoleError):
    """A server's log could not be read; the message names the server and why."""


class LogTimeout(LogSourceError):
    """The log command did not finish within its timeout (it was killed)."""


class LogNotFound(LogSourceError):
    """The path or glob matches no file."""


class LogUnreadable(LogSourceError):
    """A file could not be read, or the command could not start or failed."""


@dataclass(frozen=True, slots=True)
class ServerRef:
    """The server whose log is read, as the placeholders see it."""

    #: The event subject: "tablet-server 2", "coordinator 127.0.0.1:9123".
    subject: str
    host: str = ""
    #: The tablet server's node id; a coordinator's port (coordinators have no id in metadata).
    id: str = ""

    @property
    def slug(self) -> str:
        """``{server}``: the subject with ``-`` for the space (``tablet-server-2``)."""
        return self.subject.replace(" ", "-")


def server_ref(subject: str, address: str | None = None) -> ServerRef:
    """The :class:`ServerRef` of an event subject (``tablet-server 2``, ``coordinator h:p``);
    a tablet server's host comes from its ``address`` (``host:port``) when known."""
    role, _, rest = subject.partition(" ")
    if role == "coordinator":
        host, _, port = rest.rpartition(":")
        return ServerRef(subject, host, port)
    host = address.rpartition(":")[0].strip("[]") if address else ""
    return ServerRef(subject, host, rest)


def read_log(
    source: LogSource,
    server: ServerRef,
    *,
    since: float,
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
    utc_offset_s: float | None = None,
) -> list[LogLine]:
    """The last lines of ``server``'s log from ``source``, parsed and masked (blocking:
    call it in a thread). ``since`` fills ``{since}``; filtering by time is the caller's."""
    if isinstance(source, FileSource):
        text = _read_files(source, server, max_bytes)
    else:
        text = _run(source, server, since, max_bytes)
    lines = text.splitlines()
    if len(text) >= max_bytes and lines:
        lines = lines[1:]  # the first line was cut by the byte bound
    return parse_lines(lines[-max_lines:], utc_offset_s=utc_offset_s)


def _where(server: ServerRef, source: LogSource) -> str:
    return f"{server.subject}: log source {source.describe()!r}"


def _read_files(source: FileSource, server: ServerRef, max_bytes: int) -> str:
    pattern = os.path.expanduser(_fill(source.pattern, server, None))
    paths = sorted(glob.glob(pattern), key=_mtime) if glob.has_magic(pattern) else [pattern]
    if not paths:
        raise LogNotFound(f"{_where(server, source)} matches no file")
    chunks: list[bytes] = []
    left = max_bytes
    for path in reversed(paths):  # newest first, until the byte bound is spent
        try:
            chunk = _tail_bytes(Path(path), left)
        except FileNotFoundError:
            raise LogNotFound(f"{_where(server, source)}: {path} does not exist") from None
        except OSError as exc:
            raise LogUnreadable(f"{_where(server, source)}: {exc.strerror}: {path}") from None
        chunks.insert(0, chunk)
        left -= len(chunk)
        if left <= 0:
            break
    return b"".join(chunks).decode("utf-8", "replace")


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _tail_bytes(path: Path, max_bytes: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - max_bytes))
        data = f.read(max_bytes)
    return data if data.endswith(b"\n") or not data else data + b"\n"


def _fill(arg: str, server: ServerRef, since: float | None) -> str:
    """One argument with its placeholders replaced (plain replacement: no format spec, no
    attribute access, and a value never splits into two arguments)."""
    values = {
        "{server}": server.slug,
        "{host}": server.host,
        "{id}": server.id,
        "{since}": iso_seconds_text(since) if since is not None else "",
    }
    for key, value in values.items():
        arg = arg.replace(key, value)
    return arg


def _run(source: CommandSource, server: ServerRef, since: float, max_bytes: int) -> str:
    argv = [_fill(a, server, since) for a in source.argv]
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,  # the timeout kills the command's children too
            )
        except OSError as exc:
            raise LogUnreadable(f"{_where(server, source)} did not start: {exc}") from None
        try:
            out = _collect(proc, source.timeout, max_bytes)
        except TimeoutError:
            raise LogTimeout(
                f"{_where(server, source)} timed out after {source.timeout:g} s (killed)"
            ) from None
        finally:
            _stop(proc)
        if proc.returncode != 0:
            err.seek(0)
            why = err.read(300).decode("utf-8", "replace").strip().splitlines()
            raise LogUnreadable(
                f"{_where(server, source)} exited with {proc.returncode}"
                + (f": {why[0]}" if why else "")
            )
    return out.decode("utf-8", "replace")


def _collect(proc: subprocess.Popen[bytes], timeout: float, max_bytes: int) -> bytes:
    """The command's output until it ends, keeping its last ``max_bytes``."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    kept = bytearray()
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while True:  # bounded by the deadline
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if not sel.select(left):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            kept += chunk
            if len(kept) > max_bytes:
                del kept[: len(kept) - max_bytes]
    try:
        proc.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise TimeoutError from None
    return bytes(kept)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)
    if proc.stdout is not None:
        proc.stdout.close()

"""Log evidence for the console's story (tests/_testutil/console.py): tablet server 3's log
around its stop at T_STOPPED, a profile naming log sources, a recorded excerpt."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from konsole.collect.logs.reading import LogConfig, LogSource
from konsole.collect.profiles import Profile
from store import open_writer
from store.rows import LogExcerptRow
from tests._testutil.console import PROFILE, T_STOPPED

__all__ = ["IN_WINDOW", "SERVER", "add_excerpt", "log_line", "story_profile", "write_log"]

SERVER = "tablet-server 3"
#: The lines of the event's window (60 s before to 30 s after the stop), as written.
IN_WINDOW = (
    (T_STOPPED - 12, "INFO", "ServerBase [main] - RECEIVED SIGNAL 15: SIGTERM."),
    (T_STOPPED - 11, "INFO", "TabletServer [hook] - Shutting down Tablet server (JVM_SHUTDOWN)."),
    (
        T_STOPPED - 9,
        "WARN",
        "TabletServer [hook] - TabletServer 3 is still the leader for 2 buckets",
    ),
    (T_STOPPED - 8, "ERROR", "NettyClient [io-1] - Connection to coordinator lost"),
    (T_STOPPED + 20, "INFO", "ServerBase [main] - Starting TabletServer."),
)
OUTSIDE = (
    (T_STOPPED - 300, "INFO", "LogManager [main] - an older minute"),
    (T_STOPPED + 200, "INFO", "LogManager [main] - a later minute"),
)


def log_line(at: float, level: str, text: str) -> str:
    """A line in the local runner's layout, in this host's zone (as a server writes it)."""
    stamp = datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
    return f"{stamp} {level:<5} {text}"


def write_log(path: Path) -> Path:
    lines = sorted(OUTSIDE[:1] + IN_WINDOW + OUTSIDE[1:])
    path.write_text("\n".join(log_line(*line) for line in lines) + "\n")
    return path


def story_profile(source: LogSource | None) -> Profile:
    """The story's profile, with ``source`` for tablet server 3 (None: no log source)."""
    logs = LogConfig(servers={SERVER: source} if source is not None else {})
    return Profile(name=PROFILE, source="profile", bootstrap=("127.0.0.1:9123",), logs=logs)


def add_excerpt(history: Path, at_ms: int) -> None:
    """The excerpt a recorder would have kept for the server_left event at ``at_ms``."""
    with open_writer(history) as writer:
        writer.add_log_excerpt(
            LogExcerptRow(
                at_ms,
                SERVER,
                "server_left",
                at_ms - 60_000,
                at_ms + 30_000,
                "/var/log/fluss/tablet-server-3.log",
                tuple(log_line(*line) for line in IN_WINDOW),
            )
        )

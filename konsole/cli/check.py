"""`konsole check`: one look at a cluster, answered the way monitoring systems expect.

Exit 0 OK, 1 WARNING, 2 CRITICAL (an unreachable cluster and a timeout included), 3
UNKNOWN (bad arguments or configuration, rejected credentials, ``--record`` without a
history, no local cluster for ``--local``, an output that cannot be written, an internal
error: every code the other commands give above 3 is 3 here, docs/cli.md). The answer goes
to stdout in every case, even for UNKNOWN, because Nagios and Icinga read the first line of
stdout; an UNKNOWN also says why on stderr, as every command's error does
(``konsole: error: ...``).

Time: ``--timeout`` counts from the process start. The poll and every request in it get a
share of what is left; a watchdog thread prints a CRITICAL timeout answer and ends the
process just before the deadline, whatever the cluster (or a blocked thread) does. The
answer is the last thing the process does: it ends right after writing it, without the
interpreter's clean-up (which took 0.5-1 s on a loaded machine, after the answer).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn, Protocol

import click

from konsole.cli.exits import PREFIX, error_line
from konsole.cli.options import ConnectionArgs, Number, cluster_options
from konsole.errors import ExitCode, KonsoleError, ProfileError

if TYPE_CHECKING:
    from konsole.collect.cluster.metrics import Scraper
    from konsole.collect.cluster.poller import Poller
    from konsole.collect.profiles import Profile
    from konsole.model.check import CheckResult, Thresholds
    from konsole.model.health import HealthRules
    from konsole.model.poll import JudgedPoll
    from konsole.model.snapshot import ClusterSnapshot

DEFAULT_TIMEOUT: Final = 10.0
#: The watchdog fires this long before the deadline, leaving time to print and exit.
WATCHDOG_MARGIN: Final = 0.15
#: Of the time left when the poll starts, the share the poll may use (the rest: a second
#: metrics look for KV rejections, rendering, closing connections).
POLL_SHARE: Final = 0.8
#: One retry (the client's default is 2): a server that timed out is not asked again in
#: the look (the poller's per-server deadline and the client's quarantine), so a retry
#: costs a wait only on another server; a request meant for any server goes elsewhere.
RETRIES: Final = 1
#: Seconds between the two metrics looks that tell whether KV rejections are rising.
KV_WINDOW: Final = 1.0
#: konsole.render.check.FORMATS, repeated so that importing the CLI does not import the check
#: (and the metrics stack under it) for every other command.
FORMATS: Final = ("nagios", "json", "text")


# =========================================================================== history


class HistoryUnavailable(Exception):
    """``--record`` cannot work with this history file; the message says why."""


class CheckRecorder(Protocol):
    """Where ``--record`` appends a check's result (the history store)."""

    @property
    def path(self) -> Path:
        """The history file (the report command printed after a check names it)."""
        ...

    def record(self, result: CheckResult, judged: JudgedPoll | None) -> str | None: ...


@dataclass(frozen=True)
class HistoryCheckRecorder:
    """Appends a check to the profile's history file (the one ``konsole record`` writes).

    The result's status line goes in as an operator note on the cluster (a note needs no
    writer lock). The poll behind it goes in as a poll too, as judged, through the
    :class:`~konsole.collect.history.recorder.Recorder` (the one way into the history for polls),
    unless a ``konsole record`` holds the file: that recorder records the cluster's polls.
    """

    path: Path
    #: The local cluster's run id (part of its identity in the history), else None.
    run_id: str | None = None

    def record(self, result: CheckResult, judged: JudgedPoll | None) -> str | None:
        """None when appended; else why not (the check's own answer stands)."""
        from konsole.collect.history.files import HistoryError, HistoryLocked
        from konsole.collect.history.notes import write_note
        from konsole.collect.history.recorder import Recorder
        from konsole.render.check import render_nagios

        said: list[str] = []
        try:
            if judged is not None:
                # One poll: retention is left to the recorder that runs (none applied here).
                recorder = Recorder(
                    self.path, say=said.append, run_id=self.run_id, retention_every_s=None
                )
                try:
                    recorder.open()
                except HistoryLocked:
                    pass  # a recorder owns the file and records the polls
                else:
                    try:
                        recorder.record(judged)
                    finally:
                        recorder.close()
                    if recorder.status.polls_recorded == 0:
                        return recorder.status.reason or "; ".join(said) or "poll not written"
            line = render_nagios(result).splitlines()[0]
            at = result.time if result.time is not None else time.time()
            write_note(self.path, f"konsole check: {line}", at=at)
        except (HistoryError, OSError) as exc:
            return str(exc)
        return None


def open_recorder(path: Path, run_id: str | None = None) -> CheckRecorder:
    """The history file ``path`` (``ConnectionArgs.history_file``: the one the console and
    ``konsole record`` use); refuses a file that cannot be a history (a directory, a foreign
    or newer file) before the check runs."""
    from konsole.collect.history.files import HistoryError, open_reader

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HistoryUnavailable(f"{path}: cannot create its directory: {exc}") from None
    if path.exists():
        try:
            open_reader(path).close()
        except HistoryError as exc:
            raise HistoryUnavailable(str(exc)) from None
    return HistoryCheckRecorder(path, run_id)


# =========================================================================== timing


#: The most of a host process's age (a test's CliRunner) that counts against --timeout; a
#: process started as konsole counts all of its age (:func:`_own_command_line`).
HOST_AGE_CAP: Final = 5.0


def process_age(cap: float | None = HOST_AGE_CAP) -> float:
    """Seconds since this process started (interpreter start-up counts against --timeout),
    at most ``cap`` (None: no cap)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        age = uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0
    age = max(age, 0.0)
    return age if cap is None else min(age, cap)


def _own_command_line() -> bool:
    """Whether this check is the process's own command (the ``konsole`` script or ``python
    -m konsole.cli``). Then nothing but konsole ran before it: all of the process's age
    counts (on a loaded machine start-up alone passed 5 s, the host cap) and the process
    ends as soon as the answer is written."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root().command if ctx is not None else None
    return bool(getattr(root, "own_command_line", False))


class Watchdog:
    """Prints ``text`` and ends the process with ``code`` at ``deadline`` (monotonic)
    unless cancelled first. A thread, so a blocked event loop cannot hold it up. When
    stdout takes no answer (full), it says so on stderr and ends with 3 (docs/cli.md)."""

    def __init__(self, deadline: float, text: str, code: int) -> None:
        self._payload = (text + "\n").encode()
        self._code = code
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._run, args=(deadline,), name="check-watchdog", daemon=True
        )

    def start(self) -> Watchdog:
        self._thread.start()
        return self

    def _run(self, deadline: float) -> None:
        if self._done.wait(max(0.0, deadline - time.monotonic())):
            return
        with self._lock:
            if self._done.is_set():
                return
            code = self._code
            try:
                os.write(1, self._payload)
            except OSError as exc:
                code = ExitCode.UNKNOWN
                with contextlib.suppress(OSError):
                    os.write(2, f"{PREFIX}cannot write stdout: {exc.strerror}\n".encode())
            os._exit(code)

    def say(self, text: str) -> None:
        """Answer ``text`` instead, should it fire (the cluster is known by now)."""
        with self._lock:
            self._payload = (text + "\n").encode()

    def cancel(self) -> None:
        """Stop the watchdog (blocks for good if it fired: the process is ending)."""
        with self._lock:
            self._done.set()


# =========================================================================== the look


def build_check_poller(
    profile: Profile, poll_timeout: float
) -> tuple[Poller, Scraper, Callable[[Any], Any], list[str]]:
    """A poller for one bounded look; returns it, its scraper, the endpoints function and
    the list the connect step fills with rejected-credential messages."""
    from konsole.collect.cluster.connect import assemble_poller
    from konsole.collect.cluster.poller import PollerConfig, server_deadline

    # Each server's deadline, the one rule of every poll (rounded: it shows in findings).
    server_timeout = server_deadline(poll_timeout, profile.server_timeout)
    request_timeout = min(profile.request_timeout, server_timeout)
    connect_timeout = min(profile.connect_timeout, server_timeout)
    side_timeout = round(max(0.1, poll_timeout * 0.5), 2)
    config = PollerConfig.from_profile(
        profile,
        poll_timeout=round(poll_timeout, 2),
        probe_timeout=min(side_timeout, profile.connect_timeout, profile.request_timeout),
        earliest_every=1_000_000,  # one look: latest offsets only
        storage_inline=True,
    )
    live = assemble_poller(
        profile,
        config,
        connect_timeout=connect_timeout,
        request_timeout=request_timeout,
        scrape_timeout=min(profile.metrics_timeout, side_timeout),
        retries=RETRIES,
    )
    return live.poller, live.scraper, live.endpoints, live.rejected


def _has_kv_rejections(snapshot: ClusterSnapshot) -> bool:
    return any(
        (t.kv_rejections or 0) > 0 for m in snapshot.metrics if m.role == "tablet" for t in m.tables
    )


async def _second_look(
    snapshot: ClusterSnapshot, scraper: Scraper, endpoints: Callable[[Any], Any]
) -> ClusterSnapshot:
    """The same snapshot with metrics scraped again ``KV_WINDOW`` later."""
    import asyncio

    from konsole.model.metrics import MetricsError, ServerMetrics
    from konsole.model.roles import BOOTSTRAP_SCOPE
    from konsole.model.snapshot import ClusterSnapshot

    assert snapshot.view is not None
    await asyncio.sleep(KV_WINDOW)
    taken_at = time.time()
    results = await scraper.scrape(endpoints(snapshot.view))
    health_error = next((e.message for e in snapshot.errors if e.scope == "health"), None)
    return (
        ClusterSnapshot.assemble(
            seq=snapshot.seq + 1,
            taken_at=taken_at,
            latency_s=snapshot.latency_s,
            view=snapshot.view,
            coordinators=snapshot.coordinators,
            unanswered=tuple(e for e in snapshot.errors if e.scope == BOOTSTRAP_SCOPE),
            health=snapshot.health,
            health_error=health_error,
            metrics=tuple(r for r in results if isinstance(r, ServerMetrics)),
            metrics_errors=tuple(r for r in results if isinstance(r, MetricsError)),
            metrics_origin=snapshot.metrics_origin,
        )
        .with_storage(snapshot.storage)
        .with_known(snapshot.known)
    )


async def look(
    profile: Profile,
    *,
    deadline: float,
    timeout: float,
    rules: HealthRules,
    thresholds: Thresholds,
    cluster: dict[str, Any],
    seen: list[JudgedPoll] | None = None,
    history: Path | None = None,
) -> CheckResult:
    """Poll once (and scrape again when KV rejections might be rising); never past
    ``deadline`` (monotonic). The look is judged by the code that judges every face's
    polls (:func:`~konsole.model.poll.judge_look`: the second look judged after the first);
    the poll the answer is of is appended to ``seen``. ``history``: the cluster's history
    file, whose last storage part the storage look starts from."""
    import asyncio

    from konsole.collect.history.recorded_look import recorded_look
    from konsole.model.check import assess, failure, timeout_result
    from konsole.model.poll import judge_look

    left = deadline - time.monotonic()
    poller, scraper, endpoints, rejected = build_check_poller(profile, left * POLL_SHARE)
    start = recorded_look(history)
    poller.seed_storage(start.storage)
    poller.seed_roles(start.roles)
    poller.seed_known(start.known(poller.known))
    snapshot: ClusterSnapshot | None = None
    later: ClusterSnapshot | None = None
    try:
        async with asyncio.timeout(max(0.05, left - 0.1)):
            snapshot = await poller.poll()
            if (
                snapshot.ok
                and _has_kv_rejections(snapshot)
                and deadline - time.monotonic() > KV_WINDOW + 2 * scraper.timeout
            ):
                later = await _second_look(snapshot, scraper, endpoints)
    except TimeoutError:
        if snapshot is None:
            return timeout_result(timeout, cluster=cluster)
    finally:
        with contextlib.suppress(Exception, asyncio.CancelledError):
            async with asyncio.timeout(max(0.05, min(0.5, deadline - time.monotonic()))):
                await poller.aclose()
                await scraper.aclose()
    assert snapshot is not None
    if rejected and not snapshot.ok:
        return failure(ExitCode.UNKNOWN, f"credentials rejected: {rejected[0]}", cluster=cluster)
    judged = judge_look(snapshot, rules)
    if later is not None:
        judged = judge_look(later, rules, after=judged)
    if seen is not None:
        seen.append(judged)
    return assess(judged, thresholds=thresholds, rules=rules, cluster=cluster)


# =========================================================================== command


def _finish(result: CheckResult, fmt: str, *, end_process: bool = False) -> NoReturn:
    """The answer on stdout; an UNKNOWN's reason on stderr too (docs/cli.md).

    ``end_process``: the process ends here, once both are written (a failed write raises
    as before: run_guarded says it). The interpreter's clean-up (modules, threads, the
    heap) comes after the answer and counted against --timeout for whoever waits on the
    process: 0.5-1 s under load.
    """
    from konsole.render.check import render

    click.echo(render(result, fmt))
    sys.stdout.flush()
    if result.exit_code == ExitCode.UNKNOWN:
        error_line(result.summary)
    if end_process:
        sys.stderr.flush()
        os._exit(result.exit_code)
    sys.exit(result.exit_code)


@contextlib.contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """The cycle collector off for one bounded look (reference counting still frees).

    A check keeps most of what it allocates (modules, replies, the snapshot) to the end:
    at 1,600 buckets the collector ran about 90 times in the look and freed a few hundred
    objects, for about 3 % of the process's instructions (docs/performance.md).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def run_check(
    cluster_args: ConnectionArgs,
    *,
    warning: Sequence[str],
    critical: Sequence[str],
    timeout: float,
    fmt: str,
    record: bool,
    started: float | None = None,
) -> CheckResult:
    """Everything `konsole check` does but printing and exiting (tests call it)."""
    import asyncio

    from konsole.model.check import (
        CheckError,
        failure,
        parse_thresholds,
        rules_with_thresholds,
        timeout_result,
    )
    from konsole.render.check import render

    started = time.monotonic() - process_age() if started is None else started
    deadline = started + timeout
    cluster: dict[str, Any] = {}
    # From here on nothing outlives --timeout: reading the profiles included.
    watchdog = Watchdog(
        deadline - WATCHDOG_MARGIN,
        render(timeout_result(timeout, cluster=cluster), fmt),
        ExitCode.CRITICAL,
    ).start()
    try:
        thresholds = parse_thresholds(warning, critical)
        chosen = cluster_args.resolve()
        cluster = {
            # a name only when a profile was named: never an option's name (docs/health-check.md)
            "profile": chosen.name if chosen.source == "profile" else None,
            "source": chosen.source,
            "bootstrap": list(chosen.bootstrap),
        }
        rules = rules_with_thresholds(chosen.health, thresholds)
        recorder = (
            open_recorder(cluster_args.history_file(chosen), chosen.run_id) if record else None
        )
    except (CheckError, KonsoleError) as exc:  # ProfileError, no local cluster
        watchdog.cancel()
        return failure(ExitCode.UNKNOWN, str(exc), cluster=cluster)
    except HistoryUnavailable as exc:
        watchdog.cancel()
        return failure(ExitCode.UNKNOWN, f"--record: {exc}", cluster=cluster)
    watchdog.say(render(timeout_result(timeout, cluster=cluster), fmt))
    try:
        looked: list[JudgedPoll] = []
        result = asyncio.run(
            look(
                chosen,
                deadline=deadline - WATCHDOG_MARGIN - 0.1,
                timeout=timeout,
                rules=rules,
                thresholds=thresholds,
                cluster=cluster,
                seen=looked,
                history=cluster_args.history_file(chosen),
            )
        )
        if recorder is not None and (why := recorder.record(result, next(iter(looked), None))):
            click.echo(f"--record: not recorded: {why}", err=True)
        elif recorder is not None:  # on stderr: stdout stays the plugin's one status line
            from konsole.report import report_command

            at = result.time if result.time is not None else time.time()
            click.echo(f"report: {report_command(at, recorder.path)}", err=True)
    except ProfileError as exc:  # the password variable or file, read when connecting
        result = failure(ExitCode.UNKNOWN, str(exc), cluster=cluster)
    except Exception as exc:  # an internal failure: UNKNOWN, one line, no traceback
        result = failure(
            ExitCode.UNKNOWN, f"internal error: {type(exc).__name__}: {exc}", cluster=cluster
        )
    watchdog.cancel()
    return result


@click.command("check")
@cluster_options(history=True, polls=True)
@click.option(
    "-w",
    "--warning",
    "warning",
    multiple=True,
    metavar="RULE=RANGE",
    help="WARNING when RULE's value alerts for RANGE (10, 10:, ~:10, 10:20, @10:20); "
    "repeatable. Rules are the perfdata labels.",
)
@click.option(
    "-c",
    "--critical",
    "critical",
    multiple=True,
    metavar="RULE=RANGE",
    help="CRITICAL when RULE's value alerts for RANGE; repeatable.",
)
@click.option(
    "-t",
    "--timeout",
    type=Number(0.5, 3600),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds, from the process start, before the check answers CRITICAL (timeout).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="nagios",
    show_default=True,
    help="nagios: status line with perfdata, then one line per finding; json: the "
    "versioned object (its own schema field); text: for a person.",
)
@click.option(
    "--record",
    is_flag=True,
    help="Append the result (and its poll) to the history file (--history, else the "
    "cluster's own, which `konsole record` and the console use).",
)
def check(
    cluster: ConnectionArgs,
    warning: tuple[str, ...],
    critical: tuple[str, ...],
    timeout: float,
    fmt: str,
    record: bool,
) -> None:
    """Is this Fluss cluster healthy? Exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN."""
    own = _own_command_line()
    with without_cyclic_gc():
        result = run_check(
            cluster,
            warning=warning,
            critical=critical,
            timeout=timeout,
            fmt=fmt,
            record=record,
            started=time.monotonic() - process_age(None if own else HOST_AGE_CAP),
        )
        _finish(result, fmt, end_process=own)

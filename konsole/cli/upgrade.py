"""`konsole upgrade ...`: a rolling upgrade, guided (docs/upgrade.md).

``gate``: exit 0 only when it is safe to take the next (or the named) server down now;
otherwise look again every ``--interval`` seconds until ``--timeout``, saying once per
change what it waits for. Each look is ``konsole check``'s own (:func:`konsole.cli.check.look`:
the same poller, rules and judgement), so the gate's health verdict is the check's on the
same poll; :func:`konsole.model.upgrade_gate.judge_gate` adds the gate's other conditions.
Exit codes are the check's: 0 safe, 1 WARNING (healthy but not yet safe: a replica catching
up, a rebalance), 2 CRITICAL (the last look was critical, or unreachable), 3 UNKNOWN (bad
arguments or configuration).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import click

from konsole.cli.check import DEFAULT_TIMEOUT as LOOK_TIMEOUT
from konsole.cli.exits import error_line
from konsole.cli.listing import ListingGroup
from konsole.cli.options import (
    INTERVAL,
    JAVA_INT_MAX,
    ConnectionArgs,
    Number,
    Whole,
    cluster_options,
)
from konsole.errors import ExitCode, KonsoleError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from fluss_proto.model import AclListing, ConfigEntry, RebalanceProgress
    from konsole.collect.profiles import Profile
    from konsole.localcluster.upgrade_play import GateAnswer
    from konsole.model.check import CheckResult
    from konsole.model.poll import JudgedPoll
    from konsole.model.snapshot import ClusterSnapshot
    from konsole.model.upgrade_check import UpgradeReport
    from konsole.model.upgrade_gate import GateVerdict

__all__ = ["upgrade"]

#: Seconds between two looks while the gate waits.
DEFAULT_INTERVAL: Final = 2.0
#: How long the gate waits for "safe" before it gives up (seconds).
DEFAULT_GATE_TIMEOUT: Final = 300.0
#: Most looks of one gate (bounds the loop whatever the clock does).
MAX_LOOKS: Final = 10_000
#: A look has at least this long, even when less of --timeout is left: a gate always
#: makes one whole look (``--timeout 1``: one look, the probe's answer).
MIN_LOOK: Final = 5.0


#: The gate's clock and pause between looks (seams: unit tests drive the loop without waiting).
_clock: Callable[[], float] = time.monotonic
_pause: Callable[[float], None] = time.sleep


@click.group(cls=ListingGroup)
def upgrade() -> None:
    """A rolling upgrade, guided: readiness (check) and may the next server go down (gate)."""


async def _rebalance(profile: Profile, timeout: float) -> RebalanceProgress | str | None:
    """The coordinator's current rebalance; None when its servers have no rebalance API;
    why it could not be asked otherwise (not knowing holds the gate: a rebalance may run)."""
    import asyncio

    from fluss_proto.admin import FlussAdmin
    from fluss_proto.errors import FlussError, UnsupportedByServerError
    from konsole.collect.cluster.target import connect_client

    try:
        async with asyncio.timeout(timeout):
            # one question of the coordinator: no handshake ahead with a tablet server,
            # which may be the one hung (the live test pauses one)
            client = await connect_client(
                profile, request_timeout=timeout, retries=0, warm_up=False
            )
            try:
                return await FlussAdmin(client).rebalance_progress()
            finally:
                await client.close()
    except UnsupportedByServerError:
        return None
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except (FlussError, OSError) as exc:
        return str(exc) or type(exc).__name__


def _coordinator_first(profile: Profile, snapshot: Any) -> Profile:
    """``profile`` with the look's active coordinator first in its bootstrap list (when it is
    there): the rebalance is the coordinator's, and a hung server met first in the list
    would take the read's whole time (seen while the live test paused a tablet server)."""
    from dataclasses import replace

    active = snapshot.active_coordinator
    if active is None or active not in profile.bootstrap:
        return profile
    return replace(profile, bootstrap=(active, *(b for b in profile.bootstrap if b != active)))


async def _judged_look(
    profile: Profile, *, look_timeout: float, cluster: dict[str, Any]
) -> tuple[CheckResult, JudgedPoll]:
    """``check``'s look (one bounded poll, judged) and its answer; a look that saw no
    snapshot at all (a timeout) is judged as a failed poll saying the check's answer."""
    from konsole.cli.check import look
    from konsole.model.check import parse_thresholds, rules_with_thresholds
    from konsole.model.poll import judge_look
    from konsole.model.snapshot import ClusterSnapshot

    thresholds = parse_thresholds()
    rules = rules_with_thresholds(profile.health, thresholds)
    seen: list[JudgedPoll] = []
    result = await look(
        profile,
        deadline=time.monotonic() + look_timeout,
        timeout=look_timeout,
        rules=rules,
        thresholds=thresholds,
        cluster=cluster,
        seen=seen,
    )
    if seen:
        return result, seen[-1]
    failed = ClusterSnapshot.failed(
        seq=0, taken_at=time.time(), latency_s=look_timeout, error=result.summary
    )
    return result, judge_look(failed, rules)


async def gate_look(
    profile: Profile, *, server: int | None, look_timeout: float, cluster: dict[str, Any]
) -> GateVerdict:
    """One look of the gate: the check's look, the rebalance, the verdict."""
    from konsole.model.upgrade_gate import judge_gate

    result, judged = await _judged_look(profile, look_timeout=look_timeout, cluster=cluster)
    snapshot = judged.snapshot
    rebalance = (
        await _rebalance(_coordinator_first(profile, snapshot), min(5.0, look_timeout))
        if snapshot.ok
        else None
    )
    if isinstance(rebalance, str):
        return judge_gate(judged, result, server=server, rebalance_unknown=rebalance)
    return judge_gate(judged, result, server=server, rebalance=rebalance)


def run_gate(
    cluster_args: ConnectionArgs,
    *,
    server: int | None,
    timeout: float,
    interval: float,
    say: Callable[[str], None],
) -> GateVerdict | None:
    """Look until safe or ``timeout``; says each new set of waits once. None: bad
    configuration (said as an error)."""
    import asyncio

    try:
        profile = cluster_args.resolve()
    except KonsoleError as exc:
        error_line(str(exc))
        return None
    cluster = {"source": profile.source, "bootstrap": list(profile.bootstrap)}
    deadline = _clock() + timeout
    said: tuple[str, ...] | None = None
    verdict: GateVerdict | None = None
    for _ in range(MAX_LOOKS):
        left = deadline - _clock()
        look_timeout = max(MIN_LOOK, min(LOOK_TIMEOUT, left))
        verdict = asyncio.run(
            gate_look(profile, server=server, look_timeout=look_timeout, cluster=cluster)
        )
        lines = tuple(w.line() for w in verdict.waits)
        if verdict.safe:
            return verdict
        if lines != said:
            say(f"waiting: {'; '.join(lines)}")
            said = lines
        if _clock() + interval >= deadline:
            return verdict
        _pause(interval)
    return verdict


def gate_for(
    cluster_args: ConnectionArgs, *, timeout: float = DEFAULT_GATE_TIMEOUT, interval: float = 1.0
) -> Callable[[int | None, Callable[[str], None]], GateAnswer]:
    """The gate as a function for a script that plays an upgrade (``konsole demo
    --upgrade``): the command's own loop, each new set of waits handed to ``say`` as it
    comes (and kept in the answer) instead of printed."""
    from konsole.localcluster.upgrade_play import GateAnswer

    def ask(server: int | None, say: Callable[[str], None]) -> GateAnswer:
        said: list[str] = []

        def keep(line: str) -> None:
            said.append(line)
            say(line)

        began = _clock()
        verdict = run_gate(
            cluster_args, server=server, timeout=timeout, interval=interval, say=keep
        )
        waited = _clock() - began
        if verdict is None:
            return GateAnswer(False, "UNKNOWN: the cluster's profile could not be resolved", waited)
        return GateAnswer(verdict.safe, verdict.summary(), waited, tuple(said))

    return ask


@upgrade.command("gate")
@cluster_options(polls=True)
@click.option(
    "--server",
    "server",
    type=Whole(0, JAVA_INT_MAX),
    default=None,
    help="The tablet server about to go down (its buckets' leaders are judged for min ISR); "
    "default: the next one, judged cluster-wide.",
)
@click.option(
    "-t",
    "--timeout",
    type=Number(1, 86_400),
    default=DEFAULT_GATE_TIMEOUT,
    show_default=True,
    help="Seconds to wait for a safe verdict before exiting with the last one's code "
    "(at least one whole look is made, up to 5 s).",
)
@click.option(
    "--interval",
    type=INTERVAL,
    default=DEFAULT_INTERVAL,
    show_default=True,
    help="Seconds between two looks while waiting.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: one verdict line; json: the verdict as one object. Waits go to stderr.",
)
def gate(
    cluster: ConnectionArgs, server: int | None, timeout: float, interval: float, fmt: str
) -> None:
    """Exit 0 when it is safe to take the next (or --server's) server down now; else wait.

    Safe: the check's judgement OK (GREEN), no offline or under-replicated bucket, no leader
    at or under min ISR for the buckets concerned, no rebalance running, every server alive
    and answering. Exit 0 safe, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (as `konsole check`).
    """
    verdict = run_gate(
        cluster,
        server=server,
        timeout=timeout,
        interval=interval,
        say=lambda line: click.echo(line, err=True),
    )
    if verdict is None:
        sys.exit(ExitCode.UNKNOWN)
    if fmt == "json":
        click.echo(json.dumps(verdict.as_dict(), sort_keys=True))
    else:
        click.echo(verdict.summary())
    sys.exit(int(verdict.status))


# =========================================================================== check


async def _acls_and_configs(
    profile: Profile, snapshot: ClusterSnapshot, timeout: float
) -> tuple[AclListing | None, dict[str, Sequence[ConfigEntry]] | None]:
    """The ACLs and every server's configuration (None: could not be read)."""
    import asyncio

    from fluss_proto.admin import FlussAdmin
    from fluss_proto.errors import FlussError
    from konsole.collect.cluster.target import connect_client
    from konsole.collect.cluster.upgrade_reads import read_notes_inputs

    try:
        async with asyncio.timeout(timeout):
            # one question of the coordinator: no handshake ahead with a tablet server,
            # which may be the one hung (the live test pauses one)
            client = await connect_client(
                profile, request_timeout=timeout, retries=0, warm_up=False
            )
            try:
                read = await read_notes_inputs(FlussAdmin(client), snapshot)
            finally:
                await client.close()
    except (FlussError, OSError, TimeoutError):
        return None, None
    return read.acls, read.configs


async def check_look(
    profile: Profile, *, target: str, look_timeout: float, cluster: dict[str, Any]
) -> UpgradeReport:
    """One poll (the check's look), the ACLs and configs, and the readiness report."""
    from konsole.model.upgrade_check import report

    _, judged = await _judged_look(profile, look_timeout=look_timeout, cluster=cluster)
    snapshot = judged.snapshot
    acls, configs = (
        await _acls_and_configs(profile, snapshot, look_timeout) if snapshot.ok else (None, None)
    )
    return report(judged, target=target, acls=acls, configs=configs)


def render_report(r: UpgradeReport) -> str:
    """The report for a person: summary, servers, items, steps."""
    out = [r.summary()]
    if r.error is None:
        out.append("servers (line told by the API keys each advertises; 1.0 adds 1060-1064):")
        out += [f"  {s.subject}: {s.line or 'unknown'} ({s.told_by})" for s in r.servers]
        out.append("upgrade notes:")
        out += [f"  {i.line()}" for i in r.items]
        out.append("steps (tablet servers, standby coordinators, the active coordinator last):")
        out += [f"  {s.line()}" for s in r.steps]
        out += [f"note: {n}" for n in r.notes]
    return "\n".join(out)


@upgrade.command("check")
@cluster_options(polls=True)
@click.option(
    "--to",
    "target",
    type=click.Choice(["1.0"]),
    default="1.0",
    show_default=True,
    help="The line to upgrade to.",
)
@click.option(
    "-t",
    "--timeout",
    type=Number(1, 600),
    default=LOOK_TIMEOUT,
    show_default=True,
    help="Seconds for the look (and again for the ACLs and configs).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: for a person; json: the report as one object.",
)
def check(cluster: ConnectionArgs, target: str, timeout: float, fmt: str) -> None:
    """Is this cluster ready for the upgrade? Lines, skew, upgrade notes, steps and costs.

    Exit 0 nothing to act on, 1 WARNING an item to act on, 2 CRITICAL the cluster could not
    be read, 3 UNKNOWN bad arguments or configuration (as `konsole check`).
    """
    import asyncio

    try:
        profile = cluster.resolve()
    except KonsoleError as exc:
        error_line(str(exc))
        sys.exit(ExitCode.UNKNOWN)
    where = {"source": profile.source, "bootstrap": list(profile.bootstrap)}
    r = asyncio.run(check_look(profile, target=target, look_timeout=timeout, cluster=where))
    click.echo(json.dumps(r.as_dict(), sort_keys=True) if fmt == "json" else render_report(r))
    sys.exit(int(r.status))

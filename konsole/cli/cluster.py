"""`konsole cluster ...` (a real local Fluss cluster on 127.0.0.1) and `konsole demo`.

The cluster commands start, stop, describe and fault-inject the servers of one run dir
(:mod:`konsole.localcluster`); ``demo`` starts one, writes the demo tables and opens the
console on it. Every option is checked as it is parsed (``--set``, ``--sasl``,
``--version``, ``--fluss-home``), so a bad one starts nothing. Exit codes (docs/cli.md): 0
done; 1 the action failed (a server that did not start, a step of the seed); 3 bad
arguments; 69 no (running) cluster in the run dir, for every command that needs one
(``stop`` and ``status`` included), and ``demo`` without a terminal for its console. The
runner's :class:`~konsole.errors.KonsoleError` is said once by the top-level group.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from konsole.cli.console import live_feed, require_terminal
from konsole.cli.exits import fail
from konsole.cli.listing import ListingGroup
from konsole.cli.options import (
    DOCUMENT_FORMATS,
    JAVA_INT_MAX,
    FilePath,
    Number,
    Whole,
    bootstrap_callback,
    checked_by,
    run_dir_option,
)
from konsole.errors import ClusterAlreadyRunningError, ExitCode, NoLocalClusterError
from konsole.localcluster import DEFAULT_VERSION, SUPPORTED_VERSIONS, LocalCluster
from konsole.localcluster.cluster import ClusterDescription
from konsole.localcluster.state import parse_sasl_user, parse_setting
from konsole.localcluster.versions import lookup

__all__ = ["cluster", "demo"]

RUN_DIR_OPTION = run_dir_option(
    "Directory holding the local cluster (default: konsole's state dir; env KONSOLE_RUN_DIR)."
)
FLUSS_HOME_OPTION = click.option(
    "--fluss-home",
    type=FilePath(exists=True, file_okay=False),
    default=None,
    envvar="KONSOLE_FLUSS_HOME",
    help="Run the servers from this unpacked Fluss distribution (lib/, plugins/) instead of "
    "jars fetched with Maven; the version is read from it.",
)


def _format_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--format text|json`` (and ``--json``, the same as ``--format json``, kept hidden for
    scripts written before ``--format``)."""
    f = click.option("--json", "as_json", is_flag=True, hidden=True)(f)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(DOCUMENT_FORMATS),
        default="text",
        show_default=True,
        help="text: for a person; json: the description as one document.",
    )(f)


@click.group(cls=ListingGroup)
def cluster() -> None:
    """Run a real local Fluss cluster on 127.0.0.1 from the published jars."""


def _print_description(desc: ClusterDescription, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(desc.to_dict(), indent=2))
        return
    click.echo(f"Fluss {desc.version} in {desc.run_dir}")
    if desc.fluss_home:
        click.echo(f"  distribution: {desc.fluss_home}")
    click.echo(f"  bootstrap servers: {desc.bootstrap_servers}")
    if desc.sasl.enabled:
        click.echo(f"  SASL/PLAIN users: {', '.join(desc.sasl.users)}")
    for p in desc.processes:
        state = f"pid {p.pid}" if p.alive else "stopped"
        if p.coordinator_role:
            state += f" {p.coordinator_role}"
        if p.version and p.version != desc.version:  # mid rolling upgrade
            state += f" on {p.version}"
        ports = " ".join(f"{k}={v}" for k, v in p.ports.items())
        click.echo(f"  {p.role:<14} {p.id:<3} {state:<20} {ports}")
        click.echo(f"  {'':<14} log {p.log}")


@cluster.command("start")
@click.option(
    "--version",
    "version",
    default=None,
    callback=checked_by(lookup),
    help=f"Published Fluss version fetched with Maven: {', '.join(SUPPORTED_VERSIONS)} "
    f"(default {DEFAULT_VERSION}, unless --fluss-home is given).",
)
@FLUSS_HOME_OPTION
@click.option(
    "--tablet-servers",
    default=1,
    show_default=True,
    type=Whole(1, 9),
    help="How many tablet servers.",
)
@click.option(
    "--coordinators",
    default=1,
    show_default=True,
    type=Whole(1, 2),
    help="2 starts a standby coordinator (versions that support it).",
)
@click.option(
    "--sasl",
    "sasl",
    multiple=True,
    metavar="USER:PASS",
    callback=checked_by(parse_sasl_user),
    help="Add a SASL/PLAIN client listener with this user (repeatable).",
)
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="[TARGET:]KEY=VALUE",
    callback=checked_by(parse_setting),
    help="Extra server.yaml setting for every server, or for one TARGET "
    "such as ts1 or coordinator (repeatable).",
)
@click.option(
    "--disk",
    "disks",
    multiple=True,
    metavar="tsN=SIZE[,SIZE...]",
    help="Give tablet server N one data dir per SIZE (256m, 1g), each on a tmpfs of that "
    "size, to fill and watch its write lock; several sizes make data.dirs (1.0 line). "
    "Needs root; unmounted on stop (repeatable).",
)
@click.option(
    "--timeout",
    type=Number(0, 86_400, low_open=True),
    default=120.0,
    show_default=True,
    help="Seconds to wait for ready.",
)
@_format_options
@RUN_DIR_OPTION
def cluster_start(
    version: str | None,
    fluss_home: Path | None,
    tablet_servers: int,
    coordinators: int,
    sasl: tuple[str, ...],
    settings: tuple[str, ...],
    disks: tuple[str, ...],
    timeout: float,
    fmt: str,
    as_json: bool,
    run_dir: Path | None,
) -> None:
    """Start ZooKeeper, coordinator(s) and tablet servers; wait until ready."""
    from konsole.localcluster import ClusterError
    from konsole.localcluster.disks import parse_disks

    as_json = as_json or fmt == "json"
    try:
        sizes = parse_disks(disks, tablet_servers)
    except ClusterError as exc:
        raise click.BadParameter(str(exc), param_hint="--disk") from None
    lc = LocalCluster(run_dir)
    try:
        desc = lc.start(
            version,
            fluss_home=fluss_home,
            tablet_servers=tablet_servers,
            coordinators=coordinators,
            sasl=sasl,
            settings=settings,
            ready_timeout=timeout,
            disks=sizes,
        )
    except ClusterAlreadyRunningError as exc:
        _print_description(lc.describe(), as_json)
        fail(exc, ExitCode.WARNING)  # nothing was started: 1, as for any failed action
    _print_description(desc, as_json)


@cluster.command("stop")
@click.option(
    "--timeout",
    type=Number(0, 86_400, low_open=True),
    default=60.0,
    show_default=True,
    help="Seconds to wait for each group before SIGKILL.",
)
@RUN_DIR_OPTION
def cluster_stop(timeout: float, run_dir: Path | None) -> None:
    """Stop every server of the local cluster (tablet servers first)."""
    lc = LocalCluster(run_dir)
    stopped = lc.stop(timeout=timeout)
    if not stopped:
        raise NoLocalClusterError(f"nothing is running in {lc.run_dir}")
    click.echo(f"stopped {len(stopped)} processes: {', '.join(stopped)}")


@cluster.command("status")
@_format_options
@RUN_DIR_OPTION
def cluster_status(fmt: str, as_json: bool, run_dir: Path | None) -> None:
    """Describe the local cluster; exit 0 when running, 69 when not."""
    lc = LocalCluster(run_dir)
    desc = lc.status()
    if desc is None:
        raise NoLocalClusterError(f"no cluster in {lc.run_dir}")
    _print_description(desc, as_json or fmt == "json")
    if not desc.running:
        fail(f"the cluster in {lc.run_dir} is not running", ExitCode.UNAVAILABLE)


_ROLES = click.Choice(["zk", "zookeeper", "coordinator", "cs", "tablet-server", "ts"])


def _server_command(name: str, help_text: str, *, settings: bool = False) -> click.Command:
    """``kill``, ``stop-server`` or ``start-server`` ROLE ID (``--set`` on start-server only)."""

    def command(role: str, server_id: int, run_dir: Path | None, **given: Any) -> None:
        lc = LocalCluster(run_dir)
        if name == "kill":
            lc.kill(role, server_id)
        elif name == "stop-server":
            lc.stop_server(role, server_id)
        else:
            home = given.get("fluss_home")
            info = lc.start_server(
                role, server_id, settings=given.get("settings", ()), fluss_home=home
            )
            on = f" on {home}" if home is not None else ""
            click.echo(f"{info.role} {info.id} running{on}, pid {info.pid}")
            return
        click.echo(f"{role} {server_id}: {'killed' if name == 'kill' else 'stopped'}")

    decorated: Any = RUN_DIR_OPTION(command)
    if settings:
        decorated = click.option(
            "--set",
            "settings",
            multiple=True,
            metavar="KEY=VALUE",
            callback=checked_by(parse_setting),
            help="A server.yaml setting for this start (repeatable); a later start without "
            "--set goes back to the cluster's settings.",
        )(decorated)
        decorated = click.option(
            "--fluss-home",
            type=FilePath(exists=True, file_okay=False),
            default=None,
            help="Start it from this unpacked Fluss distribution (same id, data dir, ports "
            "and conf dir): one step of a rolling upgrade; it stays on it for later starts.",
        )(decorated)
    decorated = click.argument("server_id", type=Whole(0, JAVA_INT_MAX))(decorated)
    decorated = click.argument("role", type=_ROLES, metavar="ROLE")(decorated)
    roles = "\n\nROLE: coordinator (cs), tablet-server (ts) or zookeeper (zk)."
    return cluster.command(name, help=help_text + roles, short_help=help_text)(decorated)


_server_command("kill", "SIGKILL one server (fault injection): `kill ts 1`.")
_server_command("stop-server", "Stop one server gracefully: `stop-server ts 1`.")
_server_command(
    "start-server", "Start one server again with the same id, data and ports.", settings=True
)


@cluster.command("fetch")
@click.option(
    "--version",
    "version",
    default=DEFAULT_VERSION,
    show_default=True,
    callback=checked_by(lookup),
    help=f"Published Fluss version: {', '.join(SUPPORTED_VERSIONS)}.",
)
def cluster_fetch(version: str) -> None:
    """Download the Fluss server jars for VERSION into the cache (no-op when cached)."""
    from konsole.localcluster.jars import ensure_jars

    click.echo(str(ensure_jars(version)))


@cluster.command("seed")
@click.option(
    "--bootstrap",
    envvar="FLUSS_BOOTSTRAP",
    default=None,
    callback=bootstrap_callback,
    metavar="HOST:PORT,...",
    help="Bootstrap servers (default: the local cluster's; env FLUSS_BOOTSTRAP).",
)
@RUN_DIR_OPTION
def cluster_seed(bootstrap: str | None, run_dir: Path | None) -> None:
    """Write the demo tables with pyfluss (the official Python client)."""
    from konsole.localcluster.seed import SeedError, seed_demo_sync
    from konsole.localcluster.seed_local import seed_local_sync

    lc = LocalCluster(run_dir)
    replication = 1
    local = bootstrap is None
    if bootstrap is None:
        desc = lc.status()
        if desc is None or not desc.running:
            raise NoLocalClusterError(
                f"no running cluster in {lc.run_dir}; pass --bootstrap or start one"
            )
        bootstrap = desc.bootstrap_servers
        n_ts = len(desc.of_role("tablet-server"))
        replication = min(3, n_ts)
    try:
        # the local cluster's coordinator may be restarted (konsole.localcluster.seed_local)
        if local:
            report = seed_local_sync(lc, bootstrap, replication_factor=replication)
        else:
            report = seed_demo_sync(bootstrap, replication_factor=replication)
    except SeedError as exc:
        fail(f"{exc}; run `konsole cluster seed` again to complete it", ExitCode.WARNING)
    click.echo(str(report))


@click.command("demo")
@click.option(
    "--version",
    "version",
    default=None,
    callback=checked_by(lookup),
    help=f"Published Fluss version: {', '.join(SUPPORTED_VERSIONS)} (default "
    f"{DEFAULT_VERSION}, unless --fluss-home is given).",
)
@FLUSS_HOME_OPTION
@click.option(
    "--tablet-servers",
    default=3,
    show_default=True,
    type=Whole(1, 9),
    help="How many tablet servers.",
)
@RUN_DIR_OPTION
@click.option("--no-console", is_flag=True, help="Hold the cluster until Enter instead.")
@click.option(
    "--incident",
    is_flag=True,
    help="After a minute, play a short scripted incident (a tablet server stopped and "
    "started; on the 1.0 line also a write lock and a coordinator failover).",
)
@click.option(
    "--incident-after",
    type=Number(0, 3600),
    default=None,
    hidden=True,  # for trying the incident out without the minute's wait
    help="Seconds before the incident begins (default a minute).",
)
@click.option(
    "--upgrade",
    is_flag=True,
    help="Start on --version (default "
    f"{DEFAULT_VERSION}) and, after half a minute, play a rolling upgrade onto the "
    "--fluss-home distribution: each tablet server, then the coordinator, the upgrade "
    "gate before each.",
)
@click.option(
    "--upgrade-after",
    type=Number(0, 3600),
    default=None,
    hidden=True,  # for trying the upgrade out without the half minute's wait
    help="Seconds before the upgrade begins (default half a minute).",
)
def demo(
    version: str | None,
    fluss_home: Path | None,
    tablet_servers: int,
    run_dir: Path | None,
    no_console: bool,
    incident: bool,
    incident_after: float | None,
    upgrade: bool,
    upgrade_after: float | None,
) -> None:
    """Start a local cluster, write the demo tables, open the console; stop it on exit.

    While the demo runs a small producer keeps writing to the demo's log tables.
    --no-console holds the cluster until Enter instead (for scripts and CI).
    """
    from konsole.localcluster.cluster import default_run_dir
    from konsole.localcluster.seed_local import seed_local_sync

    upgrade_to = _upgrade_target(version, fluss_home, incident) if upgrade else None
    if not no_console:  # before anything starts: the console needs a terminal
        require_terminal("konsole demo")

    one_zero = upgrade_to is None and fluss_home is not None and _is_1_0(fluss_home)
    lc = LocalCluster(run_dir or default_run_dir().with_name("demo-cluster"))
    desc = lc.start(
        version,
        fluss_home=None if upgrade_to is not None else fluss_home,
        tablet_servers=tablet_servers,
        # The 1.0 incident kills the active coordinator: a standby must be there to win.
        coordinators=2 if incident and one_zero else 1,
    )
    alive: list[Any] = []
    try:
        seeded = seed_local_sync(
            lc, desc.bootstrap_servers, replication_factor=min(3, tablet_servers)
        )
        click.echo(str(seeded))
        _print_description(desc, as_json=False)
        alive = _bring_to_life(
            lc, desc, incident=incident, one_zero=one_zero, after_s=incident_after
        )
        if upgrade_to is not None:
            alive.append(_play_upgrade(lc, desc, upgrade_to, upgrade_after))
        if no_console:
            click.echo("\nThe cluster runs until you press Enter (or Ctrl-C).")
            with contextlib.suppress(EOFError, KeyboardInterrupt):
                input()
        else:
            _open_console(desc)
    finally:
        for part in alive:  # the producer and the incident end before the cluster
            part.stop()
            click.echo(part.summary())
        click.echo(f"stopping: {', '.join(lc.stop()) or 'nothing was running'}")


def _upgrade_target(version: str | None, fluss_home: Path | None, incident: bool) -> Path:
    """The distribution ``--upgrade`` moves the demo onto, checked before anything starts:
    given, and of another line than the one the demo starts on."""
    from konsole.localcluster.distribution import from_home, generation

    if fluss_home is None:
        raise click.BadParameter(
            "--upgrade needs the distribution to upgrade to (--fluss-home DIR)",
            param_hint="--fluss-home",
        )
    if incident:
        raise click.BadParameter("--upgrade and --incident: one at a time", param_hint="--upgrade")
    start, target = version or DEFAULT_VERSION, from_home(fluss_home).version
    if generation(start) == generation(target):
        raise click.BadParameter(
            f"{fluss_home} holds Fluss {target}, the line the demo starts on ({start}): "
            "nothing to upgrade",
            param_hint="--fluss-home",
        )
    return fluss_home


def _play_upgrade(
    lc: LocalCluster, desc: ClusterDescription, target: Path, after_s: float | None
) -> Any:
    """Start the rolling upgrade onto ``target``; its steps and the gate's waits become
    operator notes in the local cluster's history."""
    from konsole.cli.options import ConnectionArgs
    from konsole.cli.upgrade import gate_for
    from konsole.collect.cluster.connect import history_path
    from konsole.collect.profiles import resolve_profile
    from konsole.localcluster.distribution import from_home
    from konsole.localcluster.upgrade_play import AFTER_S, UpgradePlay, upgrade_order

    path = history_path(resolve_profile(local=desc.to_dict()))
    after = AFTER_S if after_s is None else after_s
    play = UpgradePlay(
        lc,
        upgrade_order(desc, lc.active_coordinator()),
        fluss_home=target,
        version=from_home(target).version,
        gate=gate_for(ConnectionArgs(local=True, run_dir=lc.run_dir)),
        note=lambda text: _note(path, text),
        after_s=after,
    )
    play.start()
    click.echo(
        f"A rolling upgrade onto {play.version} begins in {after:g} s "
        "(U: the Upgrade screen; its steps are notes in Events)."
    )
    return play


def _is_1_0(fluss_home: Path) -> bool:
    from konsole.localcluster.distribution import from_home

    return from_home(str(fluss_home)).generation != "0.9"


def _bring_to_life(
    lc: LocalCluster,
    desc: ClusterDescription,
    *,
    incident: bool,
    one_zero: bool,
    after_s: float | None = None,
) -> list[Any]:
    """Start the demo's producer and (``--incident``) its scripted incident, whose steps
    become operator notes in the local cluster's history."""
    from konsole.localcluster.producer import DemoProducer

    producer = DemoProducer(desc.bootstrap_servers)
    producer.start()
    parts: list[Any] = [producer]
    if incident:
        from konsole.collect.cluster.connect import history_path
        from konsole.collect.profiles import resolve_profile
        from konsole.localcluster.incident import AFTER_S, DemoIncident, incident_steps

        path = history_path(resolve_profile(local=desc.to_dict()))
        tablet = max(p.id for p in desc.processes if p.role == "tablet-server")
        after = AFTER_S if after_s is None else after_s
        play = DemoIncident(
            lc,
            incident_steps(tablet, one_zero=one_zero),
            note=lambda text: _note(path, text),
            after_s=after,
        )
        play.start()
        parts.append(play)
        click.echo(f"A scripted incident begins in {after:g} s (its steps are notes in Events).")
    return parts


def _note(path: Path, text: str) -> None:
    """An operator note in the demo's history (a note needs no writer lock)."""
    from konsole.collect.history.files import HistoryError
    from konsole.collect.history.notes import write_note

    with contextlib.suppress(HistoryError, OSError):
        write_note(path, text)


def _open_console(desc: ClusterDescription) -> None:
    """The console on the demo cluster, recording into the "local" profile's history."""
    from konsole.collect.cluster.connect import history_path
    from konsole.collect.profiles import resolve_profile
    from konsole.ui.app import KonsoleApp

    profile = resolve_profile(local=desc.to_dict())
    with contextlib.suppress(KeyboardInterrupt):
        KonsoleApp(live_feed(profile, history_path(profile), None, desc)).run()

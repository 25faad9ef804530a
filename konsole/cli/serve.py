"""`konsole serve`: many clusters in one long-lived process, exported to Prometheus.

``serve`` polls every cluster it is given at once (repeatable ``--profile``; every profile
of the config file when none is named; or ``--bootstrap`` / ``--local``), each on its own
interval in its own task, records each into its own history file exactly as ``konsole
record`` does (following the file instead when another process already records it), and
serves ``/metrics`` (Prometheus text, or OpenMetrics by ``Accept``) and ``/healthz`` on
``--listen`` (default 127.0.0.1:9464). docs/serve.md lists every family.

Notices go to stderr, one line each. SIGINT and SIGTERM stop the polls, flush the
histories and exit 0. Exit codes (docs/cli.md): 0 after a clean stop; 3 for bad arguments
or configuration (unknown profile, bad option, a bad ``[alerts]`` value: file, line and
key); 69 when the listen address cannot be bound (in use, not available) or ``--local``
finds no running local cluster.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from konsole.cli.exits import error_line, fail
from konsole.cli.options import (
    JAVA_INT_MAX,
    ConnectionArgs,
    GroupOptions,
    Number,
    Whole,
    bootstrap_callback,
    checked_by,
    config_option,
    interval_option,
    run_dir_option,
    when,
)
from konsole.errors import ExitCode

if TYPE_CHECKING:
    from konsole.serve.alerts.config import AlertConfig
    from konsole.serve.exposition import Exposition
    from konsole.serve.fleet import Member
    from konsole.serve.sinks import PollSink

__all__ = ["DEFAULT_LISTEN", "parse_listen", "serve"]

#: Loopback by default: exposing the metrics further is the operator's choice.
DEFAULT_LISTEN = "127.0.0.1:9464"


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) -> (host, port); raises click.BadParameter."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise click.BadParameter(f"{text!r}: give HOST:PORT, e.g. {DEFAULT_LISTEN}")
    return host.strip("[]"), int(port)


def _listen(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, int]:
    return parse_listen(value)


def _alertmanager_url(url: str) -> None:
    """An ``--alertmanager`` value is an Alertmanager URL (AlertmanagerUrlError if not)."""
    from konsole.serve.alerts.delivery import alerts_endpoint

    alerts_endpoint(url)


@click.command("serve")
@click.option(
    "--profile",
    "profiles",
    multiple=True,
    help="A [profiles.NAME] of the config file; repeat for several (default: every profile).",
)
@click.option(
    "--bootstrap",
    default=None,
    callback=bootstrap_callback,
    metavar="HOST:PORT,...",
    help="Also this cluster's bootstrap servers.",
)
@click.option("--local", is_flag=True, help="Also the running local cluster.")
@run_dir_option("The local cluster's directory (with --local).")
@config_option
@click.option(
    "--metrics-port",
    type=Whole(1, 65535),
    default=None,
    metavar="PORT",
    help="The servers' Prometheus port on each server's host, for every cluster.",
)
@interval_option
@click.option(
    "--listen",
    default=DEFAULT_LISTEN,
    show_default=True,
    callback=_listen,
    help="Where /metrics and /healthz are served (HOST:PORT).",
)
@click.option(
    "--max-tables",
    type=Whole(0, JAVA_INT_MAX),
    default=25,
    show_default=True,
    help="Tables per cluster with their own series; the rest roll up into table=_other.",
)
@click.option("--no-history", is_flag=True, help="Record nothing (serve live only).")
@click.option(
    "--alertmanager",
    "alertmanagers",
    multiple=True,
    metavar="URL",
    callback=checked_by(_alertmanager_url),
    help="Push alerts to this Alertmanager (v2 API); repeat for several "
    "(also [alerts] alertmanager = [...] in the config file).",
)
@click.option(
    "--alert-for",
    type=Number(0, 7 * 86_400),
    default=None,
    metavar="SECONDS",
    help="How long a finding must hold before its alert fires (default 30).",
)
@click.option(
    "--alert-resend",
    type=Number(0, 86_400, low_open=True),
    default=None,
    metavar="SECONDS",
    help="Re-send active alerts this often; keep it under Alertmanager's resolve_timeout "
    "(default 30).",
)
@click.option(
    "--alert-keep-firing",
    type=Number(0, 7 * 86_400),
    default=None,
    metavar="SECONDS",
    help="How long a firing alert outlives its finding, so a flap does not page again "
    "(default 30).",
)
def serve(
    profiles: tuple[str, ...],
    bootstrap: str | None,
    local: bool,
    run_dir: Path | None,
    config_path: Path | None,
    metrics_port: int | None,
    interval: float | None,
    listen: tuple[str, int],
    max_tables: int,
    no_history: bool,
    alertmanagers: tuple[str, ...],
    alert_for: float | None,
    alert_resend: float | None,
    alert_keep_firing: float | None,
) -> None:
    """Poll several clusters and serve their state to Prometheus (/metrics, /healthz).

    With --alertmanager, their health findings also go to Alertmanager as alerts."""
    from konsole.collect.profiles import ProfileError

    inherited = _inherited(
        bootstrap=bootstrap,
        local=local,
        run_dir=run_dir,
        config_path=config_path,
        metrics_port=metrics_port,
        no_history=no_history,
    )
    bootstrap, local, run_dir = inherited["bootstrap"], inherited["local"], inherited["run_dir"]
    config_path, metrics_port = inherited["config_path"], inherited["metrics_port"]
    no_history = inherited["no_history"]
    host, port = listen
    try:
        base = ConnectionArgs(run_dir=run_dir, config_path=config_path, metrics_port=metrics_port)
        members = _members(base, profiles, bootstrap, local, interval, no_history)
        alerts = _alerts(config_path, alertmanagers, alert_for, alert_resend, alert_keep_firing)
    except ProfileError as exc:
        fail(exc, exc.exit_code)
    _log_to_stderr()
    code = asyncio.run(_serve(members, host, port, max_tables, alerts))
    sys.exit(code)


def _inherited(**own: Any) -> dict[str, Any]:
    """``own`` with the values given to the group before ``serve`` (``konsole --config F
    serve``) for the options not given to serve itself."""
    ctx = click.get_current_context()
    group = ctx.find_object(GroupOptions)
    if group is None:
        return own
    return {
        name: getattr(group.cluster, name)
        if name in group.given and ctx.get_parameter_source(name) is not ParameterSource.COMMANDLINE
        else value
        for name, value in own.items()
    }


def _alerts(
    config_path: Path | None,
    urls: tuple[str, ...],
    for_s: float | None,
    resend_s: float | None,
    keep_firing_s: float | None,
) -> AlertConfig:
    """The config file's [alerts] (its URLs checked as it is read) with the options (checked
    as they were parsed) over it. Raises ProfileError: a bad value in the file."""
    from dataclasses import replace

    from konsole.collect.profiles import default_config_path
    from konsole.serve.alerts.config import load_alert_config

    config = load_alert_config(config_path or default_config_path())
    if for_s is not None:
        config = replace(config, for_s=for_s)
    if resend_s is not None:
        config = replace(config, resend_s=resend_s)
    if keep_firing_s is not None:
        config = replace(config, keep_firing_s=keep_firing_s)
    if urls:
        config = replace(config, urls=urls)
    return config


def _members(
    base: ConnectionArgs,
    profiles: tuple[str, ...],
    bootstrap: str | None,
    local: bool,
    interval: float | None,
    no_history: bool,
) -> list[Member]:
    """Each cluster named, resolved; every profile of the config file when none is.
    Raises ProfileError (unknown profile, malformed address, two clusters of one name)."""
    from dataclasses import replace

    from konsole.collect.cluster.connect import history_name
    from konsole.collect.profiles import ProfileError, default_config_path, load_profiles
    from konsole.serve.fleet import Member

    chosen = [replace(base, profile=name) for name in dict.fromkeys(profiles)]
    if bootstrap:
        chosen.append(replace(base, bootstrap=bootstrap))
    if local:
        chosen.append(replace(base, local=True))
    if not chosen:
        names = load_profiles(base.config_path or default_config_path())
        chosen = [replace(base, profile=name) for name in names] or [base]
    members: dict[str, Member] = {}
    for args in chosen:
        profile = args.resolve()
        name = history_name(profile)
        if name in members:
            raise ProfileError(f"two clusters would both be called {name!r}")
        history = None if no_history else args.history_file(profile)
        members[name] = Member(name, profile, history, interval)
    return list(members.values())


def _say(text: str) -> None:
    click.echo(f"{when(time.time() * 1000)} konsole serve: {text}", err=True)


class _SayHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        _say(self.format(record))


def _log_to_stderr() -> None:
    """konsole's own log lines (a sink that failed, a delivery that is retried) as notices."""
    logger = logging.getLogger("konsole")
    if not any(isinstance(h, _SayHandler) for h in logger.handlers):
        logger.addHandler(_SayHandler())
    logger.setLevel(logging.INFO)


def sinks_for(exposition: Exposition, alerts: AlertConfig | None = None) -> list[PollSink]:
    """Every sink a poll goes to: the exposition first, then the Alertmanager client (its
    delivery counters join the exposition's registry)."""
    sinks: list[PollSink] = [exposition]
    if alerts is not None and alerts.urls:
        from konsole.serve.alerts.delivery import AlertmanagerSink
        from konsole.serve.alerts.metrics import AlertCollector

        sink = AlertmanagerSink(alerts.urls, alerts.settings, resend_s=alerts.resend_s)
        exposition.registry.register(AlertCollector(sink))
        sinks.append(sink)
        _say(
            f"alerts to {', '.join(alerts.urls)} (for {alerts.for_s:g}s, re-sent every "
            f"{alerts.resend_s:g}s)"
        )
    return sinks


async def _serve(
    members: list[Member], host: str, port: int, max_tables: int, alerts: AlertConfig
) -> int:
    from konsole.cli.signals import run_until_signalled
    from konsole.serve.exposition import Exposition, MetricsServer
    from konsole.serve.exposition.history import HistoryCollector
    from konsole.serve.fleet import Fleet

    exposition = Exposition([m.name for m in members], max_tables=max_tables)
    fleet = Fleet(members, sinks_for(exposition, alerts), say=_say)
    recorded = [m.name for m in members if m.history is not None]
    exposition.registry.register(HistoryCollector(fleet.status, recorded))
    try:
        server = MetricsServer(exposition.registry, host, port, fleet.healthz)
    except OSError as exc:
        error_line(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
        return int(ExitCode.UNAVAILABLE)
    server.start()
    names = ", ".join(m.name for m in members)
    _say(f"serving {len(members)} cluster(s) ({names}) on http://{host}:{server.port}/metrics")
    try:
        signalled = await run_until_signalled(fleet.run)
    finally:
        server.close()
    polls = sum(s.polls for s in fleet.status())
    why = f" on {signalled.name}" if signalled is not None else ""
    _say(f"stopped{why}: {polls} poll(s) served")
    return int(ExitCode.OK)

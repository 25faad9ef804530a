"""`konsole admin server ...` and `konsole admin rebalance ...`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from konsole.cli.admin.common import (
    GOALS,
    TerminalOperator,
    WriteFlags,
    action_request,
    command,
    read_command,
    run_read,
    run_request,
    write_command,
)
from konsole.cli.listing import ListingGroup
from konsole.cli.options import JAVA_INT_MAX, ConnectionArgs, Number, Whole

if TYPE_CHECKING:
    import asyncio

    from konsole.collect.actions.runner import Options
    from konsole.collect.actions.service import ActionService

__all__ = ["rebalance", "server"]

TAGS = ("permanent-offline", "temporary-offline")

goal_option = click.option(
    "--goal",
    "goals",
    type=click.Choice(GOALS),
    multiple=True,
    help="Rebalance goal, by priority (repeatable; default replica- then leader-distribution).",
)
timeout_option = click.option(
    "--timeout",
    type=Number(1, 86_400),
    default=300.0,
    show_default=True,
    help="Seconds to follow the rebalance; it keeps running on the server after that.",
)


def _goals(names: tuple[str, ...]) -> str:
    """The goals chosen (by priority; default replica- then leader-distribution), as a
    request names them."""
    chosen = names or GOALS[:2]
    return ",".join(n.upper().replace("-", "_") for n in chosen)


@click.group("server", cls=ListingGroup)
def server() -> None:
    """Drain, tag, untag or retire a tablet server."""


@command(
    server, "drain", "Tag a tablet server PERMANENT_OFFLINE and rebalance every replica off it."
)
@click.argument("server_id", type=Whole(0, JAVA_INT_MAX))
@goal_option
@timeout_option
@write_command(force=True)
def drain(
    server_id: int,
    goals: tuple[str, ...],
    timeout: float,
    cluster: ConnectionArgs,
    flags: WriteFlags,
) -> None:
    request = action_request("server-drain", str(server_id), _goals(goals))
    run_request(cluster, request, flags, timeout=timeout)


@command(
    server,
    "retire",
    "Forget a stopped tablet server for good: no face judges it gone any more (audited).",
)
@click.argument("server_id", type=Whole(0, JAVA_INT_MAX))
@write_command(force=True)
def retire(server_id: int, cluster: ConnectionArgs, flags: WriteFlags) -> None:
    run_request(cluster, action_request("server-retire", str(server_id)), flags)


def _tag_command(remove: bool) -> click.Command:
    name = "untag" if remove else "tag"

    @click.argument("server_id", type=Whole(0, JAVA_INT_MAX))
    @click.argument("tag", type=click.Choice(TAGS), metavar="TAG")
    @write_command()
    def tag_cmd(
        server_id: int,
        tag: str,
        cluster: ConnectionArgs,
        flags: WriteFlags,
    ) -> None:
        value = tag.upper().replace("-", "_")
        request = action_request(f"server-{name}", str(server_id), value)
        run_request(cluster, request, flags)

    what = "Remove a tag from" if remove else "Tag"
    return command(server, name, f"{what} a tablet server (permanent- or temporary-offline).")(
        tag_cmd
    )


_tag_command(remove=False)
_tag_command(remove=True)


@click.group("rebalance", cls=ListingGroup)
def rebalance() -> None:
    """Plan, start, follow or cancel a rebalance."""


@command(rebalance, "plan", "What a rebalance starts from (the server plans the moves itself).")
@goal_option
@read_command
def plan_cmd(goals: tuple[str, ...], cluster: ConnectionArgs) -> None:
    async def body(
        service: ActionService, operator: TerminalOperator, options: Options, stop: asyncio.Event
    ) -> None:
        plan = await service.plan(action_request("rebalance", value=_goals(goals)))
        operator.show(plan.lines())

    run_read(cluster, body)


@command(rebalance, "start", "Start a rebalance with the goals given and follow its progress.")
@goal_option
@timeout_option
@write_command(force=True)
def start(
    goals: tuple[str, ...],
    timeout: float,
    cluster: ConnectionArgs,
    flags: WriteFlags,
) -> None:
    run_request(cluster, action_request("rebalance", value=_goals(goals)), flags, timeout=timeout)


@command(rebalance, "status", "Follow the current (or given) rebalance until it ends.")
@click.option("--id", "rebalance_id", default=None, help="A rebalance id (default: current).")
@timeout_option
@read_command
def status(rebalance_id: str | None, timeout: float, cluster: ConnectionArgs) -> None:
    async def body(
        service: ActionService, operator: TerminalOperator, options: Options, stop: asyncio.Event
    ) -> None:
        progress = await service.follow(rebalance_id, operator, options, stop=stop)
        if not progress.exists:
            operator.show(["no rebalance to report"])
        for t in progress.tables:
            for b in t.buckets:
                operator.show(
                    [
                        f"  table {t.table_id} bucket {b.bucket_id}: replicas "
                        f"{list(b.original_replicas)} -> {list(b.new_replicas)}, leader "
                        f"{b.original_leader} -> {b.new_leader}, {_name(b.status)}"
                    ]
                )

    run_read(cluster, body, timeout=timeout)


def _name(status: object) -> str:
    return getattr(status, "name", str(status))


@command(rebalance, "cancel", "Cancel the current (or given) rebalance.")
@click.option("--id", "rebalance_id", default=None, help="A rebalance id (default: current).")
@write_command()
def cancel(
    rebalance_id: str | None,
    cluster: ConnectionArgs,
    flags: WriteFlags,
) -> None:
    run_request(cluster, action_request("rebalance-cancel", rebalance_id or ""), flags)

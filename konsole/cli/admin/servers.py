"""`konsole admin server ...` and `konsole admin rebalance ...`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from konsole.cli.admin.common import (
    GOALS,
    WriteFlags,
    command,
    read_command,
    run_action,
    write_command,
)
from konsole.cli.options import ConnectionArgs

if TYPE_CHECKING:
    from fluss_proto.actions import Goal
    from konsole.collect.actions import ActionRunner

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
    type=click.FloatRange(1, 86_400),
    default=300.0,
    show_default=True,
    help="Seconds to follow the rebalance; it keeps running on the server after that.",
)


def _goals(names: tuple[str, ...]) -> list[Goal]:
    from fluss_proto.actions import Goal

    chosen = names or GOALS[:2]
    return [Goal[n.upper().replace("-", "_")] for n in chosen]


@click.group("server")
def server() -> None:
    """Drain, tag or untag a tablet server."""


@command(
    server, "drain", "Tag a tablet server PERMANENT_OFFLINE and rebalance every replica off it."
)
@click.argument("server_id", type=click.IntRange(min=0))
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
    async def body(runner: ActionRunner) -> None:
        await runner.drain(server_id, _goals(goals))

    run_action(cluster, body, flags, timeout=timeout)


def _tag_command(remove: bool) -> click.Command:
    name = "untag" if remove else "tag"

    @click.argument("server_id", type=click.IntRange(min=0))
    @click.argument("tag", type=click.Choice(TAGS))
    @write_command()
    def tag_cmd(
        server_id: int,
        tag: str,
        cluster: ConnectionArgs,
        flags: WriteFlags,
    ) -> None:
        from fluss_proto.actions import ServerTag
        from konsole.model.actions import plan_tag

        value = ServerTag[tag.upper().replace("-", "_")]

        async def body(runner: ActionRunner) -> None:
            look = await runner.look()
            plan = plan_tag(look.view, server_id, value.name, remove=remove)
            send = runner.actions.remove_server_tag if remove else runner.actions.add_server_tag
            await runner.run(plan, lambda: send([server_id], value))

        run_action(cluster, body, flags)

    what = "Remove a tag from" if remove else "Tag"
    return command(server, name, f"{what} a tablet server (permanent- or temporary-offline).")(
        tag_cmd
    )


_tag_command(remove=False)
_tag_command(remove=True)


@click.group("rebalance")
def rebalance() -> None:
    """Plan, start, follow or cancel a rebalance."""


@command(rebalance, "plan", "What a rebalance starts from (the server plans the moves itself).")
@goal_option
@read_command
def plan_cmd(goals: tuple[str, ...], cluster: ConnectionArgs) -> None:
    from konsole.model.actions import plan_rebalance

    async def body(runner: ActionRunner) -> None:
        look = await runner.look()
        names = [g.name for g in _goals(goals)]
        plan = plan_rebalance(look.view, health=look.health, running=look.running, goals=names)
        runner.operator.show(plan.lines())

    run_action(cluster, body)


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
    from konsole.model.actions import plan_rebalance

    async def body(runner: ActionRunner) -> None:
        look = await runner.look()
        chosen = _goals(goals)
        plan = plan_rebalance(
            look.view, health=look.health, running=look.running, goals=[g.name for g in chosen]
        )
        rebalance_id = await runner.run(plan, lambda: runner.actions.rebalance(chosen))
        if rebalance_id is not None:
            runner.operator.show([f"rebalance {rebalance_id} started"])
            runner.check_ended(plan, rebalance_id, await runner.follow(rebalance_id))

    run_action(cluster, body, flags, timeout=timeout)


@command(rebalance, "status", "Follow the current (or given) rebalance until it ends.")
@click.option("--id", "rebalance_id", default=None, help="A rebalance id (default: current).")
@timeout_option
@read_command
def status(rebalance_id: str | None, timeout: float, cluster: ConnectionArgs) -> None:
    async def body(runner: ActionRunner) -> None:
        progress = await runner.follow(rebalance_id)
        runner.check_ended(None, rebalance_id, progress)
        if not progress.exists:
            runner.operator.show(["no rebalance to report"])
        for t in progress.tables:
            for b in t.buckets:
                runner.operator.show(
                    [
                        f"  table {t.table_id} bucket {b.bucket_id}: replicas "
                        f"{list(b.original_replicas)} -> {list(b.new_replicas)}, leader "
                        f"{b.original_leader} -> {b.new_leader}, {_name(b.status)}"
                    ]
                )

    run_action(cluster, body, timeout=timeout)


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
    from konsole.model.actions import Plan

    async def body(runner: ActionRunner) -> None:
        running = await runner.running()
        target = rebalance_id or running
        plan = Plan(
            "rebalance cancel",
            "cluster",
            target or "(none)",
            ("CANCEL_REBALANCE",),
            {"rebalance_id": target},
            notes=() if running else ("no rebalance is running: the server will say so",),
        )
        await runner.run(plan, lambda: runner.actions.cancel_rebalance(rebalance_id))

    run_action(cluster, body, flags)

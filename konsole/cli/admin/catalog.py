"""`konsole admin config|acl|partition|table ...`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from konsole.cli.admin.common import (
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
from konsole.cli.options import ConnectionArgs, checked_by, checked_table

if TYPE_CHECKING:
    import asyncio

    from konsole.collect.actions.runner import Options
    from konsole.collect.actions.service import ActionService

__all__ = ["acl", "config", "partition", "table"]

_SOURCES = {"dynamic": "DYNAMIC_SERVER_CONFIG", "initial": "INITIAL_SERVER_CONFIG"}


# =========================================================================== config


@click.group("config", cls=ListingGroup)
def config() -> None:
    """List, set or delete the cluster's configs."""


@command(config, "list", "The cluster's configs: key, value, source.")
@click.option(
    "--source", type=click.Choice(sorted(_SOURCES)), default=None, help="Only this source."
)
@read_command
def config_list(source: str | None, cluster: ConnectionArgs) -> None:
    async def body(
        service: ActionService, operator: TerminalOperator, options: Options, stop: asyncio.Event
    ) -> None:
        entries = await service.configs()
        for e in sorted(entries, key=lambda e: e.key):
            if source is None or e.source == _SOURCES[source]:
                value = "(not shown)" if e.value is None else e.value
                click.echo(f"{e.key}\t{value}\t{e.source}")

    run_read(cluster, body)


def _config_command(delete: bool) -> None:
    @write_command()
    def config_write(
        key: str,
        cluster: ConnectionArgs,
        flags: WriteFlags,
        value: str | None = None,
    ) -> None:
        kind = "config-delete" if delete else "config-set"
        run_request(cluster, action_request(kind, key, value or ""), flags)

    from konsole.model.actions import checked_config_key

    key_argument = click.argument("key", callback=checked_by(checked_config_key))
    if delete:
        cmd = key_argument(config_write)
        command(config, "delete", "Delete a config's dynamic value (back to the server file's).")(
            cmd
        )
    else:
        cmd = click.argument("value")(config_write)
        cmd = key_argument(cmd)
        command(config, "set", "Set a dynamic config (the old value is kept in the history).")(cmd)


_config_command(delete=False)
_config_command(delete=True)


# =========================================================================== ACLs


@click.group("acl", cls=ListingGroup)
def acl() -> None:
    """List, create or drop ACLs (resource, principal, operation; permission ALLOW)."""


def _acl_options(required: bool) -> list[click.Option]:
    from konsole.model.actions import ACL_OPERATIONS, parse_resource

    return [
        click.Option(
            ["--resource"],
            required=required,
            callback=checked_by(parse_resource),
            help="cluster, database:NAME or table:DB.TABLE.",
        ),
        click.Option(
            ["--principal"],
            required=required,
            callback=checked_by(_principal_syntax),
            help="TYPE:NAME, e.g. User:alice.",
        ),
        click.Option(
            ["--operation"],
            type=click.Choice(sorted(ACL_OPERATIONS), case_sensitive=False),
            required=required,
            help="What the principal may do.",
        ),
        click.Option(["--host"], default="*", show_default=True, help="Client host."),
    ]


@command(acl, "list", "The ACLs the cluster holds (an unsecured cluster says so).")
@read_command
def acl_list(cluster: ConnectionArgs) -> None:
    async def body(
        service: ActionService, operator: TerminalOperator, options: Options, stop: asyncio.Event
    ) -> None:
        listing = await service.acls()
        if not listing.enabled:
            click.echo(f"ACLs are not enabled: {listing.reason}")
        for b in listing.bindings:
            click.echo(
                f"{_name(b.resource_type)}:{b.resource_name}\t{b.principal_type}:"
                f"{b.principal_name}\t{_name(b.operation)}\t{_name(b.permission)}\t{b.host}"
            )

    run_read(cluster, body)


def _principal_syntax(text: str) -> None:
    """TYPE:NAME (an unknown TYPE is the server's vocabulary: exit 65 when sent)."""
    kind, sep, name = text.partition(":")
    if not sep or not kind or not name:
        raise ValueError(f"a principal is TYPE:NAME (e.g. User:alice), got {text!r}")


def _spec_syntax(text: str) -> None:
    from konsole.model.actions import parse_assignments

    parse_assignments(text, "a partition spec")


def _assignment_syntax(text: str) -> None:
    key, sep, value = (part.strip() for part in text.partition("="))
    if not sep or not key or not value:
        raise ValueError(f"a table property is KEY=VALUE, got {text!r}")


def _table_name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    return checked_table(value)


def _name(value: object) -> str:
    return getattr(value, "name", str(value))


def _acl_command(drop: bool) -> None:
    @write_command()
    def acl_write(
        resource: str,
        principal: str,
        operation: str,
        host: str,
        cluster: ConnectionArgs,
        flags: WriteFlags,
    ) -> None:
        request = action_request(
            "acl-drop" if drop else "acl-create", resource, principal, operation, host
        )
        run_request(cluster, request, flags)

    acl_write.__click_params__ += _acl_options(required=True)  # type: ignore[attr-defined]
    what = "Drop the ACL that matches" if drop else "Create an ACL binding (ALLOW)"
    command(acl, "drop" if drop else "create", f"{what}.")(acl_write)


_acl_command(drop=False)
_acl_command(drop=True)


# =========================================================================== partitions, tables


@click.group("partition", cls=ListingGroup)
def partition() -> None:
    """Create or drop a partition of a partitioned table."""


def _partition_command(drop: bool) -> None:
    @click.argument("table_name", metavar="DB.TABLE", callback=_table_name)
    @click.argument("spec", metavar="KEY=VALUE[,KEY=VALUE]", callback=checked_by(_spec_syntax))
    @write_command()
    def partition_write(
        table_name: str,
        spec: str,
        cluster: ConnectionArgs,
        flags: WriteFlags,
    ) -> None:
        kind = "partition-drop" if drop else "partition-create"
        run_request(cluster, action_request(kind, table_name, spec), flags)

    what = "Drop a partition (its data goes with it)" if drop else "Create a partition"
    command(partition, "drop" if drop else "create", f"{what}.")(partition_write)


_partition_command(drop=False)
_partition_command(drop=True)


@click.group("table", cls=ListingGroup)
def table() -> None:
    """Change a table's properties."""


@command(table, "set", "Set one table property.")
@click.argument("table_name", metavar="DB.TABLE", callback=_table_name)
@click.argument("assignment", metavar="KEY=VALUE", callback=checked_by(_assignment_syntax))
@write_command()
def table_set(
    table_name: str,
    assignment: str,
    cluster: ConnectionArgs,
    flags: WriteFlags,
) -> None:
    run_request(cluster, action_request("table-set", table_name, assignment), flags)

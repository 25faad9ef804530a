"""`konsole storage [DB.TABLE]`: where each table's data lives, per tier, for scripts.

One bounded poll with the storage poll inside it (``storage_inline``), printed as text or
JSON (``konsole.render.storage``). Exit 0 with an answer, 2 when the cluster did not answer,
3 for bad arguments or configuration. Figures that need successive storage polls (ages,
stalls) are unknown or lower bounds in a single look; ``konsole watch`` and the console
follow them over time.
"""

from __future__ import annotations

import asyncio
import json
import sys

import click

from konsole.cli.options import ConfigCommand, ConnectionArgs, cluster_options, fail
from konsole.collect.profiles import Profile, ProfileError
from konsole.errors import ExitCode

__all__ = ["storage"]


async def _look(profile: Profile, table: str | None) -> tuple[dict[str, object], str | None]:
    from konsole.collect.connect import assemble_poller
    from konsole.collect.poller import PollerConfig
    from konsole.render.storage import storage_dict

    config = PollerConfig.from_profile(profile, storage_inline=True)
    live = assemble_poller(
        profile,
        config,
        connect_timeout=profile.connect_timeout,
        request_timeout=profile.request_timeout,
        scrape_timeout=profile.metrics_timeout,
    )
    try:
        snapshot = await live.poller.poll()
    finally:
        await live.aclose()
    if not snapshot.ok:
        return {}, snapshot.error or "no answer"
    report = storage_dict(snapshot.storage, snapshot.view, profile.health, table=table)
    if table is not None and not report["tables"]:
        return {}, f"no table {table} in the cluster"
    return report, None


@click.command("storage", cls=ConfigCommand)
@cluster_options()
@click.argument("table", metavar="[DB.TABLE]", required=False)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def storage(cluster: ConnectionArgs, table: str | None, fmt: str) -> None:
    """Where each table's data lives: local log, remote log, KV snapshots, lake."""
    from konsole.render.storage import storage_text

    if table is not None and table.count(".") != 1:
        fail("storage", f"table {table!r} is not DB.TABLE", ExitCode.UNKNOWN)
    try:
        report, error = asyncio.run(_look(cluster.resolve(), table))
    except ProfileError as exc:
        fail("storage", str(exc), ExitCode.UNKNOWN)
    if error is not None:
        fail("storage", error, ExitCode.CRITICAL)
    click.echo(json.dumps(report, indent=2) if fmt == "json" else storage_text(report))
    sys.exit(ExitCode.OK)

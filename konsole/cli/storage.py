"""`konsole storage [DB.TABLE]`: where each table's data lives, per tier, for scripts.

One bounded poll with the storage poll inside it (``storage_inline``), printed as text or
JSON (``konsole.model.storage_report``). Exit codes (docs/cli.md): 0 with an answer, 2 when
the cluster did not answer or has no such table, 3 for bad arguments or configuration, 69
for ``--local`` without a running local cluster. Figures that need successive storage polls (ages,
stalls) are unknown or lower bounds in a single look; ``konsole watch`` and the console
follow them over time.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import click

from konsole.cli.exits import fail
from konsole.cli.options import DOCUMENT_FORMATS, ConnectionArgs, cluster_options, table_argument
from konsole.collect.profiles import Profile, ProfileError
from konsole.errors import ExitCode
from konsole.model.timefmt import age_text

__all__ = ["storage", "storage_text"]


async def _look(profile: Profile, table: str | None) -> tuple[dict[str, Any], str | None]:
    from konsole.collect.cluster.connect import assemble_poller
    from konsole.collect.cluster.poller import PollerConfig
    from konsole.model.poll import judge_look
    from konsole.model.storage_report import storage_dict

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
    judged = judge_look(snapshot, profile.health)
    report = storage_dict(
        snapshot.storage,
        snapshot.view,
        judged.placement,
        profile.health,
        table=table,
        metrics=snapshot.metrics,
    )
    if table is not None and not report["tables"]:
        return {}, f"no table {table} in the cluster"
    return report, None


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)


def storage_text(report: dict[str, Any]) -> str:
    """``storage_dict``'s answer for a person: one line per table, then the servers."""
    lines = [
        f"{'TABLE':<32} {'TIERS':<24} {'UNTIERED':>9} {'TIER AGE':>9} {'KV AGE':>8} "
        f"{'LAKE LAG':>9} {'ROWS':>9}  LOG TTL"
    ]
    for t in report["tables"]:
        flag = " STALLED" if t["stalled_buckets"] else ""
        flag += " KV-STALE" if t["stale_kv_buckets"] else ""
        lines.append(
            f"{t['table']:<32} {','.join(t['tiers']):<24} {_n(t['untiered_offsets']):>9} "
            f"{age_text(t['tiering_age_s']):>9} {age_text(t['kv_snapshot_age_s']):>8} "
            f"{_n(t['lake_lag']):>9} {_n(t['row_count']):>9}  {t['log_ttl'] or 'default'}{flag}"
        )
    lines.append("")
    lines.append(
        f"{'SERVER':<8} {'REPLICAS':>8} {'LEADERS':>8} {'TABLES':>7} {'BYTES':>12}  REMOTE BYTES"
    )
    for s in report["servers"]:
        lines.append(
            f"{s['server']:<8} {s['replicas']:>8} {s['leaders']:>8} {s['tables']:>7} "
            f"{_n(s['bytes_held']):>12}  {_n(s['remote_log_bytes'])}"
        )
    for error in report["errors"]:
        lines.append(f"not read: {error}")
    return "\n".join(lines)


@click.command("storage")
@cluster_options()
@table_argument(required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(DOCUMENT_FORMATS),
    default="text",
    show_default=True,
    help="text: a line per table and per server; json: one document.",
)
def storage(cluster: ConnectionArgs, table: str | None, fmt: str) -> None:
    """Where each table's data lives: local log, remote log, KV snapshots, lake."""
    try:
        report, error = asyncio.run(_look(cluster.resolve(), table))
    except ProfileError as exc:
        fail(exc, exc.exit_code)
    if error is not None:
        fail(error, ExitCode.CRITICAL)
    click.echo(json.dumps(report, indent=2) if fmt == "json" else storage_text(report))
    sys.exit(ExitCode.OK)

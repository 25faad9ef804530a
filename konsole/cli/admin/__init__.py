"""`konsole admin`: operator actions, guarded and audited (docs/actions.md).

``server drain|tag|untag``, ``rebalance plan|start|status|cancel``,
``config list|set|delete``, ``acl list|create|drop``, ``partition create|drop``,
``table set``. Every write shows its plan first, ``--dry-run`` stops there, ``--yes`` (or
typing the subject on a terminal) sends it; every step is an ``operator`` event in the
cluster's history. Writes need the profile's ``writes = true`` (``--allow-writes`` with
``--bootstrap`` / ``--local``); without it they exit 77 before connecting. Exit codes:
:mod:`konsole.cli.admin.common`.
"""

from __future__ import annotations

import click

from konsole.cli.admin.catalog import acl, config, partition, table
from konsole.cli.admin.servers import rebalance, server
from konsole.cli.listing import ListingGroup

__all__ = ["admin"]


@click.group("admin", cls=ListingGroup)
def admin() -> None:
    """Operator actions: drain, tag, rebalance, configs, ACLs, partitions, table properties.

    Read-only stays the default: writes need `writes = true` in the profile (or
    --allow-writes with --bootstrap / --local). Every write shows its plan; --dry-run
    stops there; --yes (or typing the subject) sends it; each step goes into the history.
    """


for _group in (server, rebalance, config, acl, partition, table):
    admin.add_command(_group)

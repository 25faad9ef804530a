"""What the 1.0 upgrade notes are checked against, read from the cluster: its ACLs and
every server's configuration (the one read for ``konsole upgrade check`` and the console's
Upgrade screen).

ListAcls from the coordinator; DescribeClusterConfigs from the coordinator and from each
tablet server of the poll (each answers with its own ``server.yaml`` keys and the dynamic
ones). A part that could not be read is None (the report says so), never empty.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fluss_proto.errors import FlussError
from konsole.model import subjects

if TYPE_CHECKING:
    from fluss_proto.admin import FlussAdmin
    from fluss_proto.model import AclListing, ConfigEntry
    from konsole.model.snapshot import ClusterSnapshot

__all__ = ["NotesInputs", "read_notes_inputs"]


@dataclass(frozen=True, slots=True)
class NotesInputs:
    #: The ACLs (None: could not be listed).
    acls: AclListing | None
    #: Server subject -> its configuration (None: not every server's could be read).
    configs: dict[str, Sequence[ConfigEntry]] | None


async def read_notes_inputs(admin: FlussAdmin, snapshot: ClusterSnapshot) -> NotesInputs:
    """The ACLs and the configs of the servers ``snapshot`` knows, through ``admin``."""
    acls: AclListing | None = None
    configs: dict[str, Sequence[ConfigEntry]] | None = None
    with contextlib.suppress(FlussError):
        acls = await admin.list_acls()
    with contextlib.suppress(FlussError):
        found: dict[str, Sequence[ConfigEntry]] = {
            subjects.coordinator(snapshot.active_coordinator): await admin.cluster_configs()
        }
        view = snapshot.view
        nodes = [s.node_id for s in view.tablet_servers] if view else []
        for node, entries in (await admin.server_configs(nodes)).items():
            if isinstance(entries, Exception):
                raise FlussError(str(entries))
            found[subjects.tablet_server(node)] = entries
        configs = found
    return NotesInputs(acls, configs)

"""What a history file says a one-look command (``konsole check``) should start from, read
through one reader: the last storage part (its observed times tell a remote log end that
stood still, without a second look), what the cluster last named each server address (a
bootstrap address that does not answer is then named by that role:
:mod:`konsole.model.roles`), and the tablet servers it saw alive and not retired since (one
metadata no longer lists is gone: :mod:`konsole.model.known_servers`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from konsole.model.known_servers import KnownServer, KnownServers
from konsole.model.roles import Role

if TYPE_CHECKING:
    from konsole.model.storage import StoragePart
    from store import HistoryReader

__all__ = ["RecordedLook", "recorded_look"]


@dataclass(frozen=True, slots=True)
class RecordedLook:
    """Where a look starts from; empty when there is no readable history."""

    storage: StoragePart | None = None
    #: (address, role), oldest first, from the history's latest epoch.
    roles: list[tuple[str, Role]] = field(default_factory=list)
    #: The tablet servers recorded polls listed alive (latest epoch), and node id -> when
    #: an operator retired it.
    servers: tuple[KnownServer, ...] = ()
    retired: dict[int, float] = field(default_factory=dict)

    def known(self, base: KnownServers) -> KnownServers:
        """``base`` (the profile's) plus the servers the history saw and did not retire."""
        return base.recall(self.servers, self.retired)


def recorded_look(path: Path | None) -> RecordedLook:
    """The storage part and the roles ``path`` holds. Never raises: a history that cannot
    be read gives an empty look, and the look starts from nothing."""
    if path is None or not path.is_file():
        return RecordedLook()
    try:
        from store.queries import open_reader

        with open_reader(path) as reader:
            servers, retired = _servers(reader)
            return RecordedLook(_storage(reader), _roles(reader), servers, retired)
    except Exception:  # a history that cannot be read: the look starts from nothing
        return RecordedLook()


def _storage(reader: HistoryReader) -> StoragePart | None:
    from konsole.collect.history.storage_rows import unpack_storage
    from store.queries import storage_at_poll

    poll = reader.poll_at(int(time.time() * 1000))
    if poll is None:
        return None
    epoch = reader.epochs.at(poll.at_ms)
    first = epoch.first_poll if epoch else 0
    return unpack_storage(storage_at_poll(reader, poll.id, from_poll=first))


def _roles(reader: HistoryReader) -> list[tuple[str, Role]]:
    from store.queries import roles_seen

    servers, coordinators = roles_seen(reader)
    out = [
        (
            f"{s.host}:{s.port}",
            Role("coordinator") if s.role == "coordinator" else Role("tablet-server", s.node_id),
        )
        for s in servers
    ]
    # A coordinator row is a probe's answer; "unreachable" says nothing of the role.
    out += [
        (c.address, Role("coordinator")) for c in coordinators if c.role in ("active", "standby")
    ]
    return out


def _servers(reader: HistoryReader) -> tuple[tuple[KnownServer, ...], dict[int, float]]:
    from konsole.collect.history.server_memory import recall_from, retirements

    now = time.time()
    recalled = recall_from(reader, KnownServers(), now)
    ids = [s.node_id for s in recalled.sightings]
    return recalled.sightings, retirements(reader, ids, int(now * 1000))

"""What a history file says a one-look command (``konsole check``) should start from, read
through one reader: the last storage part (its observed times tell a remote log end that
stood still, without a second look) and what the cluster last named each server address (a
bootstrap address that does not answer is then named by that role:
:mod:`konsole.model.roles`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

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


def recorded_look(path: Path | None) -> RecordedLook:
    """The storage part and the roles ``path`` holds. Never raises: a history that cannot
    be read gives an empty look, and the look starts from nothing."""
    if path is None or not path.is_file():
        return RecordedLook()
    try:
        from store.queries import open_reader

        with open_reader(path) as reader:
            return RecordedLook(_storage(reader), _roles(reader))
    except Exception:  # a history that cannot be read: the look starts from nothing
        return RecordedLook()


def _storage(reader: HistoryReader) -> StoragePart | None:
    from konsole.collect.storage_rows import unpack_storage
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

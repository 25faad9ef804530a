"""What a history file says each server address was, for a command that starts without
having polled (``konsole check``): a bootstrap address that does not answer is then named
by the role the cluster last gave it (:mod:`konsole.model.roles`)."""

from __future__ import annotations

from pathlib import Path

from konsole.model.roles import Role

__all__ = ["recorded_roles"]


def recorded_roles(path: Path | None) -> list[tuple[str, Role]]:
    """(address, role) pairs, oldest first, from the history's latest epoch; empty when
    there is no readable history. Never raises: a look without them starts from nothing."""
    if path is None or not path.is_file():
        return []
    try:
        from store.queries import open_reader, roles_seen

        with open_reader(path) as reader:
            servers, coordinators = roles_seen(reader)
    except Exception:  # a history that cannot be read: the roles start from nothing
        return []
    out: list[tuple[str, Role]] = []
    for s in servers:
        role = Role("coordinator") if s.role == "coordinator" else Role("tablet-server", s.node_id)
        out.append((f"{s.host}:{s.port}", role))
    # A coordinator row is a probe's answer; "unreachable" says nothing of the role.
    out += [
        (c.address, Role("coordinator")) for c in coordinators if c.role in ("active", "standby")
    ]
    return out

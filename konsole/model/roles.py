"""What each server address is, as the cluster said it (pure).

Fluss clients accept any server as a bootstrap address, so a bootstrap list mixes
coordinators and tablet servers, and its order says nothing. A role comes only from what
the cluster says: metadata names the active coordinator and the alive tablet servers with
their node ids, and a server answering a probe says whether it is a coordinator (active or
standby) or a tablet server. :class:`AddressRoles` keeps the last word for each address
(seeded from a history's last poll when a command starts with one).

:func:`sort_probes` turns one poll's probe answers into coordinator statuses and
"bootstrap" errors: an address that did not answer is a coordinator only when it was
declared one (a profile's ``coordinators``) or the cluster last named it one; one the
cluster last named tablet server N is that tablet server; any other is a bootstrap address
that did not answer, a connection fact about the address and nothing more.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Final, Literal

from fluss_proto.model import ClusterView
from konsole.model import subjects
from konsole.model.snapshot import (
    ClusterSnapshot,
    CoordinatorRole,
    CoordinatorStatus,
    SnapshotError,
)

__all__ = ["BOOTSTRAP_SCOPE", "AddressRoles", "Role", "Unanswered", "sort_probes", "unanswered"]

#: The scope of a :class:`~konsole.model.snapshot.SnapshotError` for a bootstrap address
#: that did not answer (kept among the snapshot's errors, so the history keeps it too).
BOOTSTRAP_SCOPE: Final = "bootstrap"
#: Addresses remembered at most (oldest forgotten first).
MAX_ADDRESSES: Final = 512


@dataclass(frozen=True, slots=True)
class Role:
    """What the cluster last said one address is."""

    kind: Literal["coordinator", "tablet-server"]
    #: A tablet server's node id, when metadata named it (a probe answer does not).
    node_id: int | None = None


class AddressRoles:
    """Address -> :class:`Role`, the last word of metadata or of the server itself."""

    def __init__(self) -> None:
        self._roles: dict[str, Role] = {}

    def get(self, address: str) -> Role | None:
        return self._roles.get(address)

    @property
    def coordinators(self) -> list[str]:
        """Addresses known as coordinators, oldest first."""
        return [a for a, r in self._roles.items() if r.kind == "coordinator"]

    def learn_view(self, view: ClusterView) -> None:
        """Metadata's word: the active coordinator and every alive tablet server."""
        if view.coordinator is not None:
            self.learn(view.coordinator.address, Role("coordinator"))
        for server in view.tablet_servers:
            self.learn(server.address, Role("tablet-server", server.node_id))

    def learn_answer(self, address: str, answer: str) -> None:
        """A server's own word: ``active`` or ``standby`` (a coordinator), ``tablet-server``."""
        if answer in (CoordinatorRole.ACTIVE, CoordinatorRole.STANDBY):
            self.learn(address, Role("coordinator"))
        elif answer == "tablet-server":
            known = self._roles.get(address)
            if known is None or known.kind != "tablet-server":
                self.learn(address, Role("tablet-server"))

    def learn(self, address: str, role: Role) -> None:
        """``address`` is ``role`` (the newest word wins: a port may be reused)."""
        self._roles.pop(address, None)
        self._roles[address] = role
        while len(self._roles) > MAX_ADDRESSES:
            self._roles.pop(next(iter(self._roles)))


@dataclass(frozen=True, slots=True)
class Probed:
    """One probe's answer, as the poller hands it over (fluss_proto's probe, flattened)."""

    address: str
    #: ``active``, ``standby``, ``unreachable`` or ``tablet-server``.
    answer: str
    error: str | None = None
    latency_s: float | None = None


def sort_probes(
    probes: Iterable[Probed], roles: AddressRoles, *, declared: Collection[str]
) -> tuple[tuple[CoordinatorStatus, ...], tuple[SnapshotError, ...]]:
    """The coordinators among ``probes`` and a bootstrap error for each other address that
    did not answer. Call after ``roles`` learned this poll's metadata and answers."""
    statuses: list[CoordinatorStatus] = []
    errors: list[SnapshotError] = []
    for p in probes:
        if p.answer == "tablet-server":
            continue
        if p.answer != CoordinatorRole.UNREACHABLE:
            statuses.append(
                CoordinatorStatus(p.address, CoordinatorRole(p.answer), p.error, p.latency_s)
            )
            continue
        role = roles.get(p.address)
        if p.address in declared or (role is not None and role.kind == "coordinator"):
            statuses.append(
                CoordinatorStatus(p.address, CoordinatorRole.UNREACHABLE, p.error, p.latency_s)
            )
            continue
        node = role.node_id if role is not None else None
        subject = subjects.bootstrap(p.address) if node is None else subjects.tablet_server(node)
        errors.append(
            SnapshotError(
                BOOTSTRAP_SCOPE, subject, "probe", f"{p.address}: {p.error or 'no answer'}"
            )
        )
    return tuple(statuses), tuple(errors)


@dataclass(frozen=True, slots=True)
class Unanswered:
    """A bootstrap address that did not answer, read back from a snapshot's errors."""

    address: str
    #: The tablet server the cluster last named at this address; None: nobody said.
    node_id: int | None
    error: str

    @property
    def subject(self) -> str:
        if self.node_id is None:
            return subjects.bootstrap(self.address)
        return subjects.tablet_server(self.node_id)


def unanswered(snapshot: ClusterSnapshot) -> tuple[Unanswered, ...]:
    """The bootstrap addresses of ``snapshot`` that did not answer (live or recorded)."""
    out = []
    for e in snapshot.errors:
        if e.scope != BOOTSTRAP_SCOPE:
            continue
        address, _, error = e.message.partition(": ")
        node = e.subject.removeprefix(subjects.tablet_server(""))
        out.append(Unanswered(address, int(node) if node.isdigit() else None, error))
    return tuple(out)

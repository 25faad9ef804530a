"""Which cluster a snapshot is of, and the rule for "the same cluster" (pure).

Fluss hands a client no cluster id: neither GetMetadata nor ApiVersions carries one, at
0.9.1 or on the 1.0 line (the messages :mod:`fluss_proto` decodes are all there is). So a
cluster's :class:`ClusterIdentity` is made of what the servers do say, each part with what
it can prove:

- ``cluster_id``: the ``cluster_id`` label of the servers' Prometheus metrics, which Fluss
  sets to the ZooKeeper root (``zookeeper.path.root`` without its ``/``; ``fluss`` unless
  configured). Two values prove two clusters; one value proves little (defaults agree).
- ``run_id``: one start of a local cluster by ``konsole cluster start`` (its state file
  keeps it). Two values prove two clusters.
- ``tables``: table ids with their creation times. A cluster never gives one table id to
  two tables, so one id created at two times proves two clusters.
- ``servers``: role, node id and endpoint of the coordinator and tablet servers metadata
  lists. No server in common (same role, id and endpoint) means another cluster; a rolling
  restart or a server added keeps servers in common. A table id with the same creation time
  on both sides proves the same cluster even so: its servers were replaced or moved (an
  upgrade onto new hosts or ports), and the verdict says so (``note``).

:func:`judge` compares the identity a history holds with a snapshot's: anything unknown on
either side proves nothing, and an identity with nothing known (recorded before konsole kept
identities) cannot vouch for anyone, so it is never taken for the same cluster.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from konsole.model.snapshot import ClusterSnapshot

__all__ = ["UNIDENTIFIED", "ClusterIdentity", "Verdict", "identity_of", "judge"]

#: The reason of an epoch that follows polls recorded without an identity (a history from
#: before konsole kept identities): nothing tells whether it is another cluster.
UNIDENTIFIED: Final = "the polls before were recorded without the cluster's identity"

#: Table ids kept in an identity (the lowest: the oldest tables, the likeliest to stay).
MAX_TABLES: Final = 16


@dataclass(frozen=True, slots=True)
class ClusterIdentity:
    """What one cluster said about itself; every part may be unknown (None or empty)."""

    cluster_id: str | None = None
    run_id: str | None = None
    #: ``role node_id host:port``, sorted.
    servers: tuple[str, ...] = ()
    #: (table id, creation time in ms), lowest ids first.
    tables: tuple[tuple[int, int], ...] = ()

    @property
    def known(self) -> bool:
        return bool(self.cluster_id or self.run_id or self.servers or self.tables)

    def to_json(self) -> str:
        doc: dict[str, Any] = {}
        if self.cluster_id is not None:
            doc["cluster_id"] = self.cluster_id
        if self.run_id is not None:
            doc["run_id"] = self.run_id
        if self.servers:
            doc["servers"] = list(self.servers)
        if self.tables:
            doc["tables"] = [list(t) for t in self.tables]
        return json.dumps(doc, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ClusterIdentity:
        """The identity a history row holds; text that is not one reads as unknown."""
        try:
            doc = json.loads(text)
        except ValueError:
            return cls()
        if not isinstance(doc, Mapping):
            return cls()
        try:
            return cls(
                cluster_id=_text(doc.get("cluster_id")),
                run_id=_text(doc.get("run_id")),
                servers=tuple(str(s) for s in doc.get("servers") or ()),
                tables=tuple((int(t), int(c)) for t, c in doc.get("tables") or ()),
            )
        except (TypeError, ValueError):
            return cls()

    def summary(self) -> str:
        """One line for ``konsole history info`` and notices."""
        parts = []
        if self.run_id:
            parts.append(f"local run {self.run_id}")
        if self.cluster_id:
            parts.append(f"cluster id {self.cluster_id}")
        if self.servers:
            coordinators = [s.split(" ", 2)[2] for s in self.servers if s.startswith("coord")]
            tablets = sum(1 for s in self.servers if s.startswith("tablet"))
            if coordinators:
                parts.append("coordinator " + ",".join(coordinators))
            parts.append(f"{tablets} tablet server(s)")
        return ", ".join(parts) or "unknown (recorded before konsole kept cluster identities)"


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def identity_of(snapshot: ClusterSnapshot, *, run_id: str | None = None) -> ClusterIdentity | None:
    """The identity a successful poll shows; None for a failed poll (it shows none)."""
    view = snapshot.view
    if not snapshot.ok or view is None:
        return None
    ids = sorted({m.cluster_id for m in snapshot.metrics if m.cluster_id})
    servers = tuple(sorted(f"{s.role} {s.node_id} {s.address}" for s in view.servers))
    tables = sorted(
        (t.table_id, t.info.created_ms)
        for t in view.tables
        if t.table_id is not None and t.info is not None
    )
    return ClusterIdentity(
        # Servers of one cluster share one root; two roots in one poll: keep it unknown.
        cluster_id=ids[0] if len(ids) == 1 else None,
        run_id=run_id,
        servers=servers,
        tables=tuple(tables[:MAX_TABLES]),
    )


@dataclass(frozen=True, slots=True)
class Verdict:
    """:func:`judge`'s answer."""

    same: bool
    #: Why another cluster (or "first identity"); empty when the same.
    reason: str
    #: What the history should keep for this cluster now: the newest of every known part.
    identity: ClusterIdentity
    #: For the same cluster, what changed that is worth saying (its servers replaced).
    note: str = ""


def judge(held: ClusterIdentity | None, seen: ClusterIdentity) -> Verdict:
    """Is ``seen`` (a new poll's identity) the cluster whose identity ``held`` is?"""
    if held is None:
        return Verdict(False, "the first poll of this history", seen)
    if not held.known:
        return Verdict(False, UNIDENTIFIED, seen)
    reason = _difference(held, seen)
    if reason:
        return Verdict(False, reason, seen)
    note = ""
    if held.servers and seen.servers and not set(held.servers) & set(seen.servers):
        note = "the same cluster (a table id with its creation time in common); its servers changed"
    merged = replace(
        seen,
        cluster_id=seen.cluster_id or held.cluster_id,
        run_id=seen.run_id or held.run_id,
        servers=seen.servers or held.servers,
        tables=_tables(held.tables, seen.tables),
    )
    return Verdict(True, "", merged, note)


def _difference(held: ClusterIdentity, seen: ClusterIdentity) -> str:
    if held.run_id and seen.run_id and held.run_id != seen.run_id:
        return f"another local cluster run ({held.run_id} -> {seen.run_id})"
    if held.cluster_id and seen.cluster_id and held.cluster_id != seen.cluster_id:
        return f"another cluster id ({held.cluster_id} -> {seen.cluster_id})"
    created = dict(held.tables)
    for table_id, ms in seen.tables:
        if table_id in created and created[table_id] != ms:
            return f"table id {table_id} names a table created at another time"
    shared = set(held.tables) & set(seen.tables)
    if held.servers and seen.servers and not set(held.servers) & set(seen.servers) and not shared:
        return "no server in common (role, id and endpoint)"
    return ""


def _tables(
    held: tuple[tuple[int, int], ...], seen: tuple[tuple[int, int], ...]
) -> tuple[tuple[int, int], ...]:
    """The lowest ids of both (a table dropped since stays: its id is never given again)."""
    return tuple(sorted(dict((*held, *seen)).items())[:MAX_TABLES])

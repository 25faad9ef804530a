"""The rolling-upgrade gate: may the next (or a named) server be taken down now?

Pure: one judged poll in (the snapshot, the check's :class:`CheckResult` of that very
snapshot, the rebalance the coordinator reports), one :class:`GateVerdict` out. The gate
never judges health itself: its first condition is the check's status on the same poll
(``konsole check``'s judgement, one judge), and every other condition only adds reasons to
wait. Fluss's own procedure ("Upgrading and Compatibility": wait for the cluster to fully
recover before the next tablet server) asks for GREEN; the rest is what GREEN alone does
not say on a 0.9 cluster, where GetClusterHealth does not exist:

- ``health``: the check's status is OK (GREEN, no threshold alerting), findings about room
  on a disk aside (``disk_headroom``, ``write_lock_forecast``: a restart neither takes nor
  frees space, and GetClusterHealth's GREEN does not weigh it); the verdict still carries
  them;
- ``offline``: no bucket without an active leader;
- ``under-replicated``: no bucket with a replica on a server that is gone, none that a
  leader reports under-replicated (``underReplicated``: its ISR is smaller than its
  replicas, the catch-up after a restart), none that GetClusterHealth (1.0) counts;
- ``min-isr``: no leader of a bucket the server holds (any leader, without ``--server``)
  reports buckets under ``min-insync-replicas`` (``underMinIsr``) or more buckets at it
  (``atMinIsr``) than its single-replica buckets, which sit at it for good;
- ``rebalance``: no rebalance running (ListRebalanceProgress), and that known: a coordinator
  that could not be asked holds the gate;
- ``servers``: the poll answered, every tablet server answered metadata and metrics, every
  coordinator probe answered, an active coordinator exists, the named server is alive.

Exit codes (``check``'s, docs/upgrade.md): 0 safe; otherwise the check's status when it is
worse than OK, else 1 (WARNING: healthy, but a condition above holds).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from fluss_proto.model import RebalanceProgress, RebalanceStatus
from konsole.errors import ExitCode
from konsole.model import subjects
from konsole.model.check import CheckResult
from konsole.model.metrics import MetricsOrigin
from konsole.model.placement import Replication
from konsole.model.poll import JudgedPoll
from konsole.model.roles import unanswered
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole

__all__ = ["CONDITIONS", "GateVerdict", "GateWait", "judge_gate"]

#: Every condition the gate waits on, in the order it says them.
CONDITIONS: Final = ("health", "servers", "offline", "under-replicated", "min-isr", "rebalance")
#: Check findings that do not make taking a server down unsafe (room on a disk, and when it
#: runs out): said with the verdict, not waited on.
ROOM_RULES: Final = frozenset({"disk_headroom", "write_lock_forecast"})
#: A rebalance in one of these states is still moving replicas.
_MOVING: Final = frozenset({RebalanceStatus.NOT_STARTED, RebalanceStatus.REBALANCING})


@dataclass(frozen=True, slots=True)
class GateWait:
    """One reason to wait: which condition, about what, and why."""

    condition: str
    subject: str
    reason: str

    def line(self) -> str:
        return f"{self.condition}: {self.subject}: {self.reason}"


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """The gate's answer for one poll."""

    #: The tablet server about to go down, or None for "the next one" (cluster-wide).
    server: int | None
    #: The check's judgement of the same poll (the gate's first condition).
    check: CheckResult
    waits: tuple[GateWait, ...]
    taken_at: float | None

    @property
    def safe(self) -> bool:
        return not self.waits

    @property
    def status(self) -> ExitCode:
        if self.safe:
            return ExitCode.OK
        if self.check.status is not ExitCode.OK:
            return self.check.status
        return ExitCode.WARNING

    def summary(self) -> str:
        what = "the next server" if self.server is None else subjects.tablet_server(self.server)
        if self.safe:
            noted = (
                ""
                if self.check.status is ExitCode.OK
                else (f" (check says {self.check.status.name}, room on a disk only: not waited on)")
            )
            return f"SAFE: {what} may be taken down now{noted}"
        return f"WAIT: {what} may not be taken down: " + "; ".join(w.line() for w in self.waits)

    def as_dict(self) -> dict[str, object]:
        return {
            "safe": self.safe,
            "status": self.status.name,
            "server": self.server,
            "check": self.check.status.name,
            "time": self.taken_at,
            "waits": [
                {"condition": w.condition, "subject": w.subject, "reason": w.reason}
                for w in self.waits
            ],
        }


def judge_gate(
    judged: JudgedPoll,
    check: CheckResult,
    *,
    server: int | None = None,
    rebalance: RebalanceProgress | None = None,
    rebalance_unknown: str | None = None,
) -> GateVerdict:
    """The verdict for the judged poll (``check`` is :func:`konsole.model.check.assess` of it;
    ``rebalance`` None: not asked, or the servers have no rebalance API; ``rebalance_unknown``:
    why the coordinator could not be asked, which holds the gate: one may run)."""
    waits: list[GateWait] = []
    if _health_blocks(check):
        waits.append(
            GateWait("health", "cluster", f"check says {check.status.name}: {check.summary}")
        )
    snapshot = judged.snapshot
    waits += _servers(snapshot, server)
    own = judged.own_facts  # None when the poll failed (said by _servers)
    if own is not None:
        waits += _replication(snapshot, own.replication)
        waits += _min_isr(snapshot, server)
    if rebalance_unknown is not None:
        waits.append(
            GateWait("rebalance", "cluster", f"not known whether one runs: {rebalance_unknown}")
        )
    if rebalance is not None and rebalance.exists and rebalance.status in _MOVING:
        state = getattr(rebalance.status, "name", str(rebalance.status)).lower()
        waits.append(
            GateWait("rebalance", "cluster", f"rebalance {rebalance.rebalance_id} {state}")
        )
    return GateVerdict(server, check, tuple(waits), snapshot.taken_at)


def _health_blocks(check: CheckResult) -> bool:
    """The check's status is worse than OK for a reason other than room on a disk."""
    if check.status is ExitCode.OK:
        return False
    bad = [f for f in check.findings if f.status is not ExitCode.OK]
    return not bad or any(f.rule not in ROOM_RULES for f in bad)


def _servers(snapshot: ClusterSnapshot, server: int | None) -> list[GateWait]:
    out: list[GateWait] = []
    if not snapshot.ok or snapshot.view is None:
        out.append(GateWait("servers", "cluster", f"the poll failed: {snapshot.error}"))
        return out
    view = snapshot.view
    if view.coordinator is None or snapshot.active_coordinator is None:
        out.append(GateWait("servers", "coordinator", "no active coordinator"))
    for c in snapshot.coordinators:
        if c.role is CoordinatorRole.UNREACHABLE:
            out.append(GateWait("servers", subjects.coordinator(c.address), "not answering"))
    for s in view.tablet_servers:
        if s.error is not None:
            out.append(GateWait("servers", subjects.tablet_server(s.node_id), "not answering"))
    for u in unanswered(snapshot):
        out.append(GateWait("servers", subjects.bootstrap(u.address), f"not answering ({u.error})"))
    if snapshot.metrics_origin is MetricsOrigin.NONE:
        out.append(
            GateWait(
                "servers", "metrics", "no metrics endpoints: in-sync replicas cannot be judged"
            )
        )
    for e in snapshot.metrics_errors:
        out.append(GateWait("servers", e.subject, f"metrics {e.kind}: {e.message}"))
    alive = {s.node_id for s in view.tablet_servers}
    if server is not None and server not in alive:
        out.append(GateWait("servers", subjects.tablet_server(server), "not alive"))
    return out


def _replication(snapshot: ClusterSnapshot, rep: Replication) -> list[GateWait]:
    out: list[GateWait] = []
    if rep.offline_buckets:
        out.append(
            GateWait("offline", "cluster", f"{rep.offline_buckets} bucket(s) without a leader")
        )
    for node, buckets in sorted(rep.placement.replicas_offline.items()):
        out.append(
            GateWait(
                "under-replicated",
                subjects.tablet_server(node),
                f"not alive, {len(buckets)} replica(s) on it",
            )
        )
    for subject, count in sorted(rep.reported.items()):
        if count:
            out.append(
                GateWait("under-replicated", subject, f"leads {count} under-replicated bucket(s)")
            )
    health = snapshot.health
    if health is not None and health.in_sync_replicas < health.num_replicas:
        behind = health.num_replicas - health.in_sync_replicas
        out.append(
            GateWait(
                "under-replicated", "cluster", f"GetClusterHealth: {behind} replica(s) not in sync"
            )
        )
    return out


def _min_isr(snapshot: ClusterSnapshot, server: int | None) -> list[GateWait]:
    view = snapshot.view
    assert view is not None
    single = _single_replica_leaders(snapshot)
    concerned: set[int] | None = None
    if server is not None:  # the leaders of every bucket with a replica on that server
        concerned = {
            b.leader_id
            for b in view.buckets
            if server in b.replica_ids and b.leader_id is not None and b.leader_id != server
        }
    out: list[GateWait] = []
    for m in snapshot.metrics:
        if m.role != "tablet" or m.server_id is None or not m.server_id.isdigit():
            continue
        node = int(m.server_id)
        if concerned is not None and node not in concerned:
            continue
        if m.under_min_isr:
            out.append(
                GateWait("min-isr", m.subject, f"leads {m.under_min_isr} bucket(s) under min ISR")
            )
        extra = (m.at_min_isr or 0) - single.get(node, 0)
        if extra > 0:
            out.append(GateWait("min-isr", m.subject, f"leads {extra} bucket(s) at min ISR"))
    return out


def _single_replica_leaders(snapshot: ClusterSnapshot) -> Mapping[int, int]:
    """Leader -> its buckets with one replica: at min ISR for good (min ISR is at least
    1), so they never hold the gate; taking their server down is the plan's cost."""
    out: dict[int, int] = {}
    view = snapshot.view
    if view is None:
        return out
    for b in view.buckets:
        if len(b.replica_ids) == 1 and b.leader_id is not None:
            out[b.leader_id] = out.get(b.leader_id, 0) + 1
    return out

"""Fakes of the console's operator actions (konsole.ui.actions.ServerActions and
konsole.ui.cluster_actions.ClusterActions): plans from a fixed four-server view through the
model's planners, progress in two steps, an outcome or a chosen failure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fluss_proto.model import (
    BucketRebalance,
    ClusterView,
    ConfigEntry,
    HealthStatus,
    RebalanceProgress,
    RebalanceStatus,
    TableRebalance,
)
from konsole.collect.cluster.upgrade_reads import NotesInputs
from konsole.errors import ActionFailedError
from konsole.model.actions import (
    Plan,
    plan_cancel,
    plan_config,
    plan_drain,
    plan_partition,
    plan_rebalance,
    plan_table_set,
    plan_tag,
)
from konsole.model.placement import placement
from konsole.model.snapshot import ClusterSnapshot
from konsole.ui.actions import Progress
from konsole.ui.cluster_actions import ActionRequest
from tests._testutil.builders import table, view

#: Four tablet servers, one table of replication factor 2 over four buckets.
VIEW = view(
    (1, 2, 3, 4),
    [table("shop.orders", 1, [(b % 4 + 1, (b % 4 + 1, (b + 1) % 4 + 1), 10) for b in range(4)])],
)


@dataclass
class FakeServerActions:
    unavailable_reason: str | None = None
    health: HealthStatus = HealthStatus.GREEN
    #: Raised by execute (after its progress) when set.
    fail_with: str | None = None
    executed: list[tuple[str, int]] = field(default_factory=list)

    def unavailable(self) -> str | None:
        return self.unavailable_reason

    async def plan(self, action: str, server_id: int) -> Plan:
        if action == "drain":
            return plan_drain(
                VIEW,
                placement(VIEW),
                server_id,
                health=self.health,
                running=None,
                goals=["REPLICA_DISTRIBUTION"],
            )
        return plan_tag(VIEW, server_id, "TEMPORARY_OFFLINE", remove=action == "untag")

    async def execute(self, action: str, server_id: int, progress: Progress) -> str:
        self.executed.append((action, server_id))
        progress(1, 2, "REBALANCING")
        if self.fail_with is not None:
            raise ActionFailedError(self.fail_with)
        progress(2, 2, "COMPLETED")
        return f"server {server_id} drained: it holds no replica"


# =========================================================================== cluster actions

#: The fake's cluster: VIEW plus a partitioned table ``shop.daily`` (partition ``2026``).
CLUSTER_VIEW = view(
    (1, 2, 3, 4),
    [
        table("shop.orders", 1, [(b % 4 + 1, (b % 4 + 1, (b + 1) % 4 + 1), 10) for b in range(4)]),
        table("shop.daily", 2, [], partitions={"2026": [(1, (1, 2), 5), (2, (2, 3), 5)]}),
    ],
)

#: The fake's configs: one from the server file, one set at run time.
CONFIGS = (
    ConfigEntry("kv.rocksdb.shared-rate-limiter.bytes-per-sec", "100mb", "DYNAMIC_SERVER_CONFIG"),
    ConfigEntry("remote.data.dir", "/tmp/fluss/remote", "INITIAL_SERVER_CONFIG"),
    ConfigEntry("security.sasl.password", None, "INITIAL_SERVER_CONFIG"),
)

#: A rebalance half done: bucket 0 moved, bucket 1 moving (table 11: the console story's
#: shop.orders).
PROGRESS = RebalanceProgress(
    "rb-7",
    RebalanceStatus.REBALANCING,
    (
        TableRebalance(
            11,
            (
                BucketRebalance(None, 0, 1, 2, (1, 2), (2, 3), RebalanceStatus.COMPLETED),
                BucketRebalance(None, 1, 2, 2, (2, 3), (3, 4), RebalanceStatus.REBALANCING),
            ),
        ),
    ),
)


@dataclass
class FakeClusterActions:
    """Plans from CLUSTER_VIEW and CONFIGS through the model's own planners."""

    unavailable_reason: str | None = None
    #: What plans are computed from (the tests of the Tables screen hand the story's).
    view: ClusterView = CLUSTER_VIEW
    health: HealthStatus = HealthStatus.GREEN
    running: str | None = None
    configs_list: tuple[ConfigEntry, ...] = CONFIGS
    progress_now: RebalanceProgress = PROGRESS
    #: What notes_inputs() answers (the Upgrade screen's ACLs and configs).
    notes: NotesInputs = field(default_factory=lambda: NotesInputs(None, None))
    #: Raised by configs() / progress() (a read that failed) when set.
    read_fails_with: str | None = None
    #: Raised by execute (after its progress) when set.
    fail_with: str | None = None
    executed: list[ActionRequest] = field(default_factory=list)
    #: How many times reads() was asked for, and closed (ClusterReads: the fake is its own).
    reads_opened: int = 0
    reads_closed: int = 0

    def unavailable(self) -> str | None:
        return self.unavailable_reason

    def reads(self) -> FakeClusterActions:
        self.reads_opened += 1
        return self

    async def aclose(self) -> None:
        self.reads_closed += 1

    async def configs(self) -> Sequence[ConfigEntry]:
        if self.read_fails_with is not None:
            raise ActionFailedError(self.read_fails_with)
        return self.configs_list

    async def progress(self) -> RebalanceProgress:
        if self.read_fails_with is not None:
            raise ActionFailedError(self.read_fails_with)
        return self.progress_now

    async def notes_inputs(self, snapshot: ClusterSnapshot) -> NotesInputs:
        if self.read_fails_with is not None:
            raise ActionFailedError(self.read_fails_with)
        return self.notes

    async def plan(self, request: ActionRequest) -> Plan:
        kind = request.kind
        if kind == "rebalance":
            goals = request.value.split(",")
            return plan_rebalance(
                placement(self.view), health=self.health, running=self.running, goals=goals
            )
        if kind == "rebalance-cancel":
            return plan_cancel(self.running)
        if kind.startswith("config-"):
            delete = kind == "config-delete"
            return plan_config(self.configs_list, request.target, request.value, delete=delete)
        if kind.startswith("partition-"):
            drop = kind == "partition-drop"
            return plan_partition(self.view, request.target, request.value, drop=drop)
        return plan_table_set(self.view, request.target, request.value)

    async def execute(self, request: ActionRequest, progress: Progress) -> str:
        self.executed.append(request)
        if request.kind == "rebalance":
            progress(1, 2, "REBALANCING")
        if self.fail_with is not None:
            raise ActionFailedError(self.fail_with)
        if request.kind == "rebalance":
            progress(2, 2, "COMPLETED")
        return f"{request.kind} {request.target} done".replace("  ", " ")

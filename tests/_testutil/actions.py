"""A fake of the console's operator actions (konsole.ui.actions.ServerActions): plans from
a fixed four-server view, progress in two steps, an outcome or a chosen failure."""

from __future__ import annotations

from dataclasses import dataclass, field

from fluss_proto.model import HealthStatus
from konsole.errors import ActionFailedError
from konsole.model.actions import Plan, plan_drain, plan_tag
from konsole.ui.actions import Progress
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
                VIEW, server_id, health=self.health, running=None, goals=["REPLICA_DISTRIBUTION"]
            )
        return plan_tag(VIEW, server_id, "TEMPORARY_OFFLINE", remove=action == "untag")

    async def execute(self, action: str, server_id: int, progress: Progress) -> str:
        self.executed.append((action, server_id))
        progress(1, 2, "REBALANCING")
        if self.fail_with is not None:
            raise ActionFailedError(self.fail_with)
        progress(2, 2, "COMPLETED")
        return f"server {server_id} drained: it holds no replica"

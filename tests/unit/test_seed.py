"""The demo seed's decisions and failure reporting, against a fake pyfluss (no server)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import fluss
import pytest

from konsole.localcluster import seed
from konsole.localcluster.seed import DEMO_TABLES, SeedError, demo_rows, plan_table


@pytest.mark.parametrize(
    ("kind", "created", "records", "expected", "action"),
    [
        ("log", True, 0, 10, "created"),
        ("pk", True, 0, 10, "created"),
        ("log", False, 10, 10, "complete"),
        ("log", False, 12, 10, "complete"),  # someone wrote more: never drop data
        ("pk", False, 25, 10, "complete"),  # changelog: one record per upsert
        ("pk", False, 0, 10, "completed"),
        ("pk", False, 4, 10, "completed"),  # upserts are idempotent
        ("log", False, 0, 10, "completed"),
        ("log", False, 4, 10, "recreated"),  # appending would duplicate the 4
    ],
)
def test_plan_table(kind: Any, created: bool, records: int, expected: int, action: str) -> None:
    assert plan_table(kind, created, records, expected) == action


def spec(name: str) -> Any:
    return next(s for s in seed._SPECS if s.name == name)


@dataclass
class FakeCluster:
    """Tables by name -> records held (sum over buckets and partitions)."""

    records: dict[str, int] = field(default_factory=dict)
    #: Table names whose next write hangs (pyfluss' stuck writer), once each.
    hang_once: set[str] = field(default_factory=set)
    writes: list[tuple[str, int]] = field(default_factory=list)
    drops: list[str] = field(default_factory=list)
    connections: int = 0
    #: Table name -> how many of its next creations get no bucket leader (a 0.9.1
    #: coordinator whose request to the replicas failed); "now": the table as it is.
    leaderless: dict[str, int] = field(default_factory=dict)
    no_leader_now: set[str] = field(default_factory=set)


class FakeInfo:
    def __init__(self, name: str) -> None:
        self._spec = spec(name)
        self.num_buckets = self._spec.buckets

    def is_partitioned(self) -> bool:
        return bool(self._spec.partitions)

    def has_primary_key(self) -> bool:
        return bool(self._spec.primary_keys)


class FakeAdmin:
    def __init__(self, cluster: FakeCluster) -> None:
        self.c = cluster

    async def create_database(self, *_: Any, **__: Any) -> None:
        return None

    async def create_table(self, path: Any, _desc: Any, ignore_if_exists: bool) -> None:
        name = f"{path.database_name}.{path.table_name}"
        if name in self.c.records:
            raise fluss.FlussError("exists", fluss.ErrorCode.TABLE_ALREADY_EXIST)
        self.c.records[name] = 0
        self.c.no_leader_now.discard(name)
        if self.c.leaderless.get(name, 0) > 0:
            self.c.leaderless[name] -= 1
            self.c.no_leader_now.add(name)

    async def drop_table(self, path: Any, ignore_if_not_exists: bool) -> None:
        name = f"{path.database_name}.{path.table_name}"
        self.c.drops.append(name)
        self.c.records.pop(name, None)

    async def create_partition(self, *_: Any, **__: Any) -> None:
        return None

    def _offsets(self, path: Any, ids: list[int], parts: int) -> dict[int, int]:
        if f"{path.database_name}.{path.table_name}" in self.c.no_leader_now:
            raise fluss.FlussError("No leader found for table bucket", 44)
        held = self.c.records[f"{path.database_name}.{path.table_name}"]
        # everything in bucket 0 of the first partition: only the sum matters
        return {i: (held if i == 0 and parts == 0 else 0) for i in ids}

    async def list_offsets(self, path: Any, ids: list[int], _spec: Any) -> dict[int, int]:
        return self._offsets(path, ids, 0)

    async def list_partition_offsets(
        self, path: Any, part: str, ids: list[int], _spec: Any
    ) -> dict[int, int]:
        first = spec(f"{path.database_name}.{path.table_name}").partitions[0]
        return self._offsets(path, ids, 0 if part == first else 1)

    async def get_table_info(self, path: Any) -> FakeInfo:
        return FakeInfo(f"{path.database_name}.{path.table_name}")

    async def list_partition_infos(self, path: Any) -> list[Any]:
        parts = spec(f"{path.database_name}.{path.table_name}").partitions

        @dataclass
        class P:
            partition_name: str

        return [P(p) for p in parts]


class FakeWriter:
    async def flush(self) -> None:
        return None


class FakeTable:
    def __init__(self, name: str) -> None:
        self.name = name

    def has_primary_key(self) -> bool:
        return False

    def new_append(self) -> FakeTable:
        return self

    def create_writer(self) -> FakeWriter:
        return FakeWriter()


class FakeConn:
    def __init__(self, cluster: FakeCluster) -> None:
        self.c = cluster
        cluster.connections += 1

    def get_admin(self) -> FakeAdmin:
        return FakeAdmin(self.c)

    async def get_table(self, path: Any) -> FakeTable:
        return FakeTable(f"{path.database_name}.{path.table_name}")

    async def close(self) -> None:
        return None


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeCluster:
    cluster = FakeCluster()

    async def connect(_config: Any) -> FakeConn:
        return FakeConn(cluster)

    async def write(table: FakeTable, rows: list[Mapping[str, Any]], timeout_s: float) -> None:
        if table.name in cluster.hang_once:
            cluster.hang_once.discard(table.name)
            cluster.records[table.name] += 3  # a few rows landed before it stuck
            await asyncio.sleep(3600)
        cluster.writes.append((table.name, len(rows)))
        cluster.records[table.name] += len(rows)

    monkeypatch.setattr(seed, "_connect", connect)
    monkeypatch.setattr(seed, "write_table_rows", write)
    monkeypatch.setattr(seed, "_SETTLE_S", 0.0)
    monkeypatch.setattr(seed, "_WRITE_TIMEOUT_S", 0.2)
    monkeypatch.setattr(seed, "LEADERS_WITHIN_S", 0.0, raising=False)  # one look: no waits
    return cluster


def expected(name: str) -> int:
    return len(demo_rows(name))


async def test_fresh_seed_writes_every_table(fake: FakeCluster) -> None:
    report = await seed.seed_demo("x:1")
    assert [t.action for t in report.tables] == ["created"] * len(DEMO_TABLES)
    assert fake.writes == [(n, expected(n)) for n in DEMO_TABLES]
    assert all(t.log_records == t.rows_written for t in report.tables)


async def test_rerun_completes_a_half_done_seed(fake: FakeCluster) -> None:
    """What the issue saw: 4 tables done, sensor_info created with 0 rows, the last absent."""
    for name in DEMO_TABLES[:4]:
        fake.records[name] = expected(name)
    fake.records["go_sensor_demo.sensor_info"] = 0
    report = await seed.seed_demo("x:1")
    by_name = {t.name: t for t in report.tables}
    assert [by_name[n].action for n in DEMO_TABLES[:4]] == ["complete"] * 4
    assert by_name["go_sensor_demo.sensor_info"].action == "completed"
    assert by_name["go_sensor_demo.sensor_info"].rows_written == expected(
        "go_sensor_demo.sensor_info"
    )
    assert by_name["go_sensor_demo.sensor_readings"].action == "created"
    assert {n: fake.records[n] for n in DEMO_TABLES} == {n: expected(n) for n in DEMO_TABLES}
    assert fake.drops == []
    assert "existed incomplete" in str(report) and "existed complete, untouched" in str(report)


async def test_half_written_log_table_is_recreated_not_duplicated(fake: FakeCluster) -> None:
    fake.records["demo.order_events"] = 7
    report = await seed.seed_demo("x:1")
    table = next(t for t in report.tables if t.name == "demo.order_events")
    assert table.action == "recreated" and table.created
    assert fake.drops == ["demo.order_events"]
    assert fake.records["demo.order_events"] == expected("demo.order_events")


async def test_a_stuck_write_is_retried_on_a_fresh_connection(fake: FakeCluster) -> None:
    fake.hang_once.add("go_sensor_demo.sensor_readings")  # a log table: 3 rows land, then stuck
    report = await seed.seed_demo("x:1")
    table = next(t for t in report.tables if t.name == "go_sensor_demo.sensor_readings")
    assert table.action == "recreated"  # the 3 rows that landed are not duplicated
    assert fake.records[table.name] == expected(table.name)
    assert fake.connections == 2
    assert table.first_attempt_failed == "writing 1200 rows did not finish within 0.2 s"
    assert "retried after: writing 1200 rows did not finish within 0.2 s" in str(report)
    assert all(t.first_attempt_failed is None for t in report.tables if t is not table)


async def test_a_table_that_keeps_failing_is_named_with_its_cause(fake: FakeCluster) -> None:
    name = "go_sensor_demo.sensor_info"

    async def always_stuck(table: FakeTable, rows: Any, timeout_s: float) -> None:
        if table.name == name:
            await asyncio.sleep(3600)
        fake.records[table.name] += len(rows)

    seed_write = seed.write_table_rows
    try:
        seed.write_table_rows = always_stuck  # type: ignore[assignment]
        with pytest.raises(SeedError) as caught:
            await seed.seed_demo("x:1")
    finally:
        seed.write_table_rows = seed_write
    err = caught.value
    assert err.table == name
    assert [t.name for t in err.done] == list(DEMO_TABLES[:4])
    text = str(err)
    assert name in text and "writing 40 rows did not finish within 0.2 s" in text
    assert "4 of 6 tables were seeded before it" in text
    assert "the first attempt failed too: writing 40 rows" in text
    assert isinstance(err.__cause__, TimeoutError)


async def test_a_server_error_is_named_with_its_code(
    fake: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuse(*_: Any, **__: Any) -> None:
        raise fluss.FlussError("no way", fluss.ErrorCode.INVALID_REPLICATION_FACTOR)

    monkeypatch.setattr(FakeAdmin, "create_table", refuse)
    monkeypatch.setattr(FakeAdmin, "table_exists", refuse, raising=False)
    with pytest.raises(SeedError) as caught:
        await seed.seed_demo("x:1")
    assert caught.value.table == DEMO_TABLES[0]
    assert "creating the table failed: no way (error code" in str(caught.value)
    assert caught.value.done == ()


async def test_a_table_whose_buckets_get_no_leader_is_created_again(fake: FakeCluster) -> None:
    """Issue 40: on a loaded machine a 0.9.1 coordinator left a new table's buckets without
    an acting leader (it never resends the request that tells the replicas); waiting did
    not help, twice. The seed created the table, so it holds nothing: created anew."""
    name = "go_sensor_demo.sensor_readings"
    fake.leaderless[name] = 1
    report = await seed.seed_demo("x:1")
    table = next(t for t in report.tables if t.name == name)
    assert (table.action, table.first_attempt_failed) == ("created", None)
    assert fake.drops == [name]
    assert fake.writes.count((name, expected(name))) == 1
    assert fake.records[name] == expected(name)
    assert fake.connections == 1


async def test_a_table_that_stays_leaderless_is_named_with_the_last_answer(
    fake: FakeCluster,
) -> None:
    name = "demo.daily_sales"
    fake.leaderless[name] = 99
    with pytest.raises(SeedError) as caught:
        await seed.seed_demo("x:1")
    text = str(caught.value)
    assert caught.value.table == name
    assert "some buckets had no leader: partition 2024-06-01: No leader found" in text
    assert "(twice: the table was created anew)" in text


async def test_a_leaderless_table_the_seed_did_not_create_is_never_dropped(
    fake: FakeCluster,
) -> None:
    """A table that was there before the seed may hold someone's rows: named, not dropped."""
    name = "demo.daily_sales"
    fake.records[name] = expected(name)
    fake.no_leader_now.add(name)
    with pytest.raises(SeedError) as caught:
        await seed.seed_demo("x:1")
    assert caught.value.table == name
    assert "no leader: partition 2024-06-01: No leader found" in str(caught.value)
    assert fake.drops == []


class FakeLocal:
    """What seed_local asks of a LocalCluster: the active coordinator, stop and start."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    def active_coordinator(self) -> int | None:
        return 1

    def stop_server(self, role: str, sid: int, timeout: float = 60.0) -> None:
        self.calls.append(("stop", role, sid))

    def start_server(self, role: str, sid: int, ready_timeout: float = 90.0) -> None:
        self.calls.append(("start", role, sid))


async def test_a_poisoned_coordinator_is_restarted_once_and_the_seed_run_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 40: after a partition was created on a table the 0.9.1 coordinator had missed,
    no new table got a leader; only a restarted coordinator (which loads every table from
    ZooKeeper) elects them. seed_local restarts it and seeds again."""
    from konsole.localcluster import seed_local

    report = seed.SeedReport("x:1", ())
    runs: list[str] = []

    async def seed_demo(bootstrap: str, **kw: Any) -> seed.SeedReport:
        runs.append(bootstrap)
        if len(runs) == 1:
            raise SeedError("demo.daily_sales", "some buckets had no leader", leaderless=True)
        return report

    monkeypatch.setattr(seed_local, "seed_demo", seed_demo)
    lc = FakeLocal()
    said: list[str] = []
    got = await seed_local.seed_local(lc, "x:1", say=said.append, replication_factor=3)  # type: ignore[arg-type]
    assert got is report and runs == ["x:1", "x:1"]
    assert lc.calls == [("stop", "coordinator", 1), ("start", "coordinator", 1)]
    assert said[-1] == "coordinator 1 restarted"


async def test_any_other_seed_failure_is_raised_without_a_restart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from konsole.localcluster import seed_local

    async def seed_demo(bootstrap: str, **kw: Any) -> seed.SeedReport:
        raise SeedError("demo.daily_sales", "writing 40 rows did not finish within 60 s")

    monkeypatch.setattr(seed_local, "seed_demo", seed_demo)
    lc = FakeLocal()
    with pytest.raises(SeedError):
        await seed_local.seed_local(lc, "x:1", say=lambda _: None)  # type: ignore[arg-type]
    assert lc.calls == []


async def test_leaderless_survives_the_retry_and_the_report_of_what_was_done(
    fake: FakeCluster,
) -> None:
    fake.leaderless["demo.daily_sales"] = 99
    with pytest.raises(SeedError) as caught:
        await seed.seed_demo("x:1")
    assert caught.value.leaderless and caught.value.done

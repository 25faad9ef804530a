"""pyfluss (the official client) against the session cluster: our data path is real.

Also checks the demo seed, which every later screen depends on for content.
"""

from __future__ import annotations

from typing import Any

from konsole.localcluster.seed import DEMO_TABLES, seed_demo
from tests._testutil import pyfluss_data as pf

ROWS = 1_000


async def test_pk_and_log_tables_round_trip_1000_rows(bootstrap: str) -> None:
    conn = await pf.connect(bootstrap)
    db = pf.unique_name("roundtrip")
    admin = conn.get_admin()
    try:
        await pf.create_database(admin, db)
        log_path = await pf.create_log_table(conn, db, "events", buckets=3, replication_factor=3)
        pk_path = await pf.create_pk_table(conn, db, "profiles", buckets=3, replication_factor=3)

        written_log = await pf.write_rows(conn, log_path, ROWS)
        written_pk = await pf.write_rows(conn, pk_path, ROWS)
        assert len(written_log) == len(written_pk) == ROWS

        read_log = await pf.read_all_log(conn, log_path, expected=ROWS, timeout_s=60)
        assert sorted(read_log, key=lambda r: r["id"]) == written_log

        offsets = await pf.latest_offsets(conn, log_path, [0, 1, 2])
        assert sum(offsets.values()) == ROWS and all(v > 0 for v in offsets.values())

        read_pk = await pf.read_pk_rows(conn, pk_path, [r["id"] for r in written_pk])
        assert sorted(read_pk, key=lambda r: r["id"]) == written_pk
    finally:
        await pf.drop_database(admin, db)
        await pf.close_connection(conn)


async def test_demo_seed_writes_every_table_once(bootstrap: str) -> None:
    first = await seed_demo(bootstrap, replication_factor=3)
    names = {t.name for t in first.tables}
    assert names == set(DEMO_TABLES)
    assert {
        "demo.customer_profile",
        "demo.order_events",
        "go_sensor_demo.sensor_info",
        "go_sensor_demo.sensor_readings",
    } <= names
    assert any(t.partitioned for t in first.tables)
    assert any(t.buckets == 8 for t in first.tables)
    assert 2_000 <= first.rows_written <= 10_000
    # Log tables hold exactly what was written (PK tables: changelog, one record per upsert).
    for t in first.tables:
        assert t.log_records == t.rows_written, t

    again = await seed_demo(bootstrap, replication_factor=3)
    assert again.rows_written == 0 and set(again.existing) == names


def test_demo_rows_are_deterministic() -> None:
    from konsole.localcluster.seed import demo_rows

    for name in DEMO_TABLES:
        a: list[dict[str, Any]] = demo_rows(name)
        assert a == demo_rows(name) and a

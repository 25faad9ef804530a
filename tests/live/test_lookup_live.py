"""Lookups, filters and masking against the real cluster (both server generations).

pyfluss (the official client) writes every table and answers the same questions with its
own lookupers and log scanner; konsole must answer exactly as it does:

- key and prefix lookups of present and absent keys, on a composite key whose bucket key
  is a proper prefix, and on a partitioned table (an absent partition too), equal pyfluss's
  lookups; bad keys are one line and exit 65;
- a filtered preview of a log table returns exactly the rows a filter of pyfluss's full
  read keeps; on the 1.0 line, written with ``table.statistics.columns``, the server skips
  batches (> 0 reported); on 0.9.1 (no statistics, no FetchLog filter) the same rows with
  none skipped;
- masked columns appear in no output: stdout in every format, files in every format,
  stderr, and the client's debug log (grepped for the secret values, and the files
  decoded), while the same commands without the masking profile do show them.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import fluss
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
import pytest_asyncio

from fluss_proto.lookup import KeyStatus, lookup_rows
from fluss_proto.records.arrow import to_arrow_type
from fluss_proto.scan import preview_table
from konsole.errors import ExitCode
from tests._testutil import pyfluss_data as pf
from tests._testutil.all_types import World, create_table, world_of, write_rows
from tests._testutil.cli import REPO, run_konsole
from tests.conftest import FlussServer

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(240)]

ORDERS = pa.schema(
    [
        pa.field("region", pa.string(), nullable=False),
        pa.field("cid", pa.int64(), nullable=False),
        pa.field("day", pa.date32(), nullable=False),
        pa.field("at", pa.timestamp("us"), nullable=False),
        pa.field("amount", pa.decimal128(12, 2)),
        pa.field("note", pa.string()),
    ]
)
ORDERS_PK = ["region", "cid", "day", "at"]
BASE = datetime(2024, 6, 1, 8, 0, 0, 123_456)


def order_rows() -> list[dict[str, Any]]:
    return [
        {
            "region": region,
            "cid": cid,
            "day": date(2024, 6, 1 + d),
            "at": BASE + timedelta(seconds=cid * 10 + d, microseconds=cid),
            "amount": (Decimal(cid * 1000 + d) / 100).quantize(Decimal("0.01")),
            "note": None if cid % 5 == 0 else f"{region}-{cid}-{d}",
        }
        for region in ("eu", "us", "ap")
        for cid in range(-3, 9)
        for d in range(2)
    ]


def canon(rows: list[dict[str, Any]]) -> list[str]:
    """Rows as sorted JSON texts (values as text), for comparing without caring for order."""
    out = []
    for r in rows:
        clean = {k: v for k, v in r.items() if not k.startswith("_")}
        for k, v in clean.items():
            if isinstance(v, datetime) and v.tzinfo is not None:
                clean[k] = v.replace(tzinfo=None)
            elif isinstance(v, Decimal):  # pyfluss gives 0 for 0.00: compare the numbers
                clean[k] = str(v.normalize())
        out.append(json.dumps(clean, sort_keys=True, default=str))
    return sorted(out)


def key_text(row: dict[str, Any], columns: list[str]) -> dict[str, str]:
    return {
        c: row[c].isoformat(sep=" ") if isinstance(row[c], datetime) else str(row[c])
        for c in columns
    }


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def world(bootstrap: str) -> AsyncIterator[World]:
    async with world_of(bootstrap, "lookup_live") as w:
        yield w


async def test_lookups_equal_pyfluss_lookups(world: World) -> None:
    path = fluss.TablePath(world.db, "orders")
    await create_table(world.conn, path, ORDERS, pk=ORDERS_PK, bucket_keys=["region", "cid"])
    rows = order_rows()
    await write_rows(world.conn, path, rows)
    absent = [dict(rows[0], cid=99), dict(rows[1], region="zz"), dict(rows[2], at=BASE)]
    wanted = [*rows, *absent]
    table = await asyncio.wait_for(world.conn.get_table(path), 30)
    lookuper = table.new_lookup().create_lookuper()
    theirs = [await lookuper.lookup({c: r[c] for c in ORDERS_PK}) for r in wanted]
    assert sum(t is not None for t in theirs) == len(rows)

    ours = await lookup_rows(
        world.client, f"{world.db}.orders", [key_text(r, ORDERS_PK) for r in wanted]
    )
    report = ours.report
    assert report.complete and report.found == len(rows) and report.absent == len(absent)
    assert [k.status is KeyStatus.FOUND for k in report.keys] == [t is not None for t in theirs]
    assert canon(ours.rows.to_pylist()) == canon([t for t in theirs if t is not None])
    # one request per leader, however many keys
    leaders = {k.leader_id for k in report.keys}
    assert report.requests == len(leaders) and set(report.versions.values()) == {1}

    prefix = table.new_lookup().lookup_by(["region", "cid"]).create_lookuper()
    prefixes = [{"region": "eu", "cid": 4}, {"region": "us", "cid": -3}, {"region": "zz", "cid": 1}]
    their_rows = [r for p in prefixes for r in await prefix.lookup(p)]
    assert len(their_rows) == 4
    for light in (False, True):  # as pyarrow, and as konsole's light rows
        found = await lookup_rows(
            world.client,
            f"{world.db}.orders",
            [{k: str(v) for k, v in p.items()} for p in prefixes],
            prefix=True,
            light=light,
        )
        assert [k.rows for k in found.report.keys] == [2, 2, 0]
        # row by row, every column
        assert canon(row_dicts(found.rows)) == canon(their_rows), f"light={light}"


def row_dicts(rows: Any) -> list[dict[str, Any]]:
    """A pyarrow table's or konsole's light rows' rows, as dicts by column name (light
    values are in their Arrow unit, e.g. days for a DATE: read back through that type)."""
    if isinstance(rows, pa.Table):
        return list(rows.to_pylist())
    columns = [
        pa.array(values, type=to_arrow_type(dt)).to_pylist()
        for values, dt in zip(rows.columns, rows.schema.types, strict=True)
    ]
    return [dict(zip(rows.schema.names, v, strict=True)) for v in zip(*columns, strict=True)]


async def test_partitioned_lookups_equal_pyfluss_lookups(world: World) -> None:
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("region", pa.string(), nullable=False),
            pa.field("v", pa.float64()),
        ]
    )
    path = fluss.TablePath(world.db, "parted_pk")
    await create_table(
        world.conn,
        path,
        schema,
        pk=["id", "region"],
        buckets=2,
        partition_keys=["region"],
        partitions=("eu", "us"),
    )
    rows = [{"id": i, "region": "eu" if i % 2 else "us", "v": i / 3} for i in range(-40, 40)]
    await write_rows(world.conn, path, rows)
    wanted = [*rows, {"id": 7, "region": "us"}, {"id": 1, "region": "nowhere"}]
    table = await asyncio.wait_for(world.conn.get_table(path), 30)
    lookuper = table.new_lookup().create_lookuper()
    theirs = [await lookuper.lookup({"id": r["id"], "region": r["region"]}) for r in wanted]
    ours = await lookup_rows(
        world.client,
        f"{world.db}.parted_pk",
        [{"id": str(r["id"]), "region": r["region"]} for r in wanted],
    )
    statuses = [k.status for k in ours.report.keys]
    assert statuses[-1] is KeyStatus.NO_PARTITION and statuses[-2] is KeyStatus.ABSENT
    assert [s is KeyStatus.FOUND for s in statuses] == [t is not None for t in theirs]
    assert canon(ours.rows.to_pylist()) == canon([t for t in theirs if t is not None])


@pytest.mark.parametrize(
    ("keys", "says"),
    [
        (["id=1"], "not a lookup column"),
        (["region=eu,cid=x,day=2024-06-01,at=2024-06-01 08:00:00"], "not an integer"),
        (["region=eu,cid=1,day=2024-06-01"], "missing lookup column"),
        (["region=eu,cid=1,day=2024-06-31,at=2024-06-01 08:00"], "day is out of range"),
        (["region=eu,cid=1,day=2024-06-01,at=2024-06-01 08:00:00.0000001"], "finer"),
        (["region=eu"], "missing"),
    ],
)
async def test_bad_keys_are_one_line_and_exit_65(world: World, keys: list[str], says: str) -> None:
    res = await asyncio.to_thread(
        run_konsole, "lookup", f"{world.db}.orders", *keys, "--bootstrap", world.bootstrap
    )
    assert res.returncode == ExitCode.DATA_ERROR, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("konsole: error: ") and says in lines[0], lines
    assert res.stdout == ""


async def test_a_prefix_the_table_does_not_allow_is_exit_65(world: World) -> None:
    res = await asyncio.to_thread(
        run_konsole,
        "lookup",
        f"{world.db}.parted_pk",
        "id=1,region=eu",
        "--prefix",
        "--bootstrap",
        world.bootstrap,
    )
    assert res.returncode == ExitCode.DATA_ERROR and "prefix" in res.stderr


# ---------------------------------------------------------------------------- filters

FILTER = "amount > 5000 AND name IN ('row-000050', 'row-001234', 'row-001999') OR id >= 1990"


def keeps(row: dict[str, Any]) -> bool:
    """FILTER, written out in Python over pyfluss's rows."""
    named = row["name"] in ("row-000050", "row-001234", "row-001999")
    return (row["amount"] > 5000 and named) or row["id"] >= 1990


async def test_a_filtered_preview_keeps_exactly_the_client_side_rows(
    world: World, fluss_server: FlussServer
) -> None:
    path = fluss.TablePath(world.db, "events")
    await create_table(world.conn, path, pf.FIXED_SCHEMA, buckets=2, stats=fluss_server.is_1_0)
    table = await world.conn.table_for_writing(path, 30)
    writer = table.new_append().create_writer()
    for start in range(0, 2000, 100):  # 20 flushes: many small batches per bucket
        writer.write_arrow(
            pa.Table.from_pylist(pf.expected_rows(100, start=start), pf.FIXED_SCHEMA)
        )
        async with asyncio.timeout(30):
            await writer.flush()
    every = await pf.read_all_log(world.conn, path, expected=2000, timeout_s=60)
    assert len(every) == 2000
    expected = sorted(r["id"] for r in every if keeps(r))
    assert len(expected) >= 10

    result = await preview_table(world.client, f"{world.db}.events", limit=1000, where=FILTER)
    report = result.report
    assert sorted(result.table.column("id").to_pylist()) == expected
    assert report.complete and report.rows_read == len(expected)
    assert report.rows_scanned >= len(expected)
    if fluss_server.is_1_0:
        assert report.filter_pushed is not None
        assert report.server_skipped_runs > 0 and report.rows_scanned < 2000
    else:
        assert report.filter_pushed is None and "1.0 line" in (report.filter_note or "")
        assert report.server_skipped_runs == 0 and report.rows_scanned == 2000

    res = await asyncio.to_thread(
        run_konsole,
        "preview",
        f"{world.db}.events",
        "--where",
        FILTER,
        "--format",
        "jsonl",
        "--limit",
        "1000",
        "--bootstrap",
        world.bootstrap,
    )
    assert res.returncode == 0, res.stderr
    assert sorted(json.loads(line)["id"] for line in res.stdout.splitlines()) == expected
    assert f"{len(expected)} matched" in res.stderr


# ---------------------------------------------------------------------------- masking

SECRETS = ("S3CRET-4111-1111", "S3CRET-5500-0000", "S3CRET-3400-0000")
FORMATS_OUT = ("table", "csv", "json", "jsonl")
FILES = ("x.csv", "x.json", "x.jsonl", "x.parquet", "x.arrow")


def _debug_run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``konsole ARGS`` with every logger at DEBUG on stderr (what a log would hold)."""
    code = (
        "import logging, sys; logging.basicConfig(level=logging.DEBUG, stream=sys.stderr); "
        "from konsole.cli.main import main; sys.exit(main())"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _decoded(path: Path) -> str:
    if path.suffix == ".parquet":
        return json.dumps(pq.read_table(path).to_pylist(), default=str)
    if path.suffix == ".arrow":
        return json.dumps(ipc.open_file(path).read_all().to_pylist(), default=str)
    return path.read_text()


async def test_masked_columns_never_reach_any_output(world: World, tmp_path: Path) -> None:
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("holder", pa.string()),
            pa.field("card", pa.string()),
        ]
    )
    path = fluss.TablePath(world.db, "cards")
    await create_table(world.conn, path, schema, pk=["id"], buckets=2)
    await write_rows(
        world.conn,
        path,
        [{"id": i, "holder": f"holder {i}", "card": s} for i, s in enumerate(SECRETS)],
    )
    config = tmp_path / "config.toml"
    config.write_text(
        f'[profiles.masked]\nbootstrap = "{world.bootstrap}"\nmask = ["{world.db}.cards.card"]\n'
    )
    env = {"KONSOLE_CONFIG": str(config), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    table = f"{world.db}.cards"
    runs: list[tuple[list[str], Path | None]] = []
    for fmt in FORMATS_OUT:
        runs.append((["preview", table, "--format", fmt], None))
        runs.append((["lookup", table, "id=0", "id=1", "id=2", "--format", fmt], None))
    for name in FILES:
        runs.append((["preview", table, "-o", name], tmp_path / name))
        runs.append((["lookup", table, "id=0", "id=2", "-o", f"l{name}"], tmp_path / f"l{name}"))
    runs.append((["preview", table, "--where", "id >= 0", "--tail"], None))

    def run_one(args: list[str], out: Path | None, extra: list[str]) -> list[str]:
        if out is not None and out.exists():
            out.unlink()
        # The subject is masking, not time: four processes at once on a loaded machine may
        # not finish in the default 10 s (r16 on 0.9.1: a preview exited 2).
        res = _debug_run([*args, *extra, "--timeout", "60"], env, tmp_path)
        said = [line for line in res.stderr.splitlines() if not line.startswith("DEBUG:")]
        assert res.returncode == 0, "\n".join([repr(args), *said[-30:]])
        seen = [res.stdout, res.stderr]
        if out is not None:
            seen += [out.read_bytes().decode("latin-1"), _decoded(out)]
        return seen

    def run_all(extra: list[str]) -> list[str]:
        with ThreadPoolExecutor(4) as pool:  # processes: the module's time stays small
            done = pool.map(lambda r: run_one(r[0], r[1], extra), runs)
            return [text for seen in done for text in seen]

    # the same commands without the profile show the values: the grep below can fail
    plain = "\n".join(run_all(["--bootstrap", world.bootstrap]))
    assert all(s in plain for s in SECRETS)
    masked = run_all(["--profile", "masked"])
    for text in masked:
        for secret in SECRETS:
            assert secret not in text
            assert secret.encode().hex() not in text
    joined = "\n".join(masked)
    assert "****" in joined and "holder 1" in joined  # unmasked columns still shown
    res = await asyncio.to_thread(
        run_konsole, "preview", table, "--where", "card = 'x'", "--profile", "masked", env=env
    )
    assert res.returncode == ExitCode.NO_PERMISSION and "cannot be filtered on" in res.stderr

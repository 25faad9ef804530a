"""Fakes of the console's table reads (no cluster): a customers table whose rows hold
given values, its lookups and its filtered scans, for the Preview screen's tests.

``shop.customers`` is the story's primary-key table (``id`` BIGINT, ``name`` STRING,
``city`` STRING; 3 buckets). :func:`customers` builds its rows from a list of
``(id, name, city)``; :func:`lookup_fake` answers a key lookup on them the way the real
lookup does (found or absent, one row per key); :func:`scan_fake` answers every scan with
them, filtered by a tiny ``column = 'value'`` / ``column > n`` check when asked, and reports
the filter's counts as a pushed-down 1.0 read would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from fluss_proto.lookup import KeyResult, KeyStatus, LookupReport
from fluss_proto.scan import BucketScan, BucketStatus, Preview, ScanMethod, ScanReport
from fluss_proto.types.info import TableInfo
from fluss_proto.types.parsing import parse_table_descriptor
from konsole.collect.cluster.table_reads import LookupRequest, LookupRows, PreviewRequest
from konsole.collect.profiles import Profile
from konsole.model.masking import MaskRules
from tests._testutil.console import _COLUMNS, _TABLES

__all__ = ["composite_info", "customers", "lookup_fake", "masked_profile", "scan_fake"]

Row = tuple[int, str | None, str | None]

INFO = _TABLES["shop.customers"]


def _table(rows: Sequence[Row]) -> pa.Table:
    fields = [
        pa.field("id", pa.int64()).with_metadata({b"fluss.type": b"BIGINT NOT NULL"}),
        pa.field("name", pa.string()).with_metadata({b"fluss.type": b"STRING"}),
        pa.field("city", pa.string()).with_metadata({b"fluss.type": b"STRING"}),
    ]
    arrays = [pa.array([r[i] for r in rows], f.type) for i, f in enumerate(fields)]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def customers(rows: Sequence[Row], *, where: str | None = None, scanned: int = 0) -> Preview:
    """A SCAN_KV preview of ``shop.customers`` holding ``rows`` (with ``_bucket``)."""
    table = _table(rows)
    table = table.append_column(
        pa.field("_bucket", pa.int32(), False), pa.array([r[0] % 3 for r in rows], pa.int32())
    )
    buckets = tuple(
        BucketScan(
            partition_id=None,
            partition_name=None,
            bucket_id=b,
            leader_id=b + 1,
            method=ScanMethod.SCAN_KV,
            status=BucketStatus.SCANNED,
            rows_read=sum(1 for r in rows if r[0] % 3 == b),
            rows_returned=sum(1 for r in rows if r[0] % 3 == b),
            requests=1,
            elapsed_s=0.01,
            skipped_runs=2 if where is not None else 0,
            skipped_offsets=40 if where is not None else 0,
        )
        for b in range(3)
    )
    report = ScanReport(
        table_path="shop.customers",
        table_id=INFO.table_id,
        primary_key=True,
        tail=False,
        limit=2000,
        buckets=buckets,
        rows_returned=len(rows),
        rows_read=len(rows),
        limit_cut=False,
        elapsed_s=0.05,
        deadline_s=10.0,
        schema_ids=(1,),
        schema_id=1,
        filter=where,
        rows_scanned=scanned or len(rows),
        filter_pushed=where,
    )
    return Preview(table=table, report=report, info=INFO)


def _matches(row: Row, where: str) -> bool:
    """``col = 'v'`` or ``id > n`` (all these fakes are asked)."""
    names = ("id", "name", "city")
    if ">" in where:
        col, _, n = where.partition(">")
        return int(row[names.index(col.strip())] or 0) > int(n)
    col, _, value = where.partition("=")
    return row[names.index(col.strip())] == value.strip().strip("'")


def scan_fake(rows: Sequence[Row], requests: list[PreviewRequest] | None = None) -> Any:
    """A feed's scan: ``rows`` (filtered as the request asks)."""

    async def scan(request: PreviewRequest) -> Preview:
        if requests is not None:
            requests.append(request)
        if request.where is None:
            return customers(rows)
        kept = [r for r in rows if _matches(r, request.where)]
        return customers(kept, where=request.where, scanned=len(rows))

    return scan


def lookup_fake(rows: Sequence[Row], requests: list[LookupRequest] | None = None) -> Any:
    """A feed's lookup: the row whose ``id`` is the key's, if any."""

    async def lookup(request: LookupRequest) -> LookupRows:
        if requests is not None:
            requests.append(request)
        key = int(dict(request.key)["id"])
        found = [r for r in rows if r[0] == key]
        status = KeyStatus.FOUND if found else KeyStatus.ABSENT
        report = LookupReport(
            table_path="shop.customers",
            table_id=INFO.table_id,
            prefix=request.prefix,
            keys=(KeyResult(0, status, len(found), key % 3, None, key % 3 + 1),),
            requests=1,
            versions={key % 3 + 1: 0},
            elapsed_s=0.01,
        )
        return LookupRows(_table(found), report, INFO, request)

    return lookup


def masked_profile(*patterns: str, export: bool = True) -> Profile:
    return Profile(
        name="demo",
        source="profile",
        bootstrap=("127.0.0.1:9123",),
        masks=MaskRules(tuple(patterns)),
        export=export,
    )


def composite_info() -> TableInfo:
    """``shop.orders_pk``: primary key (region, id), bucket key region (prefix lookups)."""
    columns = [("region", "STRING"), ("id", "BIGINT"), ("amount", "DECIMAL")]
    doc = {
        "version": 1,
        "schema": {
            "version": 1,
            "columns": [
                {"name": c, "data_type": dict(_COLUMNS[t]), "id": i}
                for i, (c, t) in enumerate(columns)
            ],
            "primary_key": ["region", "id"],
        },
        "partition_key": [],
        "bucket_key": ["region"],
        "bucket_count": 3,
        "properties": {"table.replication.factor": "3"},
        "custom_properties": {},
    }
    return TableInfo.from_descriptor(
        "shop",
        "orders_pk",
        table_id=31,
        schema_id=1,
        descriptor=parse_table_descriptor(doc),
        created_ms=0,
        modified_ms=0,
    )

"""A light preview stream (no pyarrow) gives the rows of the Arrow stream, written to the
same bytes: every scan mode of the fake scan cluster, schema evolution, change types,
ZSTD and LZ4 bodies, partitions, both orders. (That a light preview imports no pyarrow is
pinned by tests/unit/test_startup_imports.py, on a real preview process.)"""

from __future__ import annotations

import io
from typing import Any

import pytest

from fluss_proto.scan import stream_preview
from fluss_proto.scan.rows import Rows
from konsole.export.stream import make_writer
from tests._testutil.scan import FakeScanCluster, kv_cluster

pytestmark = pytest.mark.timeout(30)


async def _write(fake: Any, fmt: str, light: bool, **kw: Any) -> tuple[bytes, Any]:
    out = io.BytesIO()
    async with stream_preview(fake, "db.t", light=light, **kw) as stream:
        assert stream.light is light
        types = {c.name: c.type for c in stream.info.schema.columns}
        writer = make_writer(fmt, out, stream.schema, table=stream.table_path, types=types)
        async for chunk in stream:
            assert isinstance(chunk, Rows) is light
            writer.write(chunk)
    writer.finish(stream.report)
    return out.getvalue(), stream.report


def _kv_evolved() -> FakeScanCluster:
    fake = kv_cluster(schema_id=2)
    fake.put_rows((None, 1), [150, 151], schema_id=2)
    return fake


def _log(compression: str | None = None, *, changes: bool = False, **kw: Any) -> FakeScanCluster:
    fake = FakeScanCluster(pk=False, **kw)
    fake.log_compression = compression
    for key in fake.data:
        b = key[1]
        fake.append_log(key, [b * 100 + i for i in range(6)])
        kinds = [1, 2, 3, 4, 1, 1] if changes else None
        fake.append_log(key, [b * 100 + i for i in range(6, 12)], change_types=kinds)
    return fake


CASES = {
    "kv": (kv_cluster, {}),
    "kv-no-scan-kv": (lambda: kv_cluster(scan_kv_nodes=set()), {}),
    "kv-evolved": (_kv_evolved, {}),
    "kv-streamed": (kv_cluster, {"fair_share_rows": 0, "limit": 25}),
    "log": (_log, {}),
    "log-zstd": (lambda: _log("zstd", changes=True), {}),
    "log-lz4": (lambda: _log("lz4"), {}),
    "log-tail": (lambda: _log("zstd"), {"tail": True}),
    "log-streamed": (_log, {"fair_share_rows": 0, "limit": 20}),
    "log-arrival": (lambda: _log(), {"order": "arrival", "limit": 5}),
    "log-partitioned": (lambda: _log(partitions={7: "2024", 8: "2025"}), {}),
}


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "table", "json"])
@pytest.mark.parametrize("case", list(CASES))
async def test_a_light_stream_writes_the_bytes_of_the_arrow_stream(case: str, fmt: str) -> None:
    make, kw = CASES[case]
    arrow, arrow_report = await _write(make(), fmt, False, **kw)
    light, light_report = await _write(make(), fmt, True, **kw)
    assert light_report.rows_returned == arrow_report.rows_returned > 0
    if fmt == "json":  # the report at the end holds timings
        arrow, light = arrow.split(b', "report": ')[0], light.split(b', "report": ')[0]
    if kw.get("order") == "arrival":  # which bucket comes first is not stable
        arrow, light = b"".join(sorted(arrow.splitlines())), b"".join(sorted(light.splitlines()))
    assert light.decode() == arrow.decode()

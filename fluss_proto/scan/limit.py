"""LimitScan: one request per bucket (a value batch for primary-key tables on 0.9.1, the
last log batches for log tables)."""

from __future__ import annotations

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto._replies import body_error, needs_refresh
from fluss_proto.api_keys import ApiKey
from fluss_proto.errors import FlussError
from fluss_proto.scan.run import PreviewRun
from fluss_proto.scan.runner import BucketState


async def limit_scan(run: PreviewRun, st: BucketState) -> None:
    assert run.info is not None
    for _ in range(2):  # a second try only after a leader refresh
        node = await run.leader_of(st)
        req = pb.LimitScanRequest(
            table_id=run.info.table_id, bucket_id=st.bucket_id, limit=run.where.cap(run.limit)
        )
        if st.partition_id is not None:
            req.partition_id = st.partition_id
        try:
            resp = await run.call(st, ApiKey.LIMIT_SCAN, req, node)
            err = body_error(resp, ApiKey.LIMIT_SCAN, run.server(node))
        except FlussError as exc:
            err = exc
            resp = None
        if err is not None:
            if needs_refresh(err) and await run.move_leader(st):
                continue
            raise err
        assert resp is not None
        records = resp.records if resp.HasField("records") else b""
        is_log = resp.is_log_table if resp.HasField("is_log_table") else not run.info.is_pk_table
        if is_log:
            st.keep_last = True
            table, _, _ = await run.decode_log(records, st, node)
            if table.num_rows > run.limit:
                table = table.slice(table.num_rows - run.limit)
            await run.deliver(st, table)
        else:
            await run.receive_values(records, st)
        st.limit_reached = st.rows >= run.limit or st.scanned >= run.where.cap(run.limit)
        st.done_reading()
        return

"""ScanKv sessions (Fluss 1.0) for primary-key tables, with LimitScan as the fallback."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Literal

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto._replies import body_error, needs_refresh
from fluss_proto.api_keys import ApiKey
from fluss_proto.error_codes import (
    ScannerExpiredError,
    TooManyScannersError,
    UnknownScannerIdError,
)
from fluss_proto.errors import (
    FlussError,
    UnsupportedByServerError,
)
from fluss_proto.records.errors import CorruptBatchError
from fluss_proto.scan.constants import (
    CLOSE_TIMEOUT_S,
    KV_OPEN_BACKOFF_S,
    KV_OPEN_RETRIES,
)
from fluss_proto.scan.limit import limit_scan
from fluss_proto.scan.report import ScanMethod
from fluss_proto.scan.run import PreviewRun
from fluss_proto.scan.runner import BucketState


async def scan_kv(run: PreviewRun, st: BucketState) -> None:
    """One bucket through ScanKv sessions; falls back to LimitScan when not offered."""
    assert run.info is not None
    busy_retries = 0
    for _ in range(2 + KV_OPEN_RETRIES + 1):  # reopen (expiry), busy retries, refresh
        node = await run.leader_of(st)
        if run.offers_scan_kv(node) is False:
            st.method = ScanMethod.LIMIT_SCAN
            await limit_scan(run, st)
            return
        async with run.kv_slots[node]:
            outcome = await _kv_session(run, st, node)
        if outcome == "done":
            return
        if outcome == "unsupported":
            st.method = ScanMethod.LIMIT_SCAN
            await limit_scan(run, st)
            return
        if outcome == "busy":
            if busy_retries >= KV_OPEN_RETRIES:
                raise st.error or TooManyScannersError("too many scanners")
            delay = KV_OPEN_BACKOFF_S * 2**busy_retries
            busy_retries += 1
            if run.deadline.remaining() <= delay:
                raise st.error or TooManyScannersError("too many scanners")
            st.error = None
            await asyncio.sleep(delay)
        # "expired" and "moved" loop to open a new session
    raise FlussError(f"{st.label}: gave up reopening the ScanKv session")  # pragma: no cover


async def _kv_session(
    run: PreviewRun, st: BucketState, node: int
) -> Literal["done", "unsupported", "busy", "expired", "moved"]:
    assert run.info is not None
    open_req = pb.PbScanReqForBucket(
        table_id=run.info.table_id, bucket_id=st.bucket_id, limit=run.where.cap(run.limit)
    )
    if st.partition_id is not None:
        open_req.partition_id = st.partition_id
    req = pb.ScanKvRequest(
        bucket_scan_req=open_req, call_seq_id=0, batch_size_bytes=run.batch_size_bytes
    )
    scanner_id: bytes | None = None
    drained = False
    server = run.server(node)
    try:
        pages = run.where.cap(run.limit) + 2
        for seq in range(pages):  # every page carries at least one row
            if seq > 0:
                assert scanner_id is not None
                req = pb.ScanKvRequest(
                    scanner_id=scanner_id,
                    call_seq_id=seq,
                    batch_size_bytes=run.batch_size_bytes,
                )
            try:
                resp = await run.call(st, ApiKey.SCAN_KV, req, node)
            except UnsupportedByServerError:
                if seq == 0:
                    st.requests -= 1  # refused before anything was sent
                    return "unsupported"
                raise
            except FlussError as exc:
                if seq == 0 and needs_refresh(exc) and await run.move_leader(st):
                    return "moved"
                raise
            err = body_error(resp, ApiKey.SCAN_KV, server)
            if err is not None:
                if isinstance(err, (ScannerExpiredError, UnknownScannerIdError)):
                    scanner_id = None  # the server has dropped the session already
                    if st.reopened or st.streamed:  # streamed rows cannot be taken back
                        raise err
                    st.reopened = True
                    st.discard_rows()
                    return "expired"
                if isinstance(err, TooManyScannersError) and scanner_id is None:
                    st.error = err
                    return "busy"
                if seq == 0 and needs_refresh(err) and await run.move_leader(st):
                    return "moved"
                raise err
            if resp.HasField("scanner_id"):
                scanner_id = resp.scanner_id
            if resp.HasField("records"):
                await run.receive_values(resp.records, st)
            if not resp.has_more_results:
                drained = True
                st.limit_reached = st.rows >= run.limit or st.scanned >= run.where.cap(run.limit)
                st.done_reading()
                return "done"
            if scanner_id is None:
                raise CorruptBatchError(
                    "ScanKv reply has more results but no scanner id", bucket=st.label
                )
            if st.rows >= run.limit or st.scanned >= run.where.cap(run.limit):
                st.limit_reached = True
                st.done_reading()
                return "done"  # the finally block closes the session
        raise FlussError(f"{st.label}: ScanKv did not finish within {pages} pages")
    finally:
        if scanner_id is not None and not drained:
            close_kv(run, st, node, scanner_id)


def close_kv(run: PreviewRun, st: BucketState, node: int, scanner_id: bytes) -> None:
    """Best-effort close_scanner, in the background (also from a cancelled worker)."""
    st.sessions_closed += 1
    req = pb.ScanKvRequest(
        scanner_id=scanner_id, batch_size_bytes=run.batch_size_bytes, close_scanner=True
    )

    async def close() -> None:
        with contextlib.suppress(Exception):
            await run.client.call(ApiKey.SCAN_KV, req, node=node, timeout=CLOSE_TIMEOUT_S)

    run.closers.add(asyncio.ensure_future(close()))


async def wait_closers(run: PreviewRun) -> None:
    pending = {t for t in run.closers if not t.done()}
    if pending:
        _, still = await asyncio.wait(pending, timeout=CLOSE_TIMEOUT_S)
        for t in still:
            t.cancel()

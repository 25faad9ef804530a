"""Table previews through server-side scans: ScanKv sessions, LimitScan, and a FetchLog tail.

:func:`preview_table` reads up to ``limit`` rows of one table and returns a :class:`Preview`:
a ``pyarrow.Table`` with the table's own Arrow types (Fluss's ``ArrowUtils`` mapping: decimals
stay ``decimal128``, timestamps keep their unit, TIMESTAMP_LTZ has no time zone, as Fluss
writes it) plus added columns, and a :class:`ScanReport` saying, bucket by bucket, what was
read, how, and what went wrong.

Methods, chosen per bucket:

- **ScanKv** (Fluss 1.0) for primary-key tables when the bucket leader advertises SCAN_KV:
  a session opened with ``call_seq_id`` 0 and the row limit, paged with a bounded
  ``batch_size_bytes`` (``call_seq_id`` 1, 2, ...), one request in flight per session. The
  session is closed (``close_scanner``) when we stop early: enough rows, an error, the
  deadline, cancellation; never after ``has_more_results=false`` (the server has already
  dropped it). SCANNER_EXPIRED (66) / UNKNOWN_SCANNER_ID (67) restart the scan once from
  scratch (rows of the dead session are discarded: a new session is a new snapshot).
  TOO_MANY_SCANNERS (69) on open is retried twice after 100 / 200 ms (Fluss's own client
  retries three times), then reported for that bucket. Run live on a 1.0-line server
  (all types, after upserts and deletes, against pyfluss lookups); the retry and expiry
  paths only against a fake server.
- **LimitScan** otherwise: primary-key tables on 0.9.1 get one value batch of up to
  ``limit`` rows in key order; log tables get the log batches from
  ``max(log start, high watermark - limit)`` on, of which the last ``limit`` rows are kept
  (the first batch may start earlier, as Fluss's ``LimitBatchScanner`` also handles).
- **FetchLog tail** with ``tail=True`` (log tables, and the changelog of primary-key tables):
  ListOffsets LATEST and EARLIEST to each leader (grouped per leader), then FetchLog from
  ``max(earliest, latest - limit)`` up to ``latest`` (rows appended after the ListOffsets
  are left out), one request per leader carrying all its buckets, bounded ``max_bytes``.
  Rows before the fetch offset (the server starts at the batch *containing* it) are
  dropped; after an incomplete trailing batch the next request resumes from the last
  complete batch (a bucket that made no progress gets a larger byte budget and goes first,
  since only the first bucket of a request may exceed its budget); ``log_start_offset`` in
  the reply is ignored (always 0 on the server) in favour of ListOffsets EARLIEST. A reply
  with ``remote_log_fetch_info`` means the rows are in remote storage, which a pure-RPC
  client cannot read: the bucket is reported ``in remote storage`` (never "no data") and
  the fetch continues locally after the last remote segment's end offset (exclusive: it is
  the next segment's base offset in ``LogTieringTask``).

- **FetchLog, filtered** (``where=``, log tables): the whole log, from ListOffsets EARLIEST
  to LATEST per bucket, the first ``limit`` matches kept (with ``tail``, the last); on the
  1.0 line FetchLog carries the filter (``filter_predicate``) so that the server leaves out
  batches whose statistics rule them out, and its ``filtered_end_offset`` is followed. Every
  read filters the rows exactly on our side (:mod:`fluss_proto.filter`); key scans with a
  filter read on (up to ``FILTERED_SCAN_ROWS`` per bucket) until ``limit`` rows match. The
  report counts rows scanned and matched, and the runs of batches the server skipped.

Buckets are scanned concurrently (every bucket's requests are sent at once; LimitScan and
ScanKv are per bucket, FetchLog and ListOffsets one request per leader), under one overall
deadline. A bucket still running at the deadline is reported *timed out* (never empty) and
keeps the rows it had; the rest of the preview is returned. A bucket whose leader moved
(12, 21, 44, lost connection) is retried once after one shared metadata refresh.

Rows are decoded with the schema of their own ``schema_id`` (GetTableSchema, cached per id)
and mapped onto the table's latest schema by column id (by name when the server sends no
column ids): a column added later reads as NULL, a dropped one is left out, as Fluss's
``SchemaUtil.getIndexMapping`` does. Row formats come from TableInfo (``table.kv.format``,
``table.log.format``); a log batch whose records area holds an Arrow message is decoded as
Arrow whatever the table says (some writers append Arrow batches to INDEXED tables).

Added columns: ``_bucket`` (int32) always; ``_partition`` (string) on partitioned tables;
``_offset`` (int64) and ``_change_type`` (``+A``, ``+I``, ``-U``, ``+U``, ``-D``) for rows
read from a log (LimitScan on log tables, FetchLog). Each data field carries its Fluss type
in the field metadata key ``fluss.type`` (e.g. ``TIMESTAMP_LTZ(3)``).

``limit`` bounds the whole preview. Every bucket is asked for up to ``limit`` rows, then the
rows are shared out fairly across buckets (round-robin quotas); key scans keep each bucket's
first rows, log reads its last ones. Value batches (ScanKv, LimitScan on PK tables) are split
into records on arrival but only the rows shown are decoded (``RowDecoder.decode_table``: the
vectorised CompactedRow path of :mod:`fluss_proto.records.columnar`). At most
``KV_SESSIONS_PER_LEADER`` ScanKv sessions are open per leader at a time.

:func:`stream_preview` runs the same scans but hands the rows out in ``pyarrow.Table``
chunks as they are read (bucket order or arrival order), holding a few pages per bucket
instead of the whole result (see :mod:`fluss_proto.scan.stream`).

Partitioned tables: one partition by name (``a$b`` or ``k=a/k2=b``) or id, or ``"all"`` (also
the default), bounded by ``max_partitions`` (the newest partitions by id; the others are
named in the report).
"""

from __future__ import annotations

from fluss_proto.errors import PreviewArgumentError, SchemaMismatchError
from fluss_proto.scan.constants import (
    BUCKET_COLUMN,
    CHANGE_TYPE_COLUMN,
    DEFAULT_FETCH_MAX_BYTES,
    DEFAULT_FETCH_MAX_BYTES_PER_BUCKET,
    DEFAULT_KV_BATCH_BYTES,
    FLUSS_TYPE_KEY,
    KV_SESSIONS_PER_LEADER,
    MAX_FETCH_BYTES_PER_BUCKET,
    OFFSET_COLUMN,
    PARTITION_COLUMN,
)
from fluss_proto.scan.preview import preview_table
from fluss_proto.scan.report import (
    BucketScan,
    BucketStatus,
    Preview,
    ScanMethod,
    ScanReport,
)
from fluss_proto.scan.run import ScanClient
from fluss_proto.scan.runner import fair_quota
from fluss_proto.scan.stream import (
    DEFAULT_STREAM_CAPACITY,
    FAIR_SHARE_ROWS,
    PreviewStream,
    StreamOrder,
    stream_preview,
)

# Older private name, used by the tests of the quota arithmetic.
_fair_quota = fair_quota

__all__ = [
    "BUCKET_COLUMN",
    "CHANGE_TYPE_COLUMN",
    "DEFAULT_FETCH_MAX_BYTES",
    "DEFAULT_FETCH_MAX_BYTES_PER_BUCKET",
    "DEFAULT_KV_BATCH_BYTES",
    "DEFAULT_STREAM_CAPACITY",
    "FAIR_SHARE_ROWS",
    "FLUSS_TYPE_KEY",
    "KV_SESSIONS_PER_LEADER",
    "MAX_FETCH_BYTES_PER_BUCKET",
    "OFFSET_COLUMN",
    "PARTITION_COLUMN",
    "BucketScan",
    "BucketStatus",
    "Preview",
    "PreviewArgumentError",
    "PreviewStream",
    "ScanClient",
    "ScanMethod",
    "ScanReport",
    "SchemaMismatchError",
    "StreamOrder",
    "preview_table",
    "stream_preview",
]

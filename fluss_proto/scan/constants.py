"""Byte budgets, bounds and column names of table previews."""

from __future__ import annotations

from typing import Final

#: ScanKv ``batch_size_bytes`` (the server caps it at ``kv.scanner.max-batch-size``, 10 MB,
#: and always sends at least one row).
DEFAULT_KV_BATCH_BYTES: Final = 1024 * 1024
#: FetchLog ``max_bytes`` (whole reply) and the starting ``max_fetch_bytes`` per bucket.
DEFAULT_FETCH_MAX_BYTES: Final = 16 * 1024 * 1024
DEFAULT_FETCH_MAX_BYTES_PER_BUCKET: Final = 1024 * 1024
#: A bucket that made no progress (its next batch is bigger than its budget) gets its budget
#: doubled, up to this.
MAX_FETCH_BYTES_PER_BUCKET: Final = 32 * 1024 * 1024
#: Field metadata key carrying the Fluss type of each data column.
FLUSS_TYPE_KEY: Final = b"fluss.type"
#: Column names added to the preview.
BUCKET_COLUMN: Final = "_bucket"
PARTITION_COLUMN: Final = "_partition"
OFFSET_COLUMN: Final = "_offset"
CHANGE_TYPE_COLUMN: Final = "_change_type"

KV_OPEN_RETRIES = 2  # extra opens after TOO_MANY_SCANNERS
#: Open ScanKv sessions per leader at a time: far below the server's cap of 200 per server
#: (``kv.scanner.max-per-server``), so a wide preview never starves other readers.
KV_SESSIONS_PER_LEADER: Final = 16
KV_OPEN_BACKOFF_S = 0.1
CLOSE_TIMEOUT_S = 2.0  # bound for best-effort close_scanner requests
CANCEL_GRACE_S = 2.0  # bound for cancelled workers to finish their clean-up
MAX_FETCH_ROUNDS = 10_000  # a hard bound on FetchLog rounds per leader loop
MAX_STALLED_ROUNDS = 3  # FetchLog rounds without progress or truncation before giving up
MIN_REQUEST_TIMEOUT_S = 0.05
MAX_LIMIT = 2**31 - 1  # LimitScan's limit is an int32
#: A filtered key scan (ScanKv, LimitScan) reads at most this many rows per bucket looking
#: for matches (LimitScan's reply holds them all at once; ScanKv pages through them).
FILTERED_SCAN_ROWS: Final = 1_000_000

LOG_COLUMNS = (OFFSET_COLUMN, CHANGE_TYPE_COLUMN)

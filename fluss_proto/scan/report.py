"""What a preview returns: the rows, and per bucket what was read, how, and what went wrong."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from fluss_proto.errors import (
    FlussError,
)
from fluss_proto.types import TableInfo

if TYPE_CHECKING:
    import pyarrow as pa


class ScanMethod(StrEnum):
    SCAN_KV = "ScanKv"
    LIMIT_SCAN = "LimitScan"
    FETCH_LOG_TAIL = "FetchLog tail"
    #: A filtered read of a log table: FetchLog from the log start to the latest offset.
    FETCH_LOG = "FetchLog"


class BucketStatus(StrEnum):
    #: Read completely (up to the limit), rows found.
    SCANNED = "scanned"
    #: Read completely, no rows.
    EMPTY = "empty"
    #: Rows (all or some) are in remote storage, which RPC cannot read.
    REMOTE = "in remote storage"
    FAILED = "failed"
    #: Still running at the deadline; its rows so far are kept.
    TIMED_OUT = "timed out"


@dataclass(frozen=True, slots=True)
class BucketScan:
    """What happened to one bucket."""

    partition_id: int | None
    partition_name: str | None
    bucket_id: int
    #: The server asked last (None when the bucket had no leader).
    leader_id: int | None
    method: ScanMethod
    status: BucketStatus
    #: Rows read from the bucket (before the preview's overall limit was applied).
    rows_read: int
    #: Rows of this bucket in the preview table.
    rows_returned: int
    #: The typed error of a failed or timed-out bucket (also set for REMOTE).
    error: FlussError | None = None
    #: A short human note (e.g. which offsets are in remote storage).
    detail: str | None = None
    #: Requests sent for this bucket (shared FetchLog / ListOffsets requests count once
    #: per bucket they carried).
    requests: int = 0
    #: The bucket may hold more rows than were read (the per-bucket limit was reached).
    limit_reached: bool = False
    #: ScanKv: the session expired and the scan was restarted once.
    reopened: bool = False
    #: ScanKv: close_scanner requests sent for this bucket.
    sessions_closed: int = 0
    #: FetchLog tail: the offsets read, ``[start_offset, end_offset)``, and the log start.
    start_offset: int | None = None
    end_offset: int | None = None
    earliest_offset: int | None = None
    elapsed_s: float = 0.0
    #: Rows read before a filter (equal to ``rows_read`` without one).
    rows_scanned: int = 0
    #: Filtered FetchLog (1.0 line): offsets the server left out, in how many runs of whole
    #: batches (each run is one or more batches its statistics ruled out).
    skipped_offsets: int = 0
    skipped_runs: int = 0

    @property
    def label(self) -> str:
        if self.partition_name is not None:
            return f"{self.partition_name}/bucket-{self.bucket_id}"
        if self.partition_id is not None:
            return f"partition-{self.partition_id}/bucket-{self.bucket_id}"
        return f"bucket-{self.bucket_id}"

    @property
    def complete(self) -> bool:
        return self.status in (BucketStatus.SCANNED, BucketStatus.EMPTY)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "bucket": self.label,
            "partition_id": self.partition_id,
            "partition": self.partition_name,
            "bucket_id": self.bucket_id,
            "leader": self.leader_id,
            "method": str(self.method),
            "status": str(self.status),
            "rows_read": self.rows_read,
            "rows_returned": self.rows_returned,
            "limit_reached": self.limit_reached,
            "requests": self.requests,
            "elapsed_s": round(self.elapsed_s, 4),
        }
        if self.error is not None:
            out["error"] = _error_dict(self.error)
        if self.detail:
            out["detail"] = self.detail
        if self.reopened:
            out["reopened"] = True
        if self.sessions_closed:
            out["sessions_closed"] = self.sessions_closed
        if self.rows_scanned != self.rows_read:
            out["rows_scanned"] = self.rows_scanned
        if self.skipped_runs:
            out["server_skipped_offsets"] = self.skipped_offsets
            out["server_skipped_runs"] = self.skipped_runs
        if self.start_offset is not None:
            out["start_offset"] = self.start_offset
            out["end_offset"] = self.end_offset
            out["earliest_offset"] = self.earliest_offset
        return out


def _error_dict(err: FlussError) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type(err).__name__, "message": str(err)}
    code = getattr(err, "code", None)
    if code is not None:
        out["code"] = code
        out["name"] = getattr(err, "name", None)
    return out


@dataclass(frozen=True, slots=True)
class ScanReport:
    table_path: str
    table_id: int
    primary_key: bool
    tail: bool
    limit: int
    buckets: tuple[BucketScan, ...]
    rows_returned: int
    #: Rows read from all buckets, before the limit was applied.
    rows_read: int
    #: True when the limit cut the preview: rows were left out, or some bucket may hold
    #: more rows than were read.
    limit_cut: bool
    elapsed_s: float
    deadline_s: float
    #: Partitions scanned (names), and partitions left out by ``max_partitions``.
    partitions: tuple[str, ...] = ()
    partitions_skipped: tuple[str, ...] = ()
    #: Schema ids of the rows decoded for the preview (the latest is ``schema_id``).
    schema_ids: tuple[int, ...] = ()
    schema_id: int = 0
    #: The filter, as typed (None: no filter); ``rows_read`` then counts its matches.
    filter: str | None = None
    #: Rows read before the filter.
    rows_scanned: int = 0
    #: What part of the filter FetchLog carried to the server (None: nothing), and why not.
    filter_pushed: str | None = None
    filter_note: str | None = None

    def _with(self, status: BucketStatus) -> tuple[BucketScan, ...]:
        return tuple(b for b in self.buckets if b.status is status)

    @property
    def scanned(self) -> tuple[BucketScan, ...]:
        return self._with(BucketStatus.SCANNED)

    @property
    def empty(self) -> tuple[BucketScan, ...]:
        return self._with(BucketStatus.EMPTY)

    @property
    def failed(self) -> tuple[BucketScan, ...]:
        return self._with(BucketStatus.FAILED)

    @property
    def timed_out(self) -> tuple[BucketScan, ...]:
        return self._with(BucketStatus.TIMED_OUT)

    @property
    def remote(self) -> tuple[BucketScan, ...]:
        return self._with(BucketStatus.REMOTE)

    @property
    def complete(self) -> bool:
        """Every bucket was read (rows or none); nothing failed, timed out or stayed remote."""
        return all(b.complete for b in self.buckets)

    @property
    def nothing_read(self) -> bool:
        """No bucket could be read at all (every one failed or timed out without rows)."""
        return bool(self.buckets) and all(
            b.status in (BucketStatus.FAILED, BucketStatus.TIMED_OUT) and b.rows_read == 0
            for b in self.buckets
        )

    @property
    def server_skipped_runs(self) -> int:
        """Runs of whole batches the server left out (filtered FetchLog): at least that many
        batches were skipped."""
        return sum(b.skipped_runs for b in self.buckets)

    @property
    def server_skipped_offsets(self) -> int:
        return sum(b.skipped_offsets for b in self.buckets)

    @property
    def methods(self) -> Mapping[str, ScanMethod]:
        """Bucket label -> the method used."""
        return {b.label: b.method for b in self.buckets}

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table_path,
            "table_id": self.table_id,
            "primary_key": self.primary_key,
            "mode": "tail" if self.tail else "scan",
            "limit": self.limit,
            "rows_returned": self.rows_returned,
            "rows_read": self.rows_read,
            "limit_cut": self.limit_cut,
            "complete": self.complete,
            "elapsed_s": round(self.elapsed_s, 4),
            "deadline_s": self.deadline_s,
            "schema_id": self.schema_id,
            "schema_ids": list(self.schema_ids),
            "partitions": list(self.partitions),
            "partitions_skipped": list(self.partitions_skipped),
            "counts": {
                "buckets": len(self.buckets),
                "scanned": len(self.scanned),
                "empty": len(self.empty),
                "in_remote_storage": len(self.remote),
                "failed": len(self.failed),
                "timed_out": len(self.timed_out),
            },
            "buckets": [b.to_dict() for b in self.buckets],
            **self._filter_dict(),
        }

    def _filter_dict(self) -> dict[str, Any]:
        if self.filter is None:
            return {}
        return {
            "filter": {
                "text": self.filter,
                "rows_scanned": self.rows_scanned,
                "rows_matched": self.rows_read,
                "sent_to_server": self.filter_pushed,
                "not_sent_because": self.filter_note if self.filter_pushed is None else None,
                "server_skipped_batch_runs": self.server_skipped_runs,
                "server_skipped_offsets": self.server_skipped_offsets,
            }
        }

    def summary_lines(self) -> list[str]:
        """A short human report: one headline, then one line per bucket that needs a word."""
        methods = sorted({str(b.method) for b in self.buckets})
        head = (
            f"{self.table_path}: {self.rows_returned} row(s) shown of {self.rows_read} "
            f"{'matching' if self.filter is not None else 'read'} "
            f"from {len(self.buckets)} bucket(s) via {', '.join(methods) or '-'} in "
            f"{self.elapsed_s:.2f}s"
        )
        if self.limit_cut:
            head += f" (limit {self.limit} reached)"
        lines = [head]
        counts = [
            (len(self.scanned), "scanned"),
            (len(self.empty), "empty"),
            (len(self.remote), "in remote storage"),
            (len(self.failed), "failed"),
            (len(self.timed_out), "timed out"),
        ]
        lines.append("  buckets: " + ", ".join(f"{n} {what}" for n, what in counts if n))
        if self.filter is not None:
            lines.append(self._filter_line())
        if self.partitions:
            lines.append(f"  partitions: {', '.join(self.partitions)}")
        if self.partitions_skipped:
            lines.append(
                f"  partitions not scanned (max_partitions): {len(self.partitions_skipped)} "
                f"({', '.join(self.partitions_skipped[:5])}"
                f"{', ...' if len(self.partitions_skipped) > 5 else ''})"
            )
        for b in self.buckets:
            if b.complete and not b.reopened:
                continue
            text = f"  {b.label} [{b.method}] {b.status}"
            if b.leader_id is not None:
                text += f" (leader {b.leader_id})"
            if b.rows_read:
                text += f", {b.rows_read} row(s) read"
            if b.error is not None:
                text += f": {b.error}"
            if b.detail:
                text += f" - {b.detail}"
            if b.reopened:
                text += " (session expired; scan restarted once)"
            lines.append(text)
        return lines

    def _filter_line(self) -> str:
        text = f"  filter: {self.rows_scanned} row(s) scanned, {self.rows_read} matched; "
        if self.filter_pushed is None:
            return text + f"not sent to the server ({self.filter_note or 'not pushable'})"
        runs, offsets = self.server_skipped_runs, self.server_skipped_offsets
        return text + (
            f"sent to the server, which skipped {runs} run(s) of batches "
            f"({offsets} offset(s)) by their statistics"
        )


@dataclass(frozen=True, slots=True)
class Preview:
    """Rows of a table (Fluss-faithful Arrow types plus added columns) and how they were read."""

    table: pa.Table
    report: ScanReport
    info: TableInfo

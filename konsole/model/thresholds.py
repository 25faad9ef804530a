"""The health rules' limits (``[profiles.X.health]``), a plain dataclass of its own.

Kept apart from :mod:`konsole.model.health` (which re-exports it) so that reading a
profile, which holds one, does not import the rules, the snapshot and placement: a
preview or an export reads a profile and never judges health.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HealthThresholds"]


@dataclass(frozen=True, slots=True)
class HealthThresholds:
    """Limits for health and events (``[profiles.X.health]``)."""

    #: Disk usage ratio (0..1) that makes a tablet server YELLOW, and RED.
    disk_usage_warn: float = 0.80
    disk_usage_critical: float = 0.90
    #: JVM heap used / max that makes a server YELLOW.
    heap_usage_warn: float = 0.90
    #: KV backpressure (0..1, the table's worst bucket) that makes a table YELLOW.
    kv_pressure_warn: float = 0.80
    #: Polls without a log end offset advance before an advancing table is "stalled" (a
    #: floor; the rule is time-based: ``ingest_stall_after``, konsole.model.events.ingest).
    ingest_stall_polls: int = 3
    #: Seconds without a log end offset advance before an advancing table is "stalled"
    #: (and never sooner than 3x the table's own longest recent gap between writes).
    ingest_stall_after: float = 15.0
    #: Seconds after its creation during which a table's buckets without a leader are not
    #: RED (a new table's leaders are being elected: about a second on a healthy cluster).
    new_table_grace: float = 10.0
    #: Seconds a tiered bucket's remote end may stand still while its log grows.
    tiering_stall_s: float = 600.0
    #: Seconds a PK bucket taking writes may go without a new KV snapshot.
    kv_snapshot_stale_s: float = 1800.0
    #: Offsets a datalake-enabled table may be ahead of its lake snapshot (all buckets).
    lake_lag_offsets: int = 1_000_000
    #: Room left below a tablet server's own write-limit ratio (ratio points, on the server
    #: or any of its data dirs) that makes it YELLOW, and RED (rule ``disk_headroom``).
    disk_headroom_warn: float = 0.10
    disk_headroom_critical: float = 0.03
    #: Seconds until the forecast write lock that make a tablet server YELLOW, and RED
    #: (rule ``write_lock_forecast``; konsole.model.forecast).
    write_lock_warn_s: float = 6 * 3600.0
    write_lock_critical_s: float = 3600.0
    #: The forecast's window (the trend fitted: the last N seconds of samples), and the
    #: fewest seconds of samples in it before a forecast is made.
    forecast_window_s: float = 3600.0
    forecast_min_span_s: float = 300.0
    #: Whether a tablet server without metrics makes the health UNKNOWN (not GREEN) when
    #: metrics were configured or found (never configured: "not configured", information).
    require_metrics: bool = True

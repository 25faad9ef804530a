"""The capacity of a cluster as one JSON-able report: ``konsole capacity`` prints it (and the
console's Capacity screen is to show the same rows). Every figure is defined once, in
:mod:`konsole.model.headroom` and :mod:`konsole.model.requests`. Unknown is ``None``
(JSON ``null``), never 0.
"""

from __future__ import annotations

from typing import Any

from konsole.model.forecast import CONFIDENCE, METHOD
from konsole.model.headroom import capacity_view, lock_outlook
from konsole.model.health import capacity_findings
from konsole.model.requests import server_requests
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.thresholds import HealthThresholds

__all__ = ["capacity_dict"]

_LEVELS = {0: None, 1: "warning", 2: "critical"}


def capacity_dict(
    snapshot: ClusterSnapshot,
    rules: HealthThresholds,
    *,
    previous: ClusterSnapshot | None = None,
    history_samples: int | None = None,
) -> dict[str, Any]:
    """Per tablet server: headroom, the lock outlook, data dirs, KV backpressure, growth
    drivers (``previous``: an earlier good poll) and requests; the capacity findings."""
    now = snapshot.taken_at
    requests = {r.server_id: r for r in server_requests(snapshot)}
    servers = []
    for s in capacity_view(snapshot, previous):
        outlook = lock_outlook(s, rules, now)
        row = s.as_dict(now)
        row["lock_outlook"] = {
            "level": _LEVELS[outlook.level],
            "eta_s": outlook.eta_s,
            "eta_soonest_s": outlook.soonest_s,
            "eta_latest_s": outlook.latest_s,
            "dir": None if outlook.figure is None else outlook.figure.dir,
        }
        r = requests.get(s.server_id)
        row["requests"] = None if r is None else r.as_dict()
        servers.append(row)
    return {
        "time": now,
        "forecast": {
            "method": METHOD,
            "confidence": CONFIDENCE,
            "window_s": rules.forecast_window_s,
            "min_span_s": rules.forecast_min_span_s,
            "warn_within_s": rules.write_lock_warn_s,
            "critical_within_s": rules.write_lock_critical_s,
            "history_samples": history_samples,
        },
        "servers": servers,
        "findings": [
            {"status": f.status.name, "rule": f.rule, "subject": f.subject, "reason": f.reason}
            for f in capacity_findings(snapshot, rules)
        ],
    }

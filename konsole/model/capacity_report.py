"""The capacity of a cluster as one JSON-able report: ``konsole capacity`` prints it (and the
console's Capacity screen is to show the same rows). Every figure is defined once, in
:mod:`konsole.model.headroom` and :mod:`konsole.model.requests`. Unknown is ``None``
(JSON ``null``), never 0.
"""

from __future__ import annotations

from typing import Any

from konsole.model.forecast import CONFIDENCE, METHOD
from konsole.model.headroom import lock_outlook, with_drivers
from konsole.model.poll import JudgedPoll
from konsole.model.requests import server_requests
from konsole.model.thresholds import HealthThresholds

__all__ = ["capacity_dict"]

_LEVELS = {0: None, 1: "warning", 2: "critical"}
#: The health rules that judge capacity (konsole.model.health.capacity_findings).
_CAPACITY_RULES = frozenset({"disk_headroom", "write_lock_forecast"})


def capacity_dict(
    judged: JudgedPoll,
    rules: HealthThresholds,
    *,
    history_samples: int | None = None,
) -> dict[str, Any]:
    """Per tablet server of a good judged poll: headroom, the lock outlook, data dirs, KV
    backpressure, growth drivers (when the good poll before it was known) and requests;
    the capacity findings of its health."""
    snapshot = judged.snapshot
    now = snapshot.taken_at
    requests = {r.server_id: r for r in server_requests(snapshot)}
    servers = []
    for s in with_drivers(judged.capacity, snapshot, judged.previous_ok):
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
            for f in judged.health.findings
            if f.rule in _CAPACITY_RULES
        ],
    }

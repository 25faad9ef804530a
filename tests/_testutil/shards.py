"""`make test`'s live shards: each server generation's part split into N pytest processes
that run side by side (``--shard K/N``, tests/conftest.py), whole modules to a shard (a
module's tests share its clusters).

The live tests mostly wait on their servers (elections, sessions expiring, polls, alert
timers), so several processes share the two cores well. Modules go to shards by their
measured seconds, the longest first, each to the shard with the least so far (the LPT
rule), so every process, having collected the same modules, computes the same split.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

#: Seconds each live module took in a CI rehearsal (both lines side by side on the 2-core
#: machine), by part. Only the balance depends on them: a module missing here weighs
#: DEFAULT_SECONDS, and a wrong figure makes one shard longer, never drops a test.
MODULE_SECONDS: Final[Mapping[str, Mapping[str, int]]] = {
    "fluss0.9": {
        "test_rolling_upgrade_live.py": 300,
        "test_alert_causes_live.py": 220,
        "test_check_live.py": 146,
        "test_watch_live.py": 136,
        "test_admin_actions_live.py": 100,
        "test_cluster_cli.py": 77,
        "test_lookup_live.py": 75,
        "test_bench_quick.py": 67,
        "test_admin_live.py": 61,
        "test_incident_live.py": 59,
        "test_history_live.py": 55,
        "test_epochs_live.py": 48,
        "test_console_live.py": 47,
        "test_export_live.py": 45,
        "test_storage_tiers_live.py": 43,
        "test_serve_live.py": 42,
        "test_alerts_live.py": 36,
        "test_client_live.py": 26,
        "test_console_actions_live.py": 22,
        "test_console_find_live.py": 20,
        "test_pyfluss_roundtrip.py": 17,
        "test_serve_history_faults_live.py": 15,
        "test_check_metrics_live.py": 11,
        "test_preview_live.py": 10,
    },
    "fluss1.0": {
        "test_check_live.py": 259,
        "test_alert_causes_live.py": 221,
        "test_capacity_live.py": 172,
        "test_alerts_live.py": 165,
        "test_demo_tmux.py": 123,
        "test_watch_live.py": 121,
        "test_admin_actions_live.py": 106,
        "test_history_live.py": 99,
        "test_export_live.py": 97,
        "test_epochs_live.py": 94,
        "test_fluss_1_0_faults.py": 90,
        "test_storage_live.py": 60,
        "test_incident_live.py": 69,
        "test_bench_quick.py": 62,
        "test_cluster_cli.py": 61,
        "test_admin_live.py": 47,
        "test_storage_tiers_live.py": 47,
        "test_console_live.py": 46,
        "test_lookup_live.py": 46,
        "test_serve_history_faults_live.py": 36,
        "test_client_live.py": 27,
        "test_serve_live.py": 26,
        "test_thread_guard_live.py": 26,
        "test_history_faults_live.py": 24,
    },
}
DEFAULT_SECONDS: Final = 10

_SPEC = re.compile(r"(\d+)/(\d+)")


def parse(spec: str) -> tuple[int, int]:
    """``"K/N"`` -> (K, N), 1 <= K <= N; ValueError otherwise."""
    m = _SPEC.fullmatch(spec.strip())
    if m is None or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ValueError(f"--shard takes K/N with 1 <= K <= N, not {spec!r}")
    return int(m.group(1)), int(m.group(2))


def split(
    modules: Iterable[str],
    part: str,
    shards: int,
    table: Mapping[str, Mapping[str, int]] = MODULE_SECONDS,
) -> dict[str, int]:
    """Module file name -> its shard (1..shards) within ``part``."""
    weights = table.get(part, {})
    names = sorted(set(modules), key=lambda m: (-weights.get(m, DEFAULT_SECONDS), m))
    load = [0] * shards
    out: dict[str, int] = {}
    for name in names:
        k = min(range(shards), key=lambda i: (load[i], i))
        load[k] += weights.get(name, DEFAULT_SECONDS)
        out[name] = k + 1
    return out

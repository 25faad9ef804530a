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

#: Seconds each live module took (setup, calls and teardown) in a rehearsal of `make test`
#: on the 2-core machine (2026-12-07, the servers' JVMs on the client compiler, three live
#: processes, the machine's load 5-30 from other work), by part. Only the balance depends
#: on them: a module missing here weighs DEFAULT_SECONDS, and a wrong figure makes one
#: shard longer, never drops a test.
MODULE_SECONDS: Final[Mapping[str, Mapping[str, int]]] = {
    "fluss0.9": {
        "test_alert_causes_live.py": 225,
        "test_check_live.py": 141,
        "test_bench_quick.py": 97,
        "test_console_live.py": 85,
        "test_rolling_upgrade_live.py": 83,
        "test_watch_live.py": 73,
        "test_admin_actions_live.py": 69,
        "test_export_live.py": 68,
        "test_lookup_live.py": 66,
        "test_epochs_live.py": 64,
        "test_cluster_cli.py": 59,
        "test_history_live.py": 55,
        "test_alerts_live.py": 41,
        "test_incident_live.py": 40,
        "test_console_actions_live.py": 26,
        "test_admin_live.py": 25,
        "test_serve_live.py": 22,
        "test_client_live.py": 20,
        "test_console_find_live.py": 18,
        "test_storage_tiers_live.py": 16,
        "test_pyfluss_roundtrip.py": 12,
        "test_check_metrics_live.py": 10,
        "test_preview_live.py": 10,
        "test_capacity_live.py": 8,
        "test_serve_history_faults_live.py": 7,
        "test_console_takeover_live.py": 5,
    },
    "fluss1.0": {
        "test_check_live.py": 266,
        "test_alert_causes_live.py": 232,
        "test_capacity_live.py": 178,
        "test_bench_quick.py": 166,
        "test_alerts_live.py": 153,
        "test_fluss_1_0_faults.py": 139,
        "test_watch_live.py": 126,
        "test_demo_tmux.py": 126,
        "test_export_live.py": 105,
        "test_history_live.py": 98,
        "test_incident_live.py": 88,
        "test_admin_actions_live.py": 86,
        "test_console_live.py": 84,
        "test_cluster_cli.py": 73,
        "test_storage_tiers_live.py": 67,
        "test_lookup_live.py": 67,
        "test_epochs_live.py": 50,
        "test_serve_history_faults_live.py": 39,
        "test_console_find_live.py": 33,
        "test_console_actions_live.py": 28,
        "test_admin_live.py": 28,
        "test_history_faults_live.py": 28,
        "test_client_live.py": 24,
        "test_thread_guard_live.py": 22,
        "test_capacity_console_live.py": 21,
        "test_serve_live.py": 21,
        "test_storage_live.py": 20,
        "test_console_history_faults_live.py": 19,
        "test_pyfluss_roundtrip.py": 16,
        "test_preview_live.py": 14,
        "test_console_takeover_live.py": 10,
        "test_history_path_live.py": 8,
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

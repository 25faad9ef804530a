"""Cluster totals from the tablet servers' own metrics (unknown stays unknown)."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import pytest

from konsole.model.totals import cluster_totals, request_totals
from tests._testutil.builders import tm


def test_throughput_is_the_tablet_servers_sum_and_coordinators_are_not_counted() -> None:
    coordinator = replace(tm(9, bytes_in_rate=1e9), role="coordinator")
    totals = cluster_totals(
        [
            tm(1, bytes_in_rate=100.0, bytes_out_rate=10.0, messages_in_rate=3.0),
            tm(2, bytes_in_rate=50.0, bytes_out_rate=None, messages_in_rate=1.0),
            coordinator,
        ]
    )
    assert (totals.messages_in_rate, totals.bytes_in_rate, totals.bytes_out_rate) == (
        4.0,
        150.0,
        10.0,
    )
    assert totals.servers == 2


def test_a_figure_no_server_exports_is_unknown_not_zero() -> None:
    totals = cluster_totals([tm(1), tm(2)])
    assert totals.bytes_in_rate is None and totals.get("messages_in_rate") is None
    assert cluster_totals([]).servers == 0


def test_requests_worst_first_errors_then_p99() -> None:
    a = tm(
        1,
        requests=MappingProxyType({"produceLog": (10.0, 0.0), "putKv": (5.0, 0.5)}),
        request_latency_ms=MappingProxyType({"produceLog": 80.0, "putKv": 3.0, "metadata": 1.0}),
    )
    b = tm(
        2,
        requests=MappingProxyType({"produceLog": (4.0, 0.0), "putKv": (1.0, 0.25)}),
        request_latency_ms=MappingProxyType({"produceLog": 120.0, "metadata": None}),
    )
    rows = request_totals([a, b])
    assert [r.request for r in rows] == ["putKv", "produceLog", "metadata"]
    assert (rows[0].rate, rows[0].error_rate, rows[0].p99_ms) == (6.0, 0.75, 3.0)
    assert rows[1].p99_ms == pytest.approx(120.0)  # the worst server's
    assert (rows[2].rate, rows[2].error_rate) == (None, None)  # latency only: rates unknown


def test_watch_health_json_line_carries_the_totals_and_each_servers_cpu() -> None:
    import json

    from konsole.cli.lines import health_line
    from tests._testutil.builders import snap, view
    from tests._testutil.judging import health_of

    s = snap(
        view((1, 2)),
        metrics=[
            tm(1, bytes_in_rate=100.0, messages_in_rate=2.0, cpu_load=0.5),
            tm(2, bytes_in_rate=50.0, bytes_out_rate=7.0),
        ],
    )
    doc = json.loads(health_line(health_of(s), "jsonl", s))
    assert doc["type"] == "health"
    assert doc["totals"] == {
        "messages_in_per_s": 2.0,
        "bytes_in_per_s": 150.0,
        "bytes_out_per_s": 7.0,
        "tablet_servers": 2,
        "cpu_load": {"1": 0.5},  # server 2 does not say: left out, not 0
        "heap_used_ratio": {},
    }
    assert "totals" not in json.loads(health_line(health_of(s), "jsonl"))

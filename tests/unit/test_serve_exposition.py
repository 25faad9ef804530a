"""The exposition of `konsole serve`: families from the model's figures, the table cap,
unknown as absent, the counters, and text vs OpenMetrics over real loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import socket
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import replace

import httpx
import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from fluss_proto.model import HealthStatus
from konsole.model.events import Event, EventKind, Severity, Subject
from konsole.model.health import Finding, Health
from konsole.model.poll import Judge
from konsole.model.snapshot import ClusterSnapshot
from konsole.serve.exposition import Exposition, MetricsServer
from konsole.serve.exposition.families import FAMILIES, OTHER
from tests._testutil.builders import all_metrics, kv, snap, table, tm, view
from tests._testutil.judging import judged_as

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scraped(exposition: Exposition) -> Samples:
    text = generate_latest(exposition.registry).decode()
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def names(samples: Samples, name: str) -> list[dict[str, str]]:
    return [dict(labels) for (n, labels) in samples if n == name]


def feed(
    exposition: Exposition, cluster: str, s: ClusterSnapshot, events: Sequence[Event] = ()
) -> None:
    """One poll of ``cluster``, judged after its earlier ones (as its session judges it)."""
    judge = _judges.setdefault(exposition, {}).setdefault(cluster, Judge())
    judged = replace(judge.judge(s), events=tuple(events))
    asyncio.run(exposition.on_poll(cluster, judged))


#: Each exposition's judges, one per cluster (a session's, in serve).
_judges: weakref.WeakKeyDictionary[Exposition, dict[str, Judge]] = weakref.WeakKeyDictionary()


def one_dead_server() -> ClusterSnapshot:
    """Tablet servers 1 and 2 alive; 3 holds replicas and is gone."""
    tables = [
        table("db.big", 1, [(1, (1, 3), 100), (3, (3, 1), 50), (2, (2, 1), None)]),
        table("db.mid", 2, [(1, (1, 2), 7), (2, (2, 1), 8)]),
        table("db.small", 3, [(2, (2, 1), 1)]),
    ]
    metrics = [
        tm(1, disk_usage_ratio=0.5, disk_write_locked=False, tables=[kv("db.big", pressure=0.2)]),
        tm(2, disk_usage_ratio=0.95, disk_write_locked=True),
    ]
    return snap(view((1, 2), tables), t=1000.0, metrics=metrics)


def test_placement_servers_and_per_server_metrics() -> None:
    exposition = Exposition(["a"])
    feed(exposition, "a", one_dead_server())
    got = scraped(exposition)
    assert value(got, "konsole_servers", cluster="a", role="tablet", state="alive") == 2
    assert value(got, "konsole_servers", cluster="a", role="tablet", state="offline") == 1
    assert value(got, "konsole_tablet_server_up", cluster="a", server="3") == 0
    assert value(got, "konsole_tablet_server_up", cluster="a", server="1") == 1
    assert value(got, "konsole_servers", cluster="a", role="coordinator", state="active") == 1
    assert value(got, "konsole_servers", cluster="a", role="coordinator", state="standby") == 0
    # The model's figures: bucket 1 of db.big is led by 3 (offline); 2 replicas on 3.
    assert value(got, "konsole_offline_buckets", cluster="a") == 1
    assert value(got, "konsole_under_replicated_buckets", cluster="a") == 2
    assert value(got, "konsole_table_offline_buckets", cluster="a", database="db", table="big") == 1
    assert value(got, "konsole_disk_usage_ratio", cluster="a", server="2") == 0.95
    assert value(got, "konsole_disk_write_locked", cluster="a", server="2") == 1
    assert value(got, "konsole_disk_write_locked", cluster="a", server="1") == 0
    assert value(got, "konsole_kv_backpressure", cluster="a", server="1") == 0.2
    # Server 2 exports no KV figures: no sample, not 0.
    assert value(got, "konsole_kv_backpressure", cluster="a", server="2") is None
    assert value(got, "konsole_health_status", cluster="a") == 3  # RED: a bucket offline
    assert value(got, "konsole_health_rule_status", cluster="a", rule="leaders") == 3
    assert value(got, "konsole_health_rule_status", cluster="a", rule="replicas_offline") == 2
    assert value(got, "konsole_table_latest_offset", cluster="a", database="db", table="big") == 150


def test_table_cap_rolls_up_the_rest_and_rates_need_two_polls() -> None:
    exposition = Exposition(["a"], max_tables=1)
    first = one_dead_server()
    feed(exposition, "a", first)
    got = scraped(exposition)
    tables = names(got, "konsole_table_buckets")
    assert {(t["database"], t["table"]) for t in tables} == {("db", "big"), (OTHER, OTHER)}
    assert value(got, "konsole_table_buckets", cluster="a", database=OTHER, table=OTHER) == 3
    assert names(got, "konsole_table_rows_per_second") == []  # one poll: no rate, not 0
    tables = [
        table("db.big", 1, [(1, (1, 3), 120), (3, (3, 1), 50), (2, (2, 1), None)]),
        table("db.mid", 2, [(1, (1, 2), 17), (2, (2, 1), 18)]),
        table("db.small", 3, [(2, (2, 1), 1)]),
    ]
    feed(exposition, "a", snap(view((1, 2), tables), seq=2, t=1010.0))
    got = scraped(exposition)
    assert value(got, "konsole_table_rows_per_second", cluster="a", database="db", table="big") == 2
    assert (
        value(got, "konsole_table_rows_per_second", cluster="a", database=OTHER, table=OTHER) == 2
    )


def test_failed_poll_exports_the_poll_not_the_state_and_counts() -> None:
    exposition = Exposition(["a", "b"], clock=lambda: 1005.0)
    feed(exposition, "a", one_dead_server())
    event = Event(1000.0, EventKind.SERVER_LEFT, Severity.WARNING, Subject("server", "x"), "m")
    feed(exposition, "a", snap(None, seq=2, t=1002.0, failed="refused"), [event, event])
    got = scraped(exposition)
    assert value(got, "konsole_poll_success", cluster="a") == 0
    assert value(got, "konsole_poll_age_seconds", cluster="a") == 3.0
    assert value(got, "konsole_poll_consecutive_failures", cluster="a") == 1
    assert value(got, "konsole_servers", cluster="a", role="tablet", state="alive") is None
    assert value(got, "konsole_buckets", cluster="a") is None
    assert value(got, "konsole_polls_total", cluster="a") == 2
    assert value(got, "konsole_poll_failures_total", cluster="a") == 1
    labels = {"cluster": "a", "kind": "server_left", "severity": "warning"}
    assert value(got, "konsole_events_total", **labels) == 2
    # A rule that fired (offline buckets) then gave way to another stays at 0, not absent.
    assert value(got, "konsole_health_rule_status", cluster="a", rule="unreachable") == 3
    assert value(got, "konsole_health_rule_status", cluster="a", rule="leaders") == 0
    assert value(got, "konsole_health_findings", cluster="a", rule="leaders") == 0
    # Cluster b has not polled yet: its counters exist at 0, nothing else.
    assert value(got, "konsole_polls_total", cluster="b") == 0
    assert value(got, "konsole_poll_success", cluster="b") is None


def test_every_family_has_help_and_the_cluster_label() -> None:
    exposition = Exposition(["a"])
    feed(
        exposition,
        "a",
        snap(
            view((0, 1, 2), [table("db.t", 1, [1, 2, 3])]),
            metrics=all_metrics(disk_usage_ratio=0.1),
        ),
    )
    text = generate_latest(exposition.registry).decode()
    for family in FAMILIES:
        assert f"# HELP {family.name} " in text
        assert family.name.startswith("konsole_")
    for f in text_string_to_metric_families(text):
        for s in f.samples:
            assert f.name == "konsole_build_info" or "cluster" in s.labels, s


@pytest.fixture
def server() -> Iterator[tuple[MetricsServer, Exposition]]:
    exposition = Exposition(["a"])
    feed(exposition, "a", one_dead_server())
    srv = MetricsServer(exposition.registry, "127.0.0.1", 0, lambda: (True, {"status": "ok"}))
    srv.start()
    try:
        yield srv, exposition
    finally:
        srv.close()


def test_http_text_openmetrics_healthz_and_404(server: tuple[MetricsServer, Exposition]) -> None:
    srv, _ = server
    base = f"http://127.0.0.1:{srv.port}"
    with httpx.Client(timeout=5) as client:
        text = client.get(f"{base}/metrics")
        assert text.status_code == 200
        assert text.headers["content-type"].startswith("text/plain; version=0.0.4")
        assert 'konsole_servers{cluster="a",role="tablet",state="alive"} 2.0' in text.text
        assert text.headers["content-encoding"] == "gzip"  # httpx asks for it, and decodes
        plain = client.get(f"{base}/metrics", headers={"Accept-Encoding": "identity"})
        assert "content-encoding" not in plain.headers
        assert 'konsole_servers{cluster="a",role="tablet",state="alive"} 2.0' in plain.text
        om = client.get(
            f"{base}/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
        )
        assert om.headers["content-type"].startswith("application/openmetrics-text")
        assert om.text.rstrip().endswith("# EOF")
        # OpenMetrics names a counter's family without ``_total`` and its samples with it
        assert "# TYPE konsole_polls counter" in om.text
        assert 'konsole_polls_total{cluster="a"} 1.0' in om.text
        assert "# TYPE konsole_events counter" in om.text
        health = client.get(f"{base}/healthz")
        assert health.status_code == 200 and json.loads(health.text) == {"status": "ok"}
        assert client.get(f"{base}/nothing").status_code == 404


def test_a_port_in_use_is_refused_at_once() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError):
            MetricsServer(Exposition().registry, "127.0.0.1", port, lambda: (True, {}))


def test_health_status_codes_follow_the_model_order() -> None:
    from konsole.serve.exposition.families import STATUS_CODE

    order = [HealthStatus.GREEN, HealthStatus.UNKNOWN, HealthStatus.YELLOW, HealthStatus.RED]
    assert [STATUS_CODE[s] for s in order] == [0, 1, 2, 3]


def test_a_server_that_left_without_replicas_is_zero_while_health_judges_it_gone() -> None:
    """A cluster without tables: the server_gone finding (health's memory of the servers
    seen alive) is what tells it is gone, as it is for serve's alert; not judged gone
    (back, or retired): no series."""
    exposition = Exposition(["a"])
    feed(exposition, "a", snap(view((0, 1, 2)), seq=1, t=1000.0))
    left = snap(view((0, 1)), seq=2, t=1001.0)
    gone = Finding(HealthStatus.YELLOW, "server_gone", "tablet-server 2", "gone from metadata")
    asyncio.run(
        exposition.on_poll(
            "a", judged_as(left, Health(HealthStatus.YELLOW, (gone,), "derived", 1001.0))
        )
    )
    got = scraped(exposition)
    assert value(got, "konsole_tablet_server_up", cluster="a", server="2") == 0
    assert value(got, "konsole_servers", cluster="a", role="tablet", state="offline") == 1
    assert value(got, "konsole_servers", cluster="a", role="tablet", state="alive") == 2
    feed(exposition, "a", snap(view((0, 1)), seq=3, t=1002.0))
    got = scraped(exposition)
    assert value(got, "konsole_tablet_server_up", cluster="a", server="2") is None
    assert value(got, "konsole_servers", cluster="a", role="tablet", state="offline") == 0


def test_the_cli_default_table_cap_is_the_exposition_s() -> None:
    from click.testing import CliRunner

    from konsole.cli.main import main
    from konsole.serve.exposition import DEFAULT_MAX_TABLES

    shown = CliRunner().invoke(main, ["serve", "--help"]).output
    assert f"[default: {DEFAULT_MAX_TABLES};" in shown.replace("\n", " ")


def test_coordinators_active_standby_unreachable() -> None:
    from tests._testutil.builders import probe

    exposition = Exposition(["a"])
    s = snap(view((0, 1, 2)), coords=probe("standby", "active", "unreachable"))
    feed(exposition, "a", s)
    got = scraped(exposition)
    for state, n in (("active", 1), ("standby", 1), ("unreachable", 1)):
        assert value(got, "konsole_servers", cluster="a", role="coordinator", state=state) == n
    assert (
        value(got, "konsole_coordinator_up", cluster="a", server="127.0.0.1:9124", state="active")
        == 1
    )
    assert (
        value(
            got, "konsole_coordinator_up", cluster="a", server="127.0.0.1:9125", state="unreachable"
        )
        == 0
    )


def test_cluster_throughput_totals_and_each_servers_load() -> None:
    s = one_dead_server()
    metrics = (
        tm(1, bytes_in_rate=1000.0, bytes_out_rate=300.0, messages_in_rate=10.0, cpu_load=0.25),
        tm(2, bytes_in_rate=500.0, heap_used=50.0, heap_max=200.0),
    )
    exposition = Exposition(["a"])
    feed(
        exposition,
        "a",
        ClusterSnapshot.assemble(
            seq=s.seq,
            taken_at=s.taken_at,
            latency_s=s.latency_s,
            view=s.view,
            coordinators=s.coordinators,
            metrics=metrics,
        ),
    )
    got = scraped(exposition)
    assert value(got, "konsole_bytes_in_per_second", cluster="a") == 1500.0
    assert value(got, "konsole_bytes_out_per_second", cluster="a") == 300.0
    assert value(got, "konsole_messages_in_per_second", cluster="a") == 10.0
    assert value(got, "konsole_server_bytes_in_per_second", cluster="a", server="2") == 500.0
    assert value(got, "konsole_server_cpu_load", cluster="a", server="1") == 0.25
    assert value(got, "konsole_server_heap_used_ratio", cluster="a", server="2") == 0.25
    # unknown is absent, never 0: server 2 exports no CPU load, server 1 no heap
    assert value(got, "konsole_server_cpu_load", cluster="a", server="2") is None
    assert value(got, "konsole_server_heap_used_ratio", cluster="a", server="1") is None


def test_no_throughput_figure_exported_when_no_server_reports_one() -> None:
    exposition = Exposition(["a"])
    feed(exposition, "a", one_dead_server())  # metrics without rates
    got = scraped(exposition)
    assert value(got, "konsole_bytes_in_per_second", cluster="a") is None
    assert names(got, "konsole_server_cpu_load") == []

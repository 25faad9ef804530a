"""Metrics: parsing the Fluss reporter's text, and scrapes whose failures stay per server."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import httpx
import pytest

from konsole.collect.cluster.metrics import (
    MetricsError,
    Scraper,
    ServerMetrics,
    parse_metrics,
    split_results,
)
from konsole.collect.profiles import MetricsEndpoint

FIXTURES = Path(__file__).parent.parent / "fixtures" / "metrics"


def fixture(name: str, *, trailing_comma: bool = True) -> str:
    text = (FIXTURES / name).read_text()
    return text if trailing_comma else text.replace(",}", "}")


@pytest.mark.parametrize("trailing_comma", [True, False])
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "tablet-server-0.9.1.txt",
            {
                "role": "tablet",
                "server_id": "0",
                "host": "127_0_0_1",
                "under_replicated": 0,
                "under_min_isr": 0,
                "at_min_isr": 26,
                "isr_shrinks_rate": 0.0,
                "leader_count": 26,
                "replica_count": 26,
                "messages_in_rate": 63.0,
                "disk_usage_ratio": None,  # 1.0 line only
                "disk_write_locked": None,
                "active_coordinator_count": None,
                "heap_used": 43825576.0,
                "heap_max": 805306368.0,
            },
        ),
        (
            "coordinator-0.9.1.txt",
            {
                "role": "coordinator",
                "server_id": "2819a58c_8d91_4a02_9994_71e74b60ea8c",
                "active_coordinator_count": 1,
                "alive_coordinator_count": None,  # 1.0 line only
                "active_tablet_server_count": 1,
                "offline_bucket_count": 0,
                "table_count": 1,
                "under_replicated": None,
                "heap_max": 536870912.0,
            },
        ),
        (
            # a real capture: tablet server 2 restarted with its disk write limit below
            # its usage (1.0-SNAPSHOT, after `konsole cluster seed`)
            "tablet-server-1.0.txt",
            {
                "role": "tablet",
                "server_id": "2",
                "host": "127.0.0.1",
                "disk_usage_ratio": 0.7047212420458407,
                "disk_write_locked": True,
                "under_replicated": 0,
                "under_min_isr": 0,
                "isr_shrinks_rate": 0.0,
                "leader_count": 0,
                "replica_count": 26,
                "bytes_in_rate": 0.0,
                "replication_out_rate": 0.0,
                "request_rate": 0.016666666666666666,
                "request_error_rate": 0.0,
                "kv_rejections": 0.0,
                "heap_used": 57850192.0,
                "heap_max": 805306368.0,
            },
        ),
        (
            # a real capture of the active coordinator (the second one, after a failover)
            "coordinator-1.0.txt",
            {
                "role": "coordinator",
                "server_id": "3ec1c553-64d1-4112-92b6-d6b384128fb5",  # not a number at 1.0
                "host": "127.0.0.1",
                "active_coordinator_count": 1,
                "alive_coordinator_count": 2,
                "active_tablet_server_count": 3,
                "offline_bucket_count": 0,
                "table_count": 6,
                "bucket_count": 26,
                "partition_count": 3,
                "heap_max": 536870912.0,
            },
        ),
        (
            # a standby coordinator exports no coordinator gauges at all, only the JVM's
            "coordinator-standby-1.0.txt",
            {
                "role": "coordinator",
                "server_id": "1233fe89-143f-4868-ad7a-6497d1be17de",
                "active_coordinator_count": None,
                "alive_coordinator_count": None,
                "table_count": None,
                "heap_used": 42001688.0,
            },
        ),
    ],
)
def test_parse_fixture(name: str, expected: dict[str, Any], trailing_comma: bool) -> None:
    metrics = parse_metrics(
        fixture(name, trailing_comma=trailing_comma), url="http://127.0.0.1:1/metrics", scraped_at=5
    )
    for attribute, value in expected.items():
        assert getattr(metrics, attribute) == pytest.approx(value), attribute


@pytest.mark.parametrize("generation", ["0.9.1", "1.0"])
def test_storage_bytes_from_a_tiering_server(generation: str) -> None:
    # real whole captures of a tablet server that tiered one segment, one per generation
    m = parse_metrics(
        fixture(f"tablet-server-tiered-{generation}.txt"),
        url="http://127.0.0.1:1/metrics",
        scraped_at=5,
    )
    assert (m.local_size, m.remote_log_size) == (32320, 15968)
    # the older capture was trimmed without remoteLogSize: unknown, not 0
    old = parse_metrics(
        fixture("tablet-server-0.9.1.txt"), url="http://127.0.0.1:1/metrics", scraped_at=5
    )
    assert (old.local_size, old.remote_log_size) == (72504, None)


def test_table_metrics() -> None:
    metrics = parse_metrics(fixture("tablet-server-1.0.txt"), url="u", scraped_at=0)
    by_name = {t.name: t for t in metrics.tables}
    # only KV (primary-key) tables have backpressure families; log tables have none
    assert set(by_name) == {"demo.customer_profile", "go_sensor_demo.sensor_info"}
    pk = by_name["demo.customer_profile"]
    assert (pk.kv_pressure, pk.kv_rejections) == (0.0, 0.0)
    assert metrics.requests["putKv"] == (0.0, 0.0)
    assert metrics.requests["metadata"] == pytest.approx((0.016666666666666666, 0.0))
    assert metrics.subject == "tablet-server 2"


def test_table_labels_are_raw_at_1_0() -> None:
    """At 1.0 label values are not character-filtered (0.9.1 turns '-' and '.' into '_')."""
    text = (
        "# TYPE fluss_tabletserver_table_kvBackpressureRejectionsTotal gauge\n"
        "fluss_tabletserver_table_kvBackpressureRejectionsTotal"
        '{database="shop",server_id="2",table="orders-pk",} 17.0\n'
    )
    metrics = parse_metrics(text, url="u", scraped_at=0)
    assert [(t.name, t.kv_rejections) for t in metrics.tables] == [("shop.orders-pk", 17.0)]


def test_0_9_1_has_no_table_families_we_read() -> None:
    metrics = parse_metrics(fixture("tablet-server-0.9.1.txt"), url="u", scraped_at=0)
    assert metrics.tables == ()
    assert metrics.kv_rejections is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("<!doctype html><html><body>Grafana</body></html>", "HTML"),
        ("", "no Fluss"),
        ("up 1\nprocess_cpu_seconds_total 3.5\n", "no Fluss"),
        ("fluss_tabletserver_underReplicated{ 1 2 3\n", ""),
        ("fluss_client_requestsPerSecond_avg 0.0\n", "no Fluss server"),
    ],
)
def test_parse_rejects_what_is_not_fluss_prometheus_text(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words or None):
        parse_metrics(text, url="u", scraped_at=0)


def test_nan_is_unknown_not_zero() -> None:
    text = (
        "# TYPE fluss_tabletserver_underReplicated gauge\n"
        'fluss_tabletserver_underReplicated{server_id="1"} NaN\n'
        'fluss_tabletserver_leaderCount{server_id="1"} 3.0\n'
    )
    metrics = parse_metrics(text, url="u", scraped_at=0)
    assert (metrics.under_replicated, metrics.leader_count) == (None, 3)


def test_endpoint_hint_names_the_server_when_labels_do_not() -> None:
    text = "fluss_tabletserver_leaderCount 3.0\n"
    endpoint = MetricsEndpoint("u", role="tablet", server_id="7")
    metrics = parse_metrics(text, url="u", scraped_at=0, endpoint=endpoint)
    assert metrics.server_id == "7"


# --------------------------------------------------------------------------- scrapes

TS_TEXT = fixture("tablet-server-1.0.txt")


async def _handler(request: httpx.Request) -> httpx.Response:
    path = request.url.path
    if path == "/ok":
        return httpx.Response(200, text=TS_TEXT, headers={"content-type": "text/plain"})
    if path == "/500":
        return httpx.Response(500, text="boom")
    if path == "/html":
        return httpx.Response(200, text="<html></html>", headers={"content-type": "text/html"})
    if path == "/garbage":
        return httpx.Response(200, content=b"\x00\xff fluss_ {{{{")
    if path == "/slow":
        await asyncio.sleep(5)
        return httpx.Response(200, text=TS_TEXT)
    raise httpx.ConnectError("connection refused", request=request)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/ok", None),
        ("/500", "http_status"),
        ("/html", "not_metrics"),
        ("/garbage", "not_metrics"),
        ("/slow", "timeout"),
        ("/down", "unreachable"),
    ],
)
async def test_each_failure_is_a_finding_on_that_server(path: str, kind: str | None) -> None:
    # Only /slow waits the timeout out; the others answer at once, on a starved run too.
    timeout = 0.05 if kind == "timeout" else 10.0
    scraper = Scraper(timeout=timeout, transport=httpx.MockTransport(_handler), clock=lambda: 42.0)
    endpoint = MetricsEndpoint(f"http://127.0.0.1:9249{path}", role="tablet", server_id="3")
    try:
        (result,) = await scraper.scrape([endpoint])
    finally:
        await scraper.aclose()
    if kind is None:
        assert isinstance(result, ServerMetrics) and result.scraped_at == 42.0
    else:
        assert isinstance(result, MetricsError)
        assert (result.kind, result.at, result.subject) == (kind, 42.0, "tablet-server 3")


async def test_scrapes_run_concurrently_and_keep_order() -> None:
    paths = ["/slow", "/ok", "/down", "/slow", "/ok"]
    all_asked = asyncio.Event()
    asked: list[str] = []

    async def together(request: httpx.Request) -> httpx.Response:
        # No endpoint answers before every one was asked: scraped one after the other,
        # the first would wait for the rest and time out, and so would every /ok.
        asked.append(request.url.path)
        if len(asked) == len(paths):
            all_asked.set()
        await all_asked.wait()
        return await _handler(request)

    # The timeout only has to outlast five requests being started on a starved machine.
    scraper = Scraper(timeout=1.0, transport=httpx.MockTransport(together))
    try:
        results = await scraper.scrape([MetricsEndpoint(f"http://127.0.0.1:1{p}") for p in paths])
    finally:
        await scraper.aclose()
    assert sorted(asked) == sorted(paths)
    assert [r.url for r in results] == [f"http://127.0.0.1:1{p}" for p in paths]
    ok, bad = split_results(results)
    assert (len(ok), len(bad)) == (2, 3)
    assert [r.kind for r in bad] == ["timeout", "unreachable", "timeout"]


async def test_no_endpoints_no_scrape() -> None:
    scraper = Scraper(transport=httpx.MockTransport(_handler))
    assert await scraper.scrape([]) == ()
    await scraper.aclose()


def test_scraper_ignores_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    scraper = Scraper()
    assert scraper._client._trust_env is False
    asyncio.run(scraper.aclose())


# --------------------------------------------------------------------------- loopback


class _HttpServer:
    """A tiny HTTP server on loopback that answers the 1.0 fixture, or never answers."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.release = asyncio.Event()
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        self.release.set()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            if self.mode == "hang":
                await self.release.wait()
            else:
                body = TS_TEXT.encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                    + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


@pytest.mark.parametrize(
    ("mode", "kind"), [("ok", None), ("hang", "timeout"), ("closed", "unreachable")]
)
async def test_scrape_over_loopback(mode: str, kind: str | None) -> None:
    server = _HttpServer(mode)
    port = await server.start()
    if mode == "closed":
        await server.stop()
    scraper = Scraper(timeout=0.3 if kind == "timeout" else 10.0)  # only "hang" waits it out
    try:
        (result,) = await scraper.scrape([MetricsEndpoint(f"http://127.0.0.1:{port}/metrics")])
    finally:
        await scraper.aclose()
        await server.stop()
    if kind is None:
        assert isinstance(result, ServerMetrics) and result.disk_write_locked is True
    else:
        assert isinstance(result, MetricsError) and result.kind == kind


@pytest.mark.parametrize(
    "name", ["tablet-server-1.0.txt", "tablet-server-0.9.1.txt", "coordinator-0.9.1.txt"]
)
def test_the_cluster_id_label_is_kept_for_the_cluster_identity(name: str) -> None:
    # Captured from real servers: the ZooKeeper root ("/fluss") without its slash.
    assert parse_metrics(fixture(name), url="u", scraped_at=0).cluster_id == "fluss"


def test_no_cluster_id_label_is_unknown() -> None:
    text = 'fluss_tabletserver_leaderCount{server_id="1",host="h"} 3.0\n'
    assert parse_metrics(text, url="u", scraped_at=0).cluster_id is None


@pytest.mark.parametrize("generation", ["0.9.1", "1.0"])
def test_request_latency_and_queue_from_whole_captures(generation: str) -> None:
    """The 99th percentile of each request type's total time, and the queue, on both lines;
    a request type the server has not seen in its window is NaN there: unknown, not 0."""
    m = parse_metrics(fixture(f"tablet-server-tiered-{generation}.txt"), url="u", scraped_at=5)
    expected = {"0.9.1": (80.0, 124.0), "1.0": (73.0, 256.0)}[generation]
    assert (m.request_latency_ms["produceLog"], m.request_latency_ms["metadata"]) == expected
    assert m.request_latency_ms["fetchLogClient"] is None
    assert m.request_queue_size == 0
    # the per-processor queues (request_processor_index_N_...) are not the server's queue
    assert set(m.request_latency_ms) == set(m.requests)


def test_a_summary_keeps_its_99th_percentile_only() -> None:
    text = (
        "".join(
            "fluss_tabletserver_request_totalTimeMs"
            f'{{request="putKv",server_id="1",quantile="{q}",}} {v}\n'
            for q, v in (("0.5", 1.0), ("0.99", 42.5), ("0.999", 99.0))
        )
        + 'fluss_tabletserver_request_totalTimeMs_count{request="putKv",server_id="1",} 7.0\n'
    )
    m = parse_metrics(text, url="u", scraped_at=0)
    assert dict(m.request_latency_ms) == {"putKv": 42.5}


@pytest.mark.parametrize(
    ("generation", "load"), [("0.9.1", 0.05715783953854221), ("1.0", 0.05805148914689551)]
)
def test_cpu_load_from_real_captures_of_both_generations(generation: str, load: float) -> None:
    m = parse_metrics(fixture(f"tablet-server-tiered-{generation}.txt"), url="u", scraped_at=0)
    assert m.cpu_load == pytest.approx(load)


@pytest.mark.parametrize(("exported", "expected"), [("-1.0", None), ("NaN", None), ("0.5", 0.5)])
def test_cpu_load_not_yet_known_by_the_jvm_is_unknown_not_zero(
    exported: str, expected: float | None
) -> None:
    text = (
        "# TYPE fluss_tabletserver_status_JVM_CPU_load gauge\n"
        f'fluss_tabletserver_status_JVM_CPU_load{{server_id="1",}} {exported}\n'
    )
    assert parse_metrics(text, url="u", scraped_at=0).cpu_load == expected

"""AlertmanagerSink against a fake transport: posts the v2 body, re-sends active alerts,
retries with backoff when Alertmanager fails, counts failures, never raises into the poll.
(The real Alertmanager is in tests/live/test_alerts_live.py.)"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
import pytest

from konsole.model.alerts import AlertSettings
from konsole.serve.alerts.delivery import AlertmanagerSink, AlertmanagerUrlError, alerts_endpoint
from tests._testutil.builders import all_metrics, snap, table, view, with_time
from tests._testutil.unstarved import Stopwatch

T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (0, (2, 0, 1), 10)])
DOWN = snap(view((0, 1), tables=[T]), metrics=all_metrics((0, 1)))
UP = snap(view((0, 1, 2), tables=[T]), metrics=all_metrics())
NOW = {"for_s": 0.0, "keep_firing_s": 0.0}


class FakeAlertmanager(httpx.AsyncBaseTransport):
    """Records each posted body; fails the first ``fail`` posts with 503."""

    def __init__(self, fail: int = 0) -> None:
        self.fail = fail
        self.bodies: list[list[dict[str, Any]]] = []
        self.urls: list[str] = []
        self.posted = asyncio.Event()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(str(request.url))
        if self.fail > 0:
            self.fail -= 1
            return httpx.Response(503, request=request)
        self.bodies.append(json.loads(await request.aread()))
        self.posted.set()
        return httpx.Response(200, request=request)

    async def next_post(self, timeout: float = 5.0) -> list[dict[str, Any]]:
        self.posted.clear()
        await asyncio.wait_for(self.posted.wait(), timeout)
        return self.bodies[-1]


def sink(fake: FakeAlertmanager, **kwargs: Any) -> AlertmanagerSink:
    return AlertmanagerSink(
        ["http://127.0.0.1:9093"],
        AlertSettings(**NOW),
        backoff_s=0.01,
        max_backoff_s=0.05,
        transport=fake,
        **kwargs,
    )


async def poll(s: AlertmanagerSink, snapshot: Any, t: float) -> None:
    from tests._testutil.judging import judged

    timed = with_time(snapshot, t)
    await s.on_poll("prod", judged(timed))


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("http://am:9093", "http://am:9093/api/v2/alerts"),
        ("https://am.example/prefix/", "https://am.example/prefix/api/v2/alerts"),
        ("http://am:9093/api/v2/alerts", "http://am:9093/api/v2/alerts"),
    ],
)
def test_endpoint(url: str, endpoint: str) -> None:
    assert alerts_endpoint(url) == endpoint


@pytest.mark.parametrize("url", ["am:9093", "ftp://am", "http://", "http://am:port"])
def test_not_an_alertmanager_url(url: str) -> None:
    with pytest.raises(AlertmanagerUrlError, match="Alertmanager"):
        alerts_endpoint(url)


async def test_fires_then_resolves_with_ends_at() -> None:
    fake = FakeAlertmanager()
    s = sink(fake)
    try:
        await poll(s, DOWN, 100.0)
        body = await fake.next_post()
        (alert,) = [a for a in body if a["labels"]["alertname"] == "FlussTabletServerDown"]
        assert alert["labels"]["server"] == "2" and alert["labels"]["cluster"] == "prod"
        assert "endsAt" not in alert and alert["startsAt"].startswith("1970-01-01T00:01:40")
        assert fake.urls[-1] == "http://127.0.0.1:9093/api/v2/alerts"
        await poll(s, UP, 110.0)
        body = await fake.next_post()
        (resolved,) = body
        assert resolved["labels"]["alertname"] == "FlussTabletServerDown"
        assert resolved["endsAt"].startswith("1970-01-01T00:01:50")
        assert s.stats[0].posts_ok == 2 and s.stats[0].up is True
    finally:
        await s.aclose()


async def test_active_alerts_are_resent_every_period() -> None:
    fake = FakeAlertmanager()
    s = sink(fake, resend_s=0.05)
    try:
        await poll(s, DOWN, 100.0)
        for _ in range(3):  # bounded: three re-sends, each within a second
            body = await fake.next_post(1.0)
            assert any(a["labels"]["alertname"] == "FlussTabletServerDown" for a in body)
    finally:
        await s.aclose()


async def test_down_alertmanager_is_retried_counted_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = FakeAlertmanager(fail=4)
    s = sink(fake)
    caplog.set_level(logging.INFO, "konsole.alerts")
    try:
        await asyncio.wait_for(poll(s, DOWN, 100.0), 0.5)  # the poll never waits
        body = await fake.next_post()
        assert any(a["labels"]["alertname"] == "FlussTabletServerDown" for a in body)
        stats = s.stats[0]
        assert stats.posts_failed == 4 and stats.posts_ok == 1 and stats.up is True
        assert "503" in stats.last_error
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "retrying" in warnings[0].getMessage()
        assert any("answers again after 4" in r.getMessage() for r in caplog.records)
    finally:
        await s.aclose()


async def test_resolved_while_down_is_delivered_after() -> None:
    fake = FakeAlertmanager()
    s = sink(fake)
    try:
        await poll(s, DOWN, 100.0)
        await fake.next_post()
        fake.fail = 3
        await poll(s, UP, 110.0)
        body = await fake.next_post()
        assert [a["labels"]["alertname"] for a in body] == ["FlussTabletServerDown"]
        assert "endsAt" in body[0]
        assert s.stats[0].posts_failed == 3
    finally:
        await s.aclose()


async def test_unreachable_alertmanager_never_raises() -> None:
    s = AlertmanagerSink(
        ["http://127.0.0.1:9"], AlertSettings(**NOW), timeout_s=0.2, backoff_s=0.01
    )
    try:
        await poll(s, DOWN, 100.0)
        for _ in range(100):  # bounded: up to 5 s
            if s.stats[0].posts_failed:
                break
            await asyncio.sleep(0.05)
        assert s.stats[0].posts_failed >= 1 and s.stats[0].up is False
    finally:
        await s.aclose()


class SlowAlertmanager(FakeAlertmanager):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(30)
        return httpx.Response(200, request=request)


async def test_stop_is_bounded_with_a_slow_alertmanager() -> None:
    s = sink(SlowAlertmanager())
    await poll(s, DOWN, 100.0)
    await asyncio.sleep(0.05)  # a post is under way and hangs
    watch = Stopwatch()  # less the CPU waits of a starved run (nice 19)
    await asyncio.wait_for(s.aclose(), 5)
    assert watch.elapsed() < 2.0

"""Metrics configured, found or not configured: how the endpoints were chosen decides how
silence reads. Never configured is information (the metric rules listed as not judged, the
status not raised); configured or found and silent stays UNKNOWN (the check's WARNING)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fluss_proto.model import HealthStatus
from konsole.cli import check as check_cmd
from konsole.cli.main import main
from konsole.cli.options import ConnectionArgs
from konsole.collect.cluster.poller import Poller, PollerConfig
from konsole.collect.history.rows import poll_record, snapshot_at
from konsole.collect.profiles import MetricsEndpoint, Profile, parse_profiles, profile_from_local
from konsole.model.check import ExitCode, assess, failure
from konsole.model.events import EventConfig
from konsole.model.events.health_change import detect_health
from konsole.model.health import METRIC_RULES, HealthRules
from konsole.model.metrics import MetricsError, MetricsOrigin, MetricsResult
from konsole.model.poll_facts import facts_of
from konsole.model.snapshot import ClusterSnapshot
from konsole.render.check import render
from store import open_reader, open_writer
from tests._testutil.builders import all_metrics, metrics_error, snap, table, tm, view
from tests._testutil.judging import health_of, judged
from tests._testutil.poller import Fakes

T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
NONE, CONFIGURED, FOUND = MetricsOrigin.NONE, MetricsOrigin.CONFIGURED, MetricsOrigin.FOUND


def with_origin(s: ClusterSnapshot, origin: MetricsOrigin) -> ClusterSnapshot:
    return replace(s, metrics_origin=origin)


# =========================================================================== health


def test_never_configured_is_green_with_the_metric_rules_listed() -> None:
    h = health_of(with_origin(snap(view(tables=[T])), NONE))
    assert h.status is HealthStatus.GREEN
    (finding,) = h.findings
    assert (finding.status, finding.rule, finding.subject) == (
        HealthStatus.GREEN,
        "metrics_not_configured",
        "cluster",
    )
    assert finding.reason.startswith("metrics not configured: ")
    for rule in METRIC_RULES:
        assert rule in finding.reason


def test_never_configured_does_not_hide_other_trouble() -> None:
    s = with_origin(snap(view(tables=[T], server_errors={1: "refused"})), NONE)
    h = health_of(s)
    assert h.status is HealthStatus.YELLOW
    assert {f.rule for f in h.findings} == {"server_unreachable", "metrics_not_configured"}


@pytest.mark.parametrize("origin", [CONFIGURED, FOUND])
def test_configured_or_found_and_silent_stays_unknown(origin: MetricsOrigin) -> None:
    s = with_origin(
        snap(view(tables=[T]), metrics=all_metrics((0, 1)), metrics_errors=[metrics_error(2)]),
        origin,
    )
    h = health_of(s)
    assert h.status is HealthStatus.UNKNOWN
    assert {(f.rule, f.subject) for f in h.findings} == {("metrics_unknown", "tablet-server 2")}


def test_configured_and_answering_is_judged() -> None:
    s = snap(view(tables=[T]), metrics=[tm(0, disk_usage_ratio=0.95), tm(1), tm(2)])
    assert s.metrics_origin is CONFIGURED  # the strict reading is the default
    h = health_of(s)
    assert h.status is HealthStatus.RED
    assert "metrics_not_configured" not in {f.rule for f in h.findings}


def test_a_health_change_to_green_names_no_information_as_its_cause() -> None:
    config = EventConfig(rules=HealthRules())
    sick = with_origin(snap(view(tables=[T], server_errors={1: "refused"})), NONE)
    well = with_origin(snap(view(tables=[T]), seq=2, t=1010.0), NONE)
    _, state = detect_health(None, None, sick, config, facts_of(sick, config.rules), last_ok=None)
    events, _ = detect_health(state, sick, well, config, facts_of(well, config.rules), last_ok=sick)
    (event,) = events
    assert event.message == "health YELLOW -> GREEN"


# =========================================================================== the check


def test_the_check_says_not_configured_exits_ok_and_perfdata_is_u() -> None:
    s = with_origin(snap(view(tables=[T])), NONE)
    r = assess(judged(s))
    assert r.status is ExitCode.OK
    nagios = render(r, "nagios")
    first, *rest = nagios.splitlines()
    assert first.startswith("FLUSS OK: healthy; metrics not configured; ")
    for label in ("disk_usage_max", "write_locked_servers", "kv_rejections"):
        assert f"'{label}'=U;" in first
        assert r.measures[label].why_unknown == "metrics not configured"
    assert any(line.startswith("[GREEN] cluster: metrics not configured: ") for line in rest)
    data = json.loads(render(r, "json"))
    assert data["metrics"] == {
        "origin": "none",
        "not_configured": list(METRIC_RULES),
        "answered": [],
        "failed": [],
    }
    assert ("GREEN", "OK", "metrics_not_configured") in {
        (f["status"], f["check_status"], f["rule"]) for f in data["findings"]
    }
    assert "metrics:      not configured (disk_write_locked" in render(r, "text")


def test_the_check_warns_naming_a_configured_endpoint_that_does_not_answer() -> None:
    url = "http://127.0.0.1:9/metrics"
    error = MetricsError(url, None, None, "unreachable", "ConnectError: refused", 1000.0)
    s = snap(view(tables=[T]), metrics_errors=[error])
    r = assess(judged(s))
    assert r.status is ExitCode.WARNING
    nagios = render(r, "nagios")
    assert nagios.startswith(f"FLUSS WARNING: metrics {url}: unreachable: ConnectError: refused")
    assert f"[UNKNOWN] metrics {url}: unreachable: ConnectError: refused" in nagios
    assert "[UNKNOWN] tablet-server 0: metrics unknown" in nagios
    data = json.loads(render(r, "json"))
    assert data["metrics"]["origin"] == "configured"
    assert data["metrics"]["not_configured"] == []
    assert data["metrics"]["failed"] == [f"{url}: unreachable: ConnectError: refused"]


def test_a_result_without_a_poll_has_no_metrics_object() -> None:
    data = json.loads(render(failure(ExitCode.UNKNOWN, "bad"), "json"))
    assert data["metrics"] is None


# =========================================================================== history


@pytest.mark.parametrize(
    ("recorded", "origin", "status"),
    [
        (with_origin(snap(view(tables=[T])), NONE), NONE, HealthStatus.GREEN),
        (snap(view(tables=[T]), metrics=all_metrics()), CONFIGURED, HealthStatus.GREEN),
        (
            snap(view(tables=[T]), metrics_errors=[metrics_error(None)]),
            CONFIGURED,
            HealthStatus.UNKNOWN,
        ),
    ],
    ids=["not configured", "configured", "configured and silent"],
)
def test_a_past_moment_reads_as_it_did_live(
    recorded: ClusterSnapshot,
    origin: MetricsOrigin,
    status: HealthStatus,
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite"
    with open_writer(path) as w:
        w.record(poll_record(recorded))
    with open_reader(path) as r:
        past = snapshot_at(r, recorded.taken_at)
    assert past is not None and past.snapshot.metrics_origin is origin
    assert health_of(past.snapshot).status is status
    assert health_of(past.snapshot).status is health_of(recorded).status


# =========================================================================== profiles


CONFIG = """\
[profiles.urls]
bootstrap = "127.0.0.1:9123"
metrics = ["http://127.0.0.1:9250/metrics"]

[profiles.port]
bootstrap = "127.0.0.1:9123"
metrics_port = 9249

[profiles.bare]
bootstrap = "127.0.0.1:9123"
"""


def test_a_profile_says_how_its_endpoints_are_chosen() -> None:
    profiles = parse_profiles(CONFIG, Path("config.toml"))
    assert profiles["urls"].metrics_origin is CONFIGURED
    assert profiles["port"].metrics_origin is CONFIGURED
    assert profiles["bare"].metrics_origin is NONE
    assert profiles["bare"].metrics_endpoints(("10.0.0.1",)) == ()
    local = profile_from_local(
        {
            "bootstrap_servers": "127.0.0.1:9123",
            "processes": [
                {"role": "tablet-server", "id": 0, "metrics_url": "http://127.0.0.1:9250/metrics"}
            ],
        }
    )
    assert local.metrics_origin is FOUND
    assert profile_from_local({"bootstrap_servers": "127.0.0.1:9123"}).metrics_origin is NONE


def test_metrics_port_replaces_the_profiles_endpoints_on_the_servers_hosts() -> None:
    profiles = parse_profiles(CONFIG, Path("config.toml"))
    chosen = profiles["urls"].with_metrics_port(9300)
    assert chosen.metrics_origin is CONFIGURED and chosen.metrics_from_hosts
    assert [e.url for e in chosen.metrics_endpoints(("10.0.0.1", "10.0.0.2"))] == [
        "http://10.0.0.1:9300/metrics",
        "http://10.0.0.2:9300/metrics",
    ]
    assert profiles["urls"].with_metrics_port(None) is profiles["urls"]
    assert PollerConfig.from_profile(profiles["bare"]).metrics_origin is NONE
    assert PollerConfig.from_profile(chosen).metrics_from_view


# =========================================================================== the poller


class HostScrape:
    """Endpoints from the view's hosts (as ``metrics_port`` makes them); records each call."""

    def __init__(self) -> None:
        self.views: list[Any] = []

    def endpoints(self, v: Any) -> tuple[MetricsEndpoint, ...]:
        self.views.append(v)
        hosts = sorted({s.host for s in v.servers}) if v is not None else ["bootstrap-host"]
        return tuple(MetricsEndpoint(f"http://{h}:9249/metrics") for h in hosts)


def poller(fakes: Fakes, scrape: HostScrape, **config: Any) -> Poller:
    return fakes.poller(endpoints=scrape.endpoints, **config)


async def test_a_first_poll_scrapes_the_hosts_metadata_names() -> None:
    fakes, scrape = Fakes(), HostScrape()
    p = poller(fakes, scrape, metrics_from_view=True, metrics_origin=CONFIGURED)
    first = await p.poll()
    second = await p.poll()
    assert scrape.views[0] is not None  # this poll's view, not the bootstrap hosts
    assert [e.url for e in fakes.scraped[0]] == ["http://127.0.0.1:9249/metrics"]
    assert first.metrics_origin is second.metrics_origin is CONFIGURED


async def test_without_metrics_from_view_the_first_scrape_runs_beside_the_gather() -> None:
    fakes, scrape = Fakes(), HostScrape()
    s = await poller(fakes, scrape, metrics_origin=NONE).poll()
    assert scrape.views == [None]
    assert s.metrics_origin is NONE


async def test_a_scrape_after_a_slow_gather_gets_only_the_polls_time() -> None:
    fakes, scrape = Fakes(delay=0.15), HostScrape()  # the gather leaves 0.85 s of the poll

    async def slow(endpoints: Sequence[MetricsEndpoint]) -> Sequence[MetricsResult]:
        await asyncio.sleep(10)
        return ()

    p = poller(fakes, scrape, metrics_from_view=True, poll_timeout=1.0)
    p._scrape = slow  # the scraper would wait its own timeout; the poll may not
    s = await asyncio.wait_for(p.poll(), 2)
    assert s.ok and not s.metrics
    assert [(e.kind, e.message) for e in s.metrics_errors] == [
        ("timeout", "no time left in the poll")
    ]


async def test_a_failed_poll_carries_the_origin_too() -> None:
    fakes, scrape = Fakes(views=[RuntimeError("down")]), HostScrape()
    s = await poller(fakes, scrape, metrics_from_view=True, metrics_origin=FOUND).poll()
    assert not s.ok and s.metrics_origin is FOUND
    assert scrape.views == [None]  # no metadata: the bootstrap hosts


# =========================================================================== the option


@pytest.fixture
def looked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Profile]:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    monkeypatch.setenv("KONSOLE_CONFIG", str(config))
    monkeypatch.delenv("FLUSS_BOOTSTRAP", raising=False)
    seen: list[Profile] = []

    async def look(profile: Profile, **kw: Any) -> Any:
        seen.append(profile)
        return failure(ExitCode.WARNING, "looked", cluster=kw["cluster"])

    monkeypatch.setattr(check_cmd, "look", look)
    return seen


@pytest.mark.parametrize(
    ("args", "port", "origin"),
    [
        (["check", "--profile", "bare"], None, NONE),
        (["check", "--profile", "urls"], None, CONFIGURED),
        (["check", "--profile", "urls", "--metrics-port", "9300"], 9300, CONFIGURED),
        (["check", "--bootstrap", "127.0.0.1:9123", "--metrics-port", "9300"], 9300, CONFIGURED),
        (["--metrics-port", "9301", "check", "--profile", "bare"], 9301, CONFIGURED),
    ],
)
def test_metrics_port_reaches_the_check(
    args: list[str], port: int | None, origin: MetricsOrigin, looked: list[Profile]
) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    (profile,) = looked
    assert profile.metrics_port == port and profile.metrics_origin is origin
    if port is not None:
        assert profile.metrics == ()


def test_every_command_that_polls_takes_metrics_port() -> None:
    for command in ("ui", "watch", "check", "record"):
        out = CliRunner().invoke(main, [command, "--help"]).output
        assert "--metrics-port PORT" in out, command
    assert "--metrics-port" in CliRunner().invoke(main, ["--help"]).output
    for command in (["preview"], ["history", "notes"]):
        assert "--metrics-port" not in CliRunner().invoke(main, [*command, "--help"]).output
    bad = CliRunner().invoke(main, ["check", "--metrics-port", "0"])
    assert bad.exit_code == 3 and "FLUSS UNKNOWN" in bad.output


def test_connection_args_apply_the_port_to_the_resolved_profile(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    args = ConnectionArgs(profile="urls", config_path=config, metrics_port=9400)
    chosen = args.resolve()
    assert (chosen.metrics, chosen.metrics_port) == ((), 9400)

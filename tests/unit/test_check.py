"""konsole check: ranges, measures, status from the health rules, outputs, every exit path."""

from __future__ import annotations

import io
import json
import math
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from fluss_proto.coordinators import CoordinatorProbe
from fluss_proto.errors import AuthenticationError, UnreachableError
from fluss_proto.model import ClusterView, HealthStatus
from konsole.cli import check as check_cmd
from konsole.cli.main import main
from konsole.collect.cluster.metrics import MetricsResult
from konsole.collect.cluster.poller import Poller, PollerConfig
from konsole.collect.profiles import MetricsEndpoint, Profile
from konsole.model.check import (
    MEASURES,
    CheckError,
    ExitCode,
    Range,
    Thresholds,
    assess,
    failure,
    measure,
    parse_range,
    parse_thresholds,
    rules_with_thresholds,
    timeout_result,
)
from konsole.model.health import HealthRules
from konsole.model.snapshot import ClusterSnapshot
from konsole.render.check import JSON_SCHEMA, render
from tests._testutil.builders import (
    all_metrics,
    health,
    kv,
    metrics_error,
    probe,
    snap,
    table,
    tm,
    view,
)
from tests._testutil.judging import health_of, judged, judged_as
from tests._testutil.unstarved import CHILD_SAFETY_NET_S, Stopwatch

G, Y, R, U = HealthStatus.GREEN, HealthStatus.YELLOW, HealthStatus.RED, HealthStatus.UNKNOWN
INF = math.inf

T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
HEALTHY = snap(view(tables=[T]), metrics=all_metrics(disk_usage_ratio=0.2, disk_write_locked=False))
GONE = snap(
    view((0, 1), tables=[T]),
    metrics=all_metrics((0, 1), disk_usage_ratio=0.2, disk_write_locked=False),
)
PERF_ITEM = re.compile(r"^'[a-z_]+'=(U|-?\d+(\.\d+)?(s|c|%)?)(;[^; ]*){0,4}$")


def result_of(s: ClusterSnapshot, **kw: Any) -> Any:
    rules = kw.pop("rules", HealthRules())
    thresholds = kw.pop("thresholds", Thresholds())
    rules = rules_with_thresholds(rules, thresholds)
    return assess(judged(s, rules), thresholds=thresholds, rules=rules, **kw)


# =========================================================================== ranges

RANGES: list[tuple[str, float, float, bool, list[float], list[float]]] = [
    # text, start, end, inside, values that alert, values that do not
    ("10", 0, 10, False, [-1, 10.5, 11], [0, 5, 10]),
    ("10:", 10, INF, False, [9.99, 0, -3], [10, 11, 1e9]),
    ("~:10", -INF, 10, False, [10.01, 11], [-1e9, 0, 10]),
    ("10:20", 10, 20, False, [9, 21], [10, 15, 20]),
    ("@10:20", 10, 20, True, [10, 15, 20], [9, 21]),
    ("@10", 0, 10, True, [0, 5, 10], [-1, 11]),
    ("0", 0, 0, False, [1, -1], [0]),
    ("1:1", 1, 1, False, [0, 2], [1]),
    ("0.8", 0, 0.8, False, [0.81], [0.8, 0]),
    ("-5:-1", -5, -1, False, [0, -6], [-5, -3, -1]),
    ("~:", -INF, INF, False, [], [-1e9, 0, 1e9]),
    (" 5 ", 0, 5, False, [6], [5]),
]


@pytest.mark.parametrize(("text", "start", "end", "inside", "alert", "quiet"), RANGES)
def test_range_syntax(
    text: str, start: float, end: float, inside: bool, alert: list[float], quiet: list[float]
) -> None:
    r = parse_range(text)
    assert (r.start, r.end, r.inside) == (start, end, inside)
    assert r.text == text.strip()
    assert [v for v in alert if not r.alerts(v)] == []
    assert [v for v in quiet if r.alerts(v)] == []


@pytest.mark.parametrize(
    "text", ["", " ", "@", ":", "@:", "abc", "10:5", "-5", "1e3", "10::20", "~10", "10:~", "5%"]
)
def test_malformed_ranges_are_check_errors(text: str) -> None:
    with pytest.raises(CheckError, match="malformed range"):
        parse_range(text)


@pytest.mark.parametrize(
    ("warning", "critical", "message"),
    [
        (["nope=1"], [], "unknown rule 'nope'"),
        (["tablet_servers"], [], "takes RULE=RANGE"),
        (["=1"], [], "takes RULE=RANGE"),
        (["tablet_servers=3:", "tablet_servers=2:"], [], "given twice"),
        ([], ["offline_buckets=x"], "malformed range"),
        (["disk_usage_max=0.5:"], [], "upper limit"),
        (["disk_usage_max=@0.9"], [], "upper limit"),
        (["disk_usage_max=2"], [], "upper limit"),
    ],
)
def test_bad_thresholds(warning: list[str], critical: list[str], message: str) -> None:
    with pytest.raises(CheckError, match=message):
        parse_thresholds(warning, critical)


def test_disk_usage_limits_set_the_health_rule_instead_of_a_second_one() -> None:
    t = parse_thresholds(["disk_usage_max=0.5"], ["disk_usage_max=~:0.7"])
    rules = rules_with_thresholds(HealthRules(), t)
    assert (rules.disk_usage_warn, rules.disk_usage_critical) == (0.5, 0.7)
    with pytest.raises(CheckError, match="above the critical"):
        rules_with_thresholds(HealthRules(), parse_thresholds(["disk_usage_max=0.95"]))
    s = snap(view(tables=[T]), metrics=[tm(0, disk_usage_ratio=0.6), tm(1), tm(2)])
    r = result_of(s, thresholds=t)
    assert r.status is ExitCode.WARNING
    assert [(f.rule, f.subject) for f in r.findings] == [("disk_usage", "tablet-server 0")]
    assert "'disk_usage_max'=0.6;0.5;0.7;0;1" in render(r, "nagios")


# =========================================================================== measures


def values(s: ClusterSnapshot, **kw: Any) -> dict[str, float | None]:
    return {k: m.value for k, m in measure(judged(s), **kw).items()}


def test_measures_of_a_healthy_cluster() -> None:
    assert values(HEALTHY) == {
        "tablet_servers": 3,
        "coordinators_active": 1,
        "coordinators_standby": 0,
        "offline_buckets": 0,
        "under_replicated_buckets": 0,
        "disk_usage_max": 0.2,
        "write_locked_servers": 0,
        "kv_rejections": 0,  # 1.0-line metrics (disk usage) and no KV table: none rejected
        "stalled_tables": None,  # one look cannot see a stall
        "poll_latency": 0.1,
        "tiering_stalled_tables": None,  # no storage look in this snapshot
        "kv_snapshot_stale_tables": None,
        "untiered_offsets": None,
        "disk_headroom_min": None,  # capacity: the servers' limits not read in this snapshot
        "write_lock_eta": None,
        "kv_pressure_max": None,
    }
    assert [m.label for m in MEASURES] == list(values(HEALTHY))


def test_measures_name_what_is_unknown_and_why() -> None:
    old = snap(view(tables=[T]), metrics=all_metrics())  # 0.9.1: no disk metrics
    m = measure(judged(old))
    for label in ("disk_usage_max", "write_locked_servers", "kv_rejections"):
        assert m[label].value is None
        assert "1.0 line" in (m[label].why_unknown or "")
    failed = measure(judged(snap(None, failed="refused")))
    assert failed["tablet_servers"].value is None
    assert "the poll failed: refused" in (failed["tablet_servers"].why_unknown or "")
    assert failed["coordinators_active"].value == 1  # the probe still answered
    assert measure(judged(HEALTHY), stalled_tables=2)["stalled_tables"].value == 2


def test_measures_of_faults() -> None:
    assert values(GONE)["tablet_servers"] == 2
    assert values(GONE)["offline_buckets"] == 1  # db.t#2 led by server 2
    assert values(GONE)["under_replicated_buckets"] == 3  # every bucket had a replica on 2
    reported = snap(view(tables=[T]), metrics=[tm(0, under_replicated=5), tm(1), tm(2)])
    assert values(reported)["under_replicated_buckets"] == 5
    server_health = snap(view(tables=[T]), cluster_health=health(R), metrics=all_metrics())
    assert values(server_health)["offline_buckets"] == 1  # 2 of 3 leaders active
    locked = snap(
        view(tables=[T]),
        metrics=[tm(0, disk_write_locked=True, disk_usage_ratio=0.95), tm(1), tm(2)],
    )
    assert values(locked)["write_locked_servers"] == 1
    assert values(locked)["disk_usage_max"] == 0.95
    kvs = snap(
        view(tables=[T]),
        metrics=[
            tm(0, tables=[kv("db.k", rejections=4)]),
            tm(1, tables=[kv("db.k", rejections=3)]),
        ],
    )
    assert values(kvs)["kv_rejections"] == 7
    coords = snap(view(tables=[T]), coords=probe("standby", "active", "unreachable"))
    assert values(coords)["coordinators_active"] == 1
    assert values(coords)["coordinators_standby"] == 1


# =========================================================================== status from rules

# One case per health rule: the check's status is the health status mapped
# (GREEN OK, YELLOW WARNING, RED CRITICAL, UNKNOWN WARNING: it looked, part did not answer).
RULES: list[tuple[str, ClusterSnapshot, ExitCode, str]] = [
    ("healthy", HEALTHY, ExitCode.OK, ""),
    ("unreachable", snap(None, failed="refused"), ExitCode.CRITICAL, "unreachable"),
    (
        "coordinator",
        snap(view(tables=[T]), coords=probe("unreachable", "standby"), metrics=all_metrics()),
        ExitCode.CRITICAL,
        "coordinator",
    ),
    (
        "standby",
        snap(view(tables=[T]), coords=probe("active", "unreachable"), metrics=all_metrics()),
        ExitCode.WARNING,
        "standby",
    ),
    (
        "server_unreachable",
        snap(view(tables=[T], server_errors={1: "timed out"}), metrics=all_metrics()),
        ExitCode.WARNING,
        "server_unreachable",
    ),
    ("leaders", GONE, ExitCode.CRITICAL, "leaders"),
    ("replicas_offline", GONE, ExitCode.CRITICAL, "replicas_offline"),
    (
        "cluster_health YELLOW",
        snap(view(tables=[T]), cluster_health=health(Y, in_sync=7), metrics=all_metrics()),
        ExitCode.WARNING,
        "cluster_health",
    ),
    (
        "cluster_health RED",
        snap(view(tables=[T]), cluster_health=health(R), metrics=all_metrics()),
        ExitCode.CRITICAL,
        "cluster_health",
    ),
    (
        "cluster_health UNKNOWN",
        snap(view(tables=[T]), cluster_health=health(U), metrics=all_metrics()),
        ExitCode.WARNING,
        "cluster_health",
    ),
    (
        "disk_write_locked",
        snap(
            view(tables=[T]),
            metrics=[tm(0, disk_write_locked=True, disk_usage_ratio=0.3), tm(1), tm(2)],
        ),
        ExitCode.CRITICAL,
        "disk_write_locked",
    ),
    (
        "disk_usage warn",
        snap(view(tables=[T]), metrics=[tm(0, disk_usage_ratio=0.85), tm(1), tm(2)]),
        ExitCode.WARNING,
        "disk_usage",
    ),
    (
        "disk_usage critical",
        snap(view(tables=[T]), metrics=[tm(0, disk_usage_ratio=0.95), tm(1), tm(2)]),
        ExitCode.CRITICAL,
        "disk_usage",
    ),
    (
        "under_replicated",
        snap(view(tables=[T]), metrics=[tm(0, under_replicated=2), tm(1), tm(2)]),
        ExitCode.WARNING,
        "under_replicated",
    ),
    (
        "under_min_isr",
        snap(view(tables=[T]), metrics=[tm(0, under_min_isr=1), tm(1), tm(2)]),
        ExitCode.WARNING,
        "under_min_isr",
    ),
    (
        "kv_backpressure",
        snap(view(tables=[T]), metrics=[tm(0, tables=[kv("db.k", pressure=0.9)]), tm(1), tm(2)]),
        ExitCode.WARNING,
        "kv_backpressure",
    ),
    (
        "heap",
        snap(view(tables=[T]), metrics=[tm(0, heap_used=95.0, heap_max=100.0), tm(1), tm(2)]),
        ExitCode.WARNING,
        "heap",
    ),
    (
        "metrics_unknown (silent endpoint)",
        snap(view(tables=[T]), metrics=[tm(0), tm(2)], metrics_errors=[metrics_error(1)]),
        ExitCode.WARNING,
        "metrics_unknown",
    ),
    (
        "metrics_unknown (HTML)",
        snap(
            view(tables=[T]),
            metrics=[tm(0), tm(2)],
            metrics_errors=[metrics_error(1, "not_metrics")],
        ),
        ExitCode.WARNING,
        "metrics_unknown",
    ),
]


@pytest.mark.parametrize(("name", "s", "status", "rule"), RULES, ids=[c[0] for c in RULES])
def test_every_health_rule_sets_the_check_status(
    name: str, s: ClusterSnapshot, status: ExitCode, rule: str
) -> None:
    r = result_of(s)
    assert r.status is status
    if rule:
        assert rule in {f.rule for f in r.findings}
    assert r.status is not ExitCode.OK or not r.findings


def test_read_errors_rule_is_a_warning() -> None:
    from fluss_proto.errors import FlussError
    from fluss_proto.model import GatherError

    err = GatherError("table", "db.t", "GET_TABLE_INFO", FlussError("boom"))
    r = result_of(snap(view(tables=[T], errors=[err]), metrics=all_metrics()))
    assert r.status is ExitCode.WARNING
    assert [f.rule for f in r.findings] == ["read_errors"]


def test_kv_rejections_rising_between_two_looks_warn_naming_the_table() -> None:
    first = snap(view(tables=[T]), metrics=[tm(0, tables=[kv("db.k", rejections=5)]), tm(1), tm(2)])
    later = snap(
        view(tables=[T]), t=1001.0, metrics=[tm(0, tables=[kv("db.k", rejections=9)]), tm(1), tm(2)]
    )
    h = health_of(later, previous=first)
    r = assess(judged_as(later, h))
    assert r.status is ExitCode.WARNING
    (f,) = r.findings
    assert (f.rule, f.subject) == ("kv_rejections", "table db.k")
    assert f.reason == "4 write requests rejected by KV backpressure within 1.0s on tablet-server 0"
    assert health_of(later).status is G  # one look alone: old rejections are no finding
    assert health_of(first, previous=first).status is G  # not rising


def test_thresholds_add_findings_and_the_critical_range_wins() -> None:
    t = parse_thresholds(["tablet_servers=3:"], ["tablet_servers=2:", "poll_latency=@0:1"])
    r = result_of(GONE, thresholds=t)
    threshold = [(f.status, f.subject, f.reason) for f in r.findings if f.rule == "threshold"]
    assert (ExitCode.WARNING, "tablet_servers", "2 is outside 3: (-w)") in threshold
    assert (ExitCode.CRITICAL, "poll_latency", "0.1s is inside @0:1 (-c)") in threshold
    # in the findings' own words (every face's): -w YELLOW, -c RED
    words = {f.subject: f.health for f in r.findings if f.rule == "threshold"}
    assert words == {"tablet_servers": HealthStatus.YELLOW, "poll_latency": HealthStatus.RED}
    r = result_of(HEALTHY, thresholds=parse_thresholds(["tablet_servers=4:"]))
    assert r.status is ExitCode.WARNING
    assert r.findings[0].line() == "[YELLOW] tablet_servers: 3 is outside 4: (-w)"
    assert result_of(HEALTHY, thresholds=parse_thresholds(["stalled_tables=0"])).status is (
        ExitCode.OK
    )  # unknown values never alert (and never count as OK data: perfdata says U)


# =========================================================================== outputs


def test_nagios_output_first_line_perfdata_and_long_lines() -> None:
    text = render(result_of(GONE, thresholds=parse_thresholds(["tablet_servers=3:"])), "nagios")
    first, *rest = text.splitlines()
    status, _, perf = first.partition(" | ")
    assert status.startswith("FLUSS CRITICAL: table db.t: 1 bucket without an active leader")
    assert "active coordinator 127.0.0.1:9123" in status and "2 tablet servers" in status
    items = perf.split(" ")
    assert [i.split("=")[0].strip("'") for i in items] == [m.label for m in MEASURES]
    assert all(PERF_ITEM.match(i) for i in items), items
    assert "'tablet_servers'=2;3:;;0" in items
    assert "'stalled_tables'=U;;;0" in items
    assert "'poll_latency'=0.1s;;;0" in items
    assert "[RED] table db.t: 1 bucket without an active leader" in rest
    assert any(line.startswith("[YELLOW] tablet-server 2: 3 replicas") for line in rest)
    assert "offline buckets (no active leader): db.t#2" in rest
    assert (
        "under-replicated buckets (a replica on tablet-server 2, not alive): db.t#0, db.t#1, db.t#2"
        in rest
    )
    assert "|" not in "".join(rest)


def test_ok_line_and_no_long_output() -> None:
    text = render(result_of(HEALTHY), "nagios")
    assert text.startswith(
        "FLUSS OK: healthy; active coordinator 127.0.0.1:9123; 3 tablet servers | "
    )
    assert "\n" not in text


def test_json_output_is_the_documented_versioned_object() -> None:
    r = result_of(GONE)
    d = json.loads(render(r, "json"))
    assert d["schema"] == JSON_SCHEMA == "konsole.model.check/3"
    assert set(d) == {
        "schema",
        "status",
        "exit_code",
        "summary",
        "time",
        "time_ms",
        "cluster",
        "poll",
        "health",
        "coordinators",
        "findings",
        "measures",
        "buckets",
        "details",
        "metrics",  # added within version 1: how the metrics endpoints were chosen
    }
    assert (d["status"], d["exit_code"]) == ("CRITICAL", 2)
    assert d["time"].endswith("Z") and isinstance(d["time_ms"], int)  # as every konsole JSON
    assert d["health"] == {"status": "RED", "source": "derived"}
    assert d["coordinators"] == {"active": "127.0.0.1:9123", "standby": [], "unreachable": []}
    assert d["poll"] == {"ok": True, "error": None, "timed_out": False}
    assert d["buckets"] == {
        "offline": ["db.t#2"],
        "under_replicated": ["db.t#0", "db.t#1", "db.t#2"],
    }
    assert {"status", "check_status", "rule", "subject", "reason"} == set(d["findings"][0])
    assert (d["findings"][0]["status"], d["findings"][0]["check_status"]) == ("RED", "CRITICAL")
    assert d["measures"]["tablet_servers"] == {
        "value": 2,
        "uom": "",
        "warning": None,
        "critical": None,
        "min": 0,
        "max": None,
        "unknown_because": None,
    }
    assert d["measures"]["stalled_tables"]["value"] is None
    assert d["measures"]["stalled_tables"]["unknown_because"]


def test_a_finding_has_the_same_status_word_in_check_and_watch() -> None:
    """One word set for a finding (docs/health-check.md): check's JSON says RED where
    watch's health line says RED for the same finding; the plugin's words stay on the
    check's own status, first line and exit code, and on each finding as check_status."""
    from konsole.cli.lines import health_line

    health = health_of(GONE)
    r = assess(judged_as(GONE, health))
    check = json.loads(render(r, "json"))
    watch = json.loads(health_line(health, "jsonl", GONE))
    said = {(f["rule"], f["subject"]): f["status"] for f in check["findings"]}
    assert said == {(f["rule"], f["subject"]): f["status"] for f in watch["findings"]}
    assert set(said.values()) == {"RED", "YELLOW"}  # both words are tried
    plugin = {(f["rule"], f["subject"]): f["check_status"] for f in check["findings"]}
    assert {said[k]: plugin[k] for k in said} == {"RED": "CRITICAL", "YELLOW": "WARNING"}
    assert (check["status"], check["exit_code"]) == ("CRITICAL", 2)
    assert render(r, "nagios").startswith("FLUSS CRITICAL: ")


def test_text_output() -> None:
    text = render(result_of(GONE), "text")
    assert text.splitlines()[0].startswith("FLUSS CRITICAL: ")
    assert "  health:       RED (derived)" in text
    assert "  coordinators: active 127.0.0.1:9123" in text
    assert re.search(r"RED\s+leaders\s+table db.t: 1 bucket", text)
    assert re.search(r"stalled_tables\s+unknown  \(needs successive polls", text)


def test_failures_have_one_line_and_no_perfdata() -> None:
    r = failure(ExitCode.UNKNOWN, "no profile 'x'")
    assert render(r, "nagios") == "FLUSS UNKNOWN: no profile 'x'"
    assert json.loads(render(r, "json"))["measures"] == {}
    t = timeout_result(3)
    assert render(t, "nagios") == "FLUSS CRITICAL: no answer within the 3s timeout"
    assert json.loads(render(t, "json"))["poll"] == {
        "ok": False,
        "error": "no answer within the 3s timeout",
        "timed_out": True,
    }


def test_line_breaks_and_pipes_in_reasons_stay_in_their_line() -> None:
    r = failure(ExitCode.UNKNOWN, "a | b\nc")
    assert render(r, "nagios") == "FLUSS UNKNOWN: a / b c"


# =========================================================================== the command


class FakeScraper:
    timeout = 0.05

    def __init__(self, results: Sequence[Sequence[MetricsResult]]) -> None:
        self.results = list(results)

    async def scrape(self, endpoints: Any) -> Sequence[MetricsResult]:
        return self.results.pop(0) if len(self.results) > 1 else self.results[0]

    async def aclose(self) -> None:
        pass


class Script:
    """What the fake cluster answers to one `konsole check`."""

    def __init__(
        self,
        v: ClusterView | BaseException | str = HEALTHY.view,  # type: ignore[assignment]
        metrics: Sequence[Sequence[MetricsResult]] = (
            all_metrics(disk_usage_ratio=0.2, disk_write_locked=False),
        ),
        roles: Sequence[str] = ("active",),
    ) -> None:
        self.view, self.metrics, self.roles = v, metrics, roles
        self.profiles: list[Profile] = []

    def build(self, profile: Profile, poll_timeout: float) -> Any:
        self.profiles.append(profile)
        script = self
        rejected: list[str] = []

        class Client:
            closed = False

            async def close(self) -> None:
                pass

        async def connect() -> Client:
            if isinstance(script.view, AuthenticationError):
                rejected.append(str(script.view))
            if isinstance(script.view, BaseException):
                raise script.view
            return Client()

        async def gather(client: Any, **kw: Any) -> ClusterView:
            import asyncio

            if script.view == "hang":
                await asyncio.sleep(60)
            assert isinstance(script.view, ClusterView)
            return script.view

        async def no_health(client: Any) -> None:
            return None

        async def probe(addresses: Sequence[str]) -> list[CoordinatorProbe]:
            probes = []
            for address in addresses:
                i = int(address.rpartition(":")[2]) - 9123
                role = script.roles[i] if i < len(script.roles) else "unreachable"
                probes.append(CoordinatorProbe(address, role))
            return probes

        scraper = FakeScraper(self.metrics)
        poller = Poller(
            PollerConfig(
                poll_timeout=poll_timeout,
                coordinators=tuple(f"127.0.0.1:{9123 + i}" for i in range(len(self.roles))),
            ),
            connect=connect,
            gather=gather,
            health=no_health,
            probe=probe,
            scrape=scraper.scrape,
            endpoints=lambda v: (MetricsEndpoint("http://127.0.0.1:1/metrics"),),
        )
        return poller, scraper, lambda v: (), rejected


class HarmlessWatchdog:
    """Stands in for :class:`check_cmd.Watchdog` in this process: the real one would end the
    whole pytest run with ``os._exit`` if a slow machine let an in-process check overrun
    its deadline. Records what the check armed and whether it cancelled it; the real
    watchdog is tested in child processes below."""

    armed: ClassVar[list[HarmlessWatchdog]] = []

    def __init__(self, deadline: float, text: str, code: int) -> None:
        self.deadline, self.text, self.code = deadline, text, code
        self.cancelled = False
        HarmlessWatchdog.armed.append(self)

    def start(self) -> HarmlessWatchdog:
        return self

    def say(self, text: str) -> None:
        self.text = text

    def cancel(self) -> None:
        self.cancelled = True


def run(monkeypatch: pytest.MonkeyPatch, script: Script | None, *args: str, **env: str) -> Any:
    if script is not None:
        monkeypatch.setattr(check_cmd, "build_check_poller", script.build)
    monkeypatch.setattr(check_cmd, "process_age", lambda cap=None: 0.0)
    monkeypatch.setattr(check_cmd, "Watchdog", HarmlessWatchdog)
    monkeypatch.setattr(HarmlessWatchdog, "armed", [])
    return CliRunner().invoke(
        main, ["check", *args], env={"FLUSS_BOOTSTRAP": "127.0.0.1:9123", **env}
    )


def test_exit_0_ok(monkeypatch: pytest.MonkeyPatch) -> None:
    result = run(monkeypatch, Script())
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("FLUSS OK: healthy; active coordinator 127.0.0.1:9123")


def test_exit_1_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    script = Script(metrics=[[tm(0, under_replicated=2), tm(1), tm(2)]])
    result = run(monkeypatch, script)
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("FLUSS WARNING: tablet-server 0: 2 under-replicated")


def test_exit_1_for_a_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    result = run(monkeypatch, Script(), "-w", "tablet_servers=5:", "--warning", "poll_latency=30")
    assert result.exit_code == 1, result.output
    assert "'tablet_servers'=3;5:;;0" in result.stdout


def test_exit_2_critical(monkeypatch: pytest.MonkeyPatch) -> None:
    result = run(monkeypatch, Script(GONE.view), "--format", "json")
    assert result.exit_code == 2, result.output
    assert json.loads(result.stdout)["status"] == "CRITICAL"


def test_exit_2_for_a_critical_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    result = run(monkeypatch, Script(), "-c", "coordinators_standby=1:")
    assert result.exit_code == 2, result.output


def test_exit_2_when_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    result = run(monkeypatch, Script(UnreachableError("none answered"), roles=("unreachable",)))
    assert result.exit_code == 2, result.output
    assert result.stdout.startswith("FLUSS CRITICAL: cluster: unreachable (1 failed poll)")
    assert "seen: coordinator 127.0.0.1:9123 unreachable" in result.stdout


def test_exit_2_when_the_poll_times_out_within_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[float] = []  # when the check took its start (process_age is asked then)

    def started_now(cap: float | None = None) -> float:
        asked.append(time.monotonic())
        return 0.0

    monkeypatch.setattr(check_cmd, "build_check_poller", Script("hang").build)
    monkeypatch.setattr(check_cmd, "process_age", started_now)
    monkeypatch.setattr(check_cmd, "Watchdog", HarmlessWatchdog)
    monkeypatch.setattr(HarmlessWatchdog, "armed", [])
    t0 = time.monotonic()
    watch = Stopwatch()  # less the CPU waits of a run at nice 19 beside the live tests
    result = CliRunner().invoke(
        main, ["check", "-t", "1"], env={"FLUSS_BOOTSTRAP": "127.0.0.1:9123"}
    )
    assert watch.elapsed() < 1.0
    assert result.exit_code == 2, result.output
    assert "no answer within" in result.stdout
    # The look itself answered: the watchdog, armed just before the deadline, was cancelled.
    (dog,) = HarmlessWatchdog.armed
    assert dog.cancelled
    # the deadline counts from the check's start (no later than process_age was asked)
    assert t0 < dog.deadline <= asked[0] + 1.0 - check_cmd.WATCHDOG_MARGIN
    assert dog.code == 2 and dog.text.startswith("FLUSS CRITICAL: ")


def test_exit_3_rejected_credentials_without_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = Script(AuthenticationError("SASL/PLAIN as 'admin' failed: invalid credentials"))
    result = run(monkeypatch, script, "--format", "text")
    assert result.exit_code == 3, result.output
    assert result.stdout.startswith("FLUSS UNKNOWN: credentials rejected: SASL/PLAIN as 'admin'")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-w", "nope=1"], "unknown rule 'nope'"),
        (["-c", "offline_buckets=1:0"], "malformed range '1:0'"),
        (["-w", "offline_buckets"], "takes RULE=RANGE"),
        (["--profile", "missing"], "no profile 'missing'"),
        (["--format", "xml"], "Invalid value for '--format'"),
        (["-t", "0"], "Invalid value for '-t'"),
        (["--nope"], "No such option"),
        (["--record", "--history", "/dev/null/x.sqlite"], "cannot write /dev/null/x.sqlite"),
        (["--bootstrap", "host:notaport"], "bad port"),
    ],
)
def test_exit_3_bad_arguments_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str], says: str
) -> None:
    script = Script()
    result = run(monkeypatch, script, *args, KONSOLE_CONFIG=str(tmp_path / "none.toml"))
    assert result.exit_code == 3, result.output
    (line,) = result.stdout.splitlines()
    assert line.startswith("FLUSS UNKNOWN: ") and says in line
    assert script.profiles == []  # nothing was polled


def test_exit_3_missing_password_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        textwrap.dedent(
            """
            [profiles.secure]
            bootstrap = "127.0.0.1:9123"
            sasl_user = "admin"
            password_env = "KONSOLE_TEST_NO_SUCH_VARIABLE"
            """
        )
    )
    monkeypatch.delenv("KONSOLE_TEST_NO_SUCH_VARIABLE", raising=False)
    result = run(monkeypatch, None, "--profile", "secure", "--config", str(config))
    assert result.exit_code == 3, result.output
    assert "KONSOLE_TEST_NO_SUCH_VARIABLE" in result.stdout


def test_exit_3_internal_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(profile: Profile, poll_timeout: float) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(check_cmd, "build_check_poller", broken)
    result = run(monkeypatch, None)
    assert result.exit_code == 3
    assert result.stdout.strip() == "FLUSS UNKNOWN: internal error: RuntimeError: bug"


def test_kv_rejections_rising_look_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_cmd, "KV_WINDOW", 0.01)
    rising = Script(
        metrics=[
            [tm(0, tables=[kv("db.k", rejections=3)]), tm(1), tm(2)],
            [tm(0, tables=[kv("db.k", rejections=8)]), tm(1), tm(2)],
        ]
    )
    result = run(monkeypatch, rising)
    assert result.exit_code == 1, result.output
    assert "[YELLOW] table db.k: 5 write requests rejected by KV backpressure" in result.stdout
    assert "'kv_rejections'=8c;;;0" in result.stdout
    steady = Script(metrics=[[tm(0, tables=[kv("db.k", rejections=3)]), tm(1), tm(2)]])
    result = run(monkeypatch, steady)
    assert result.exit_code == 0, result.output


def run_child(code: str, limit: float = CHILD_SAFETY_NET_S) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` in a fresh interpreter, bounded by ``limit`` seconds: a real watchdog
    ends its process with ``os._exit``, which must never be pytest's."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=limit,
        check=False,
    )


def test_the_watchdog_ends_a_stuck_process_before_the_deadline() -> None:
    # The child would sleep 600 s: only the watchdog ends it within the bound (a wall-clock
    # bound of 10 s from here was missed by a child starved at nice 19 beside the live tests).
    proc = run_child(
        """
        import time
        from konsole.cli.check import Watchdog
        text = "FLUSS CRITICAL: no answer within the 1s timeout"
        Watchdog(time.monotonic() + 0.5, text, 2).start()
        time.sleep(600)
        """
    )
    assert proc.returncode == 2
    assert proc.stdout == "FLUSS CRITICAL: no answer within the 1s timeout\n"


def test_a_cancelled_watchdog_stays_quiet() -> None:
    # Cancelled at once, then the child lives past the deadline: a watchdog that fired
    # anyway would print "never" and end the child with 2. The deadline leaves 3 s for the
    # cancel (1 s was tight for a child starved at nice 19); the sleep counts to it.
    proc = run_child(
        """
        import time
        from konsole.cli.check import Watchdog
        deadline = time.monotonic() + 3.0
        dog = Watchdog(deadline, "never", 2).start()
        dog.cancel()
        time.sleep(max(0.0, deadline - time.monotonic()) + 0.5)
        print("lived past the deadline")
        """
    )
    assert (proc.returncode, proc.stdout) == (0, "lived past the deadline\n"), proc.stderr


def test_unused_range_type_is_exported() -> None:
    assert Range(0, 1, False, "1").alerts(2)


def test_the_cli_does_not_import_the_check_for_other_commands() -> None:
    from konsole.render import check

    assert check_cmd.FORMATS == check.FORMATS
    code = (
        "import sys, konsole.cli.main;"
        " print(bool({'konsole.model.check', 'konsole.render.check'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "False"


def test_metrics_endpoint_answering_500_is_a_warning_never_ok() -> None:
    s = snap(
        view(tables=[T]), metrics=[tm(0), tm(2)], metrics_errors=[metrics_error(1, "http_status")]
    )
    r = result_of(s)
    assert r.status is ExitCode.WARNING
    assert ("metrics_unknown", "tablet-server 1") in {(f.rule, f.subject) for f in r.findings}


def test_process_age_counts_the_interpreter_start() -> None:
    # A child that has lived at least 1.5 s says so (within the 5 s cap); 0.0, the answer
    # when /proc cannot be read, fails.
    proc = run_child(
        """
        import time
        time.sleep(1.5)
        from konsole.cli.check import process_age
        print(process_age())
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert 1.5 <= float(proc.stdout) <= 5.0


@pytest.mark.parametrize(
    ("start_ticks", "uptime", "want"),
    [
        (100_000, 1002.5, 2.5),  # started at 1000 s after boot, now 1002.5: 2.5 s old
        (100_000, 1100.0, 5.0),  # a long-running process counts as at most 5 s
        (100_000, 999.0, 0.0),  # clocks read out of order never give a negative age
    ],
)
@pytest.mark.parametrize("uncapped", [False, True])
def test_process_age_reads_proc_and_is_capped(
    monkeypatch: pytest.MonkeyPatch, start_ticks: int, uptime: float, want: float, uncapped: bool
) -> None:
    # /proc/self/stat: the start time (in clock ticks since boot) is field 22; a command
    # name with spaces and parentheses must not shift the fields.
    stat = "42 (a (b) c) S " + " ".join(["0"] * 18) + f" {start_ticks} 0 0\n"
    files = {"/proc/self/stat": stat, "/proc/uptime": f"{uptime} 0.0\n"}
    monkeypatch.setattr(check_cmd.os, "sysconf", lambda name: 100)
    monkeypatch.setattr(
        check_cmd, "open", lambda path, **kw: io.StringIO(files[path]), raising=False
    )
    if uncapped:  # a process started as konsole: all of its age
        assert check_cmd.process_age(None) == pytest.approx(max(uptime - start_ticks / 100, 0))
    else:
        assert check_cmd.process_age() == pytest.approx(want)


#: `konsole check` as its own process (argv, then main() without arguments, as the console
#: script calls it), with the process's age and the interpreter's clean-up made visible:
#: argv[1] is the age process_age answers; the caps it was asked with go to stderr.
OWN_PROCESS = """
import atexit, sys
import konsole.cli.check as check
age = float(sys.argv[1])
def process_age(cap=5.0):
    print(f"cap {cap}", file=sys.stderr)
    return age
check.process_age = process_age
atexit.register(lambda: print("interpreter clean-up ran", file=sys.stderr))
from konsole.cli.main import main
sys.argv = ["konsole", "check", "--bootstrap", "127.0.0.1:1", "-t", sys.argv[2]]
main()
"""


def test_a_check_of_its_own_process_counts_its_whole_age_and_ends_with_the_answer() -> None:
    """Issue 40: `check -t 6` ran 6.66 s on a loaded machine. Two causes: a start-up past
    5 s counted as 5 (the cap meant for hosts that run the check in-process), and the
    interpreter's clean-up after the answer (0.5-1 s under load). A process started as
    konsole counts all of its age and ends as soon as its answer is out."""
    # started 7 s ago (a starved start-up) with -t 6: the deadline is gone, answer at once
    late = subprocess.run(
        [sys.executable, "-c", OWN_PROCESS, "7.0", "6"],
        capture_output=True,
        text=True,
        timeout=CHILD_SAFETY_NET_S,
        check=False,
    )
    assert late.stdout == "FLUSS CRITICAL: no answer within the 6s timeout\n", late
    assert (late.returncode, late.stderr) == (2, "cap None\n"), late
    # started just now: the look answers (nobody at port 1), and nothing runs after it
    prompt = subprocess.run(
        [sys.executable, "-c", OWN_PROCESS, "0.0", "200"],
        capture_output=True,
        text=True,
        timeout=CHILD_SAFETY_NET_S,
        check=False,
    )
    assert prompt.stdout.startswith("FLUSS CRITICAL: cluster: unreachable"), prompt
    assert (prompt.returncode, prompt.stderr) == (2, "cap None\n"), prompt


def test_a_host_running_the_check_counts_at_most_5_s_of_its_age(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In-process (CliRunner, a host older than any timeout) the age is capped, and the
    process is not ended: the result comes back as an exit code."""
    caps: list[float | None] = []

    def process_age(cap: float | None = 5.0) -> float:
        caps.append(cap)
        return 0.0

    monkeypatch.setattr(check_cmd, "process_age", process_age)
    monkeypatch.setattr(check_cmd, "Watchdog", HarmlessWatchdog)
    monkeypatch.setattr(HarmlessWatchdog, "armed", [])
    result = CliRunner().invoke(main, ["check", "--bootstrap", "127.0.0.1:1", "-t", "200"])
    assert result.exit_code == 2, result.output
    assert caps == [5.0] == [check_cmd.HOST_AGE_CAP]


def test_process_age_is_zero_without_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_proc(path: str, **kw: Any) -> Any:
        raise FileNotFoundError(path)

    monkeypatch.setattr(check_cmd, "open", no_proc, raising=False)
    assert check_cmd.process_age() == 0.0


def test_help_with_h_as_plugins_do() -> None:
    result = CliRunner().invoke(main, ["check", "-h"])
    assert result.exit_code == 0
    assert "-w, --warning RULE=RANGE" in result.output


def test_record_appends_the_poll_and_the_status_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from store import open_reader

    history = tmp_path / "h.sqlite"
    for _ in range(2):
        result = run(monkeypatch, Script(), "--record", "--history", str(history))
        assert result.exit_code == 0, result.output
        assert "not recorded" not in result.stderr
    reader = open_reader(history)
    try:
        notes = reader.notes()
        assert len(notes) == 2
        assert all(n.text.startswith("konsole check: FLUSS OK: healthy") for n in notes)
        assert all(n.subject == "cluster" for n in notes)
        assert len(reader.polls()) == 2
    finally:
        reader.close()


def test_record_beside_a_running_recorder_adds_only_the_note(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from store import open_reader, open_writer

    history = tmp_path / "h.sqlite"
    holder = open_writer(history)  # as `konsole record` holds it
    try:
        result = run(monkeypatch, Script(), "--record", "--history", str(history))
        assert result.exit_code == 0, result.output
        assert "not recorded" not in result.stderr
    finally:
        holder.close()
    reader = open_reader(history)
    try:
        assert [n.text[:26] for n in reader.notes()] == ["konsole check: FLUSS OK: h"]
        assert reader.polls() == []
    finally:
        reader.close()


def test_record_into_a_foreign_file_is_refused_before_polling(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a history")
    script = Script()
    result = run(monkeypatch, script, "--record", "--history", str(foreign))
    assert result.exit_code == 3, result.output
    assert result.stdout.startswith("FLUSS UNKNOWN: --record: ")
    assert script.profiles == [] and foreign.read_text() == "not a history"


def test_the_check_runs_without_the_cycle_collector_and_gives_it_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One bounded look turns the cycle collector off (its passes found next to nothing to
    free) and restores it, so a caller's process is left as it was."""
    import gc

    seen: list[bool] = []

    def run_check(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return failure(ExitCode.CRITICAL, "cluster unreachable")

    monkeypatch.setattr(check_cmd, "run_check", run_check)
    assert gc.isenabled()
    result = CliRunner().invoke(main, ["check", "--bootstrap", "127.0.0.1:1"])
    assert (seen, result.exit_code, gc.isenabled()) == ([False], 2, True)
    gc.disable()
    try:  # a caller that had it off keeps it off
        with check_cmd.without_cyclic_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()

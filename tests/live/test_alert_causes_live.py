"""One page per dead tablet server, judged the same by both alert paths (issue 38), on a real
Fluss cluster, both server generations.

One cluster per generation (module-scoped: 1 coordinator, 3 tablet servers, no tables at
first; the demo tables written with pyfluss before the last test). One ``konsole serve
--local`` polls it every second and posts its alerts to a real Alertmanager pair (two
``prometheus-alertmanager`` gossiping on loopback, running the shipped
deploy/alertmanager/konsole-alertmanager.yml with its webhook pointed at the test and its
group timers shortened); a real Prometheus scrapes serve's ``/metrics`` every second and
evaluates the shipped deploy/prometheus/konsole-rules.yml, whose ``FlussTabletServerDown``
holds are set to serve's ``--alert-for`` / ``--alert-keep-firing`` of this test (the file
ships serve's defaults; tests/system/test_rules_file.py holds them equal).

Each test faults tablet server 1 (SIGKILL, or a graceful stop) and keeps it down past the
hand-over (the coordinator drops it from metadata), then starts it again. It passes when
the webhook received exactly one firing and one resolved notification, both of the one
``FlussTabletServerDown{server="1"}`` (nothing resolved while the server was down, none of
its consequences paged), and Prometheus's rule fired and resolved within one scrape plus
one evaluation interval of serve's. Every wait is bounded; everything is on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from konsole.localcluster import LocalCluster
from konsole.localcluster.seed_local import seed_local
from konsole.model.causes import SERVER_DOWN_ALERT
from tests._testutil.alertmanager import (
    PEER_TIMEOUT_S,
    AlertmanagerProcess,
    Webhook,
    free_port,
    pair,
    wait_for,
)
from tests._testutil.processes import terminate
from tests._testutil.prometheus import Prometheus, running_prometheus
from tests._testutil.system_tools import need_binary
from tests.conftest import TABLET_SERVERS, FlussServer, our_java_processes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

VICTIM = 1
#: serve's --alert-for and --alert-keep-firing here, and the rules file's holds in this test.
FOR_S = 10
KEEP_S = 10
#: serve's poll interval, Prometheus's scrape and evaluation interval, the sampler's period.
POLL_S = 1.0
SCRAPE_S = 1.0
SAMPLE_S = 0.25
#: The pair's group_interval: well above its peer timeout (see PEER_TIMEOUT_S).
GROUP_INTERVAL_S = 3 * PEER_TIMEOUT_S
#: Polls the alert must hold after the hand-over (issue 38: it resolved 10 s into it).
HELD_POLLS = 15
ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "konsole-rules.yml"
AM_CONFIG = ROOT / "deploy" / "alertmanager" / "konsole-alertmanager.yml"
_DOWN = {"alertname": SERVER_DOWN_ALERT, "server": str(VICTIM)}


def _replaced(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in text, f"the shipped file changed: {old!r} not found"
        text = text.replace(old, new, 1)
    return text


def rules_for_test(work: Path) -> Path:
    """The shipped rules file, the dead-server alert's holds set to this test's."""
    text = RULES.read_text()
    head, _, rest = text.partition(f"- alert: {SERVER_DOWN_ALERT}\n")
    rest = _replaced(
        rest,
        ("for: 30s", f"for: {FOR_S}s"),
        ("keep_firing_for: 30s", f"keep_firing_for: {KEEP_S}s"),
    )
    path = work / "konsole-rules.yml"
    path.write_text(f"{head}- alert: {SERVER_DOWN_ALERT}\n{rest}")
    return path


def alertmanager_config(hook: Webhook) -> str:
    """The shipped Alertmanager example, notifying the test's webhook, timers shortened."""
    return _replaced(
        AM_CONFIG.read_text(),
        ("http://127.0.0.1:5001/", hook.url),
        ("group_wait: 30s", "group_wait: 1s"),
        ("group_interval: 5m", f"group_interval: {GROUP_INTERVAL_S:g}s"),
    )


Series = list[tuple[str, dict[str, str], float]]


def _total(series: Series, name: str, **labels: str) -> float:
    return sum(v for n, lab, v in series if n == name and labels.items() <= lab.items())


def _down_firing(series: Series) -> bool:
    """Whether serve fires its server-down alert in one scrape of its /metrics."""
    return _total(series, "konsole_alerts_firing", alertname=SERVER_DOWN_ALERT) > 0


@dataclass
class Rig:
    server: FlussServer
    lc: LocalCluster
    hook: Webhook
    ams: list[AlertmanagerProcess]
    proc: subprocess.Popen[str]
    port: int
    prom: Prometheus
    stderr: list[str] = field(default_factory=list)

    def drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip("\n"))

    def scrape(self) -> Series:
        text = httpx.get(f"http://127.0.0.1:{self.port}/metrics", timeout=5).text
        return [
            (s.name, s.labels, s.value)
            for family in text_string_to_metric_families(text)
            for s in family.samples
        ]

    def value(self, name: str, **labels: str) -> float:
        return _total(self.scrape(), name, **labels)

    def serve_firing(self) -> bool:
        return _down_firing(self.scrape())

    def prom_state(self) -> str | None:
        for a in self.prom.alerts():
            if _DOWN.items() <= a["labels"].items():
                return str(a["state"])
        return None


@pytest.fixture(scope="module")
def rig(fluss_server: FlussServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    work = tmp_path_factory.mktemp(f"causes-{fluss_server.generation}")
    lc = LocalCluster(work / "cluster")
    hook = Webhook().start()
    ams = pair(need_binary("prometheus-alertmanager"), work, hook.url, alertmanager_config(hook))
    proc: subprocess.Popen[str] | None = None
    try:
        lc.start(**fluss_server.start_kwargs(), tablet_servers=TABLET_SERVERS, ready_timeout=180)
        for am in ams:
            am.start()
        config = work / "config.toml"  # empty: nothing of the operator's config leaks in
        config.write_text("")
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "konsole.cli", "serve", "--local", "--run-dir", str(lc.run_dir),
             "--config", str(config), "--no-history", "--interval", f"{POLL_S:g}",
             "--listen", f"127.0.0.1:{port}", "--alert-for", str(FOR_S),
             "--alert-keep-firing", str(KEEP_S), "--alert-resend", "2",
             *(arg for am in ams for arg in ("--alertmanager", am.url))],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        with running_prometheus(
            work / "prometheus", [f"127.0.0.1:{port}"], SCRAPE_S, rules=[rules_for_test(work)]
        ) as prom:
            r = Rig(fluss_server, lc, hook, ams, proc, port, prom)
            threading.Thread(target=r.drain, daemon=True).start()
            prom.wait_for("serve polled 3 times", lambda: _polls(r) >= 3, timeout=60)
            yield r
            assert proc.poll() is None, f"serve exited during the tests: {r.stderr[-5:]}"
    finally:
        if proc is not None:
            terminate(proc)
        for am in ams:
            am.stop()
        hook.stop()
        lc.stop(graceful=False)
        assert our_java_processes(lc.run_dir) == [], "Java processes of the cluster remain"


def _polls(r: Rig) -> float:
    try:
        return r.value("konsole_polls_total")
    except httpx.HTTPError:
        return 0.0


@dataclass
class Sampler:
    """Every SAMPLE_S: (time, serve firing the alert, Prometheus's state of its rule)."""

    rig: Rig
    rows: list[tuple[float, bool, str | None]] = field(default_factory=list)
    #: (time, serve's non-zero findings by rule) at each sample: what a failure shows.
    findings: list[tuple[float, tuple[tuple[str, float], ...]]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        deadline = time.monotonic() + 280
        while not self.stop.is_set() and time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError, AssertionError):
                now, series = time.time(), self.rig.scrape()
                self.rows.append((now, _down_firing(series), self.rig.prom_state()))
                by_rule: dict[str, float] = {}
                for n, lab, v in series:
                    if n == "konsole_health_findings" and v:
                        by_rule[lab.get("rule", "?")] = by_rule.get(lab.get("rule", "?"), 0) + v
                    if n == "konsole_tablet_server_up" and lab.get("server") == str(VICTIM):
                        by_rule["(up)"] = v
                self.findings.append((now, tuple(sorted(by_rule.items()))))
            self.stop.wait(SAMPLE_S)

    def first(self, since: float, serve: bool | None, prom: Any) -> float:
        """The first sample from ``since`` where serve is ``serve`` / Prometheus is ``prom``
        (either may be None: not looked at)."""
        for t, s, p in self.rows:
            if t >= since and (serve is None or s == serve) and (prom is None or p == prom[0]):
                return t
        raise AssertionError(f"no sample with serve={serve} prom={prom} since {since}")

    def gap_before(self, t: float) -> float:
        """Seconds between the sample at ``t`` and the one before it: how late the sampler
        may have seen the change there (SAMPLE_S on a quiet machine, more under load)."""
        times = [row[0] for row in self.rows]
        i = times.index(t)
        return t - times[i - 1] if i > 0 else SAMPLE_S


def _transitions(sampler: Sampler) -> list[tuple[float, bool, str | None]]:
    """The samples where serve's or Prometheus's view changed (for a failure's message)."""
    start = sampler.rows[0][0] if sampler.rows else 0.0
    out, last = [], None
    for t, s, p in sampler.rows:
        if (s, p) != last:
            out.append((round(t - start, 1), s, p))
            last = (s, p)
    return out


def _since(alerts: list[dict[str, Any]], t: float) -> list[dict[str, Any]]:
    """The alerts that began at ``t`` or later (a poll's slack before it)."""
    return [a for a in alerts if datetime.fromisoformat(a["startsAt"]).timestamp() >= t - POLL_S]


def _story(sampler: Sampler, r: Rig, *more: object) -> str:
    """A failure's whole message (a string: pytest shortens any other): the samples where
    serve's or Prometheus's view or serve's findings changed, from the fault on (UTC)."""
    lines = [repr(m) for m in more]
    start = sampler.rows[0][0] if sampler.rows else 0.0
    lines.append(f"fault at {time.strftime('%H:%M:%S', time.gmtime(start))} UTC; then:")
    lines += [f"  +{t:.1f}s serve firing={s} prometheus={p}" for t, s, p in _transitions(sampler)]
    last = None
    for t, found in sampler.findings:
        if found != last:
            lines.append(f"  +{t - start:.1f}s findings {dict(found)}")
            last = found
    lines += [f"  serve: {line}" for line in r.stderr[-5:]]
    return "\n".join(lines)


def _alive(lc: LocalCluster, sid: int) -> bool:
    return any(
        p.role == "tablet-server" and p.id == sid and p.alive for p in lc.describe().processes
    )


def _down_findings(r: Rig) -> float:
    """Findings that say the server left metadata (the hand-over has happened)."""
    return sum(
        r.value("konsole_health_findings", rule=rule)
        for rule in ("server_gone", "replicas_offline")
    )


def fault_and_recover(r: Rig, fault: Callable[[], None]) -> None:
    mark = r.hook.mark()
    sampler = Sampler(r)
    watcher = threading.Thread(target=sampler.run, daemon=True)
    watcher.start()
    fault_at = time.time()
    try:
        fault()
        fired = r.hook.wait_alert(mark, "firing", FOR_S + 60, **_DOWN)
        # Down past the hand-over: the coordinator drops it, serve judges it gone, and the
        # alert holds (issue 38: it resolved 10 s after the kill, the server still dead).
        handed = wait_for(lambda: _down_findings(r) >= 1, 60)
        assert handed, f"serve never judged tablet server {VICTIM} gone: {r.stderr[-5:]}"
        polls = _polls(r)
        assert wait_for(lambda: _polls(r) >= polls + HELD_POLLS, HELD_POLLS * 3)
        assert r.serve_firing(), "serve's alert resolved while the server is down"
        assert r.prom_state() == "firing", "Prometheus's alert resolved while the server is down"
        early = [a for a in _since(r.hook.alerts(mark), fault_at) if a["status"] == "resolved"]
        assert early == [], _story(sampler, r, early)
        down_until = time.time()

        r.lc.start_server("ts", VICTIM, 120.0)
        resolved = r.hook.wait_alert(mark, "resolved", 90, **_DOWN)
        assert resolved["startsAt"] == fired["startsAt"]
        r.prom.wait_for("Prometheus's rule resolved", lambda: r.prom_state() is None, 60)
        # A duplicate from the pair's second member would come within a group interval and a
        # peer timeout (counted below: nothing is expected to come).
        wait_for(lambda: len(r.hook.received) > mark + 2, GROUP_INTERVAL_S + PEER_TIMEOUT_S + 1)
    finally:
        sampler.stop.set()
        watcher.join(timeout=10)
        if not _alive(r.lc, VICTIM):  # a failed test leaves the cluster whole for the next
            r.lc.start_server("ts", VICTIM, 120.0)

    # Notifications of this fault: an alert that began before it (a late resolve) is not.
    notes = [n for n in r.hook.received[mark:] if _since(n.alerts, fault_at)]
    described = [
        (n.body["status"], [a["labels"]["alertname"] for a in _since(n.alerts, fault_at)])
        for n in notes
    ]
    detail = [
        (round(n.received - sampler.rows[0][0], 1), n.body.get("externalURL"), n.body["status"],
         [(a["labels"]["alertname"], a["status"], a["startsAt"], a["endsAt"]) for a in n.alerts])
        for n in notes
    ]  # fmt: skip
    assert described == [
        ("firing", [SERVER_DOWN_ALERT]),
        ("resolved", [SERVER_DOWN_ALERT]),
    ], _story(sampler, r, detail)
    assert notes[0].alerts[0]["labels"]["server"] == str(VICTIM)
    # Both paths on the same polls: Prometheus's rule lags serve by at most one scrape (the
    # series' age), one interval more (on a quiet machine the rule fired 2.7-3.4 s after
    # serve's alert in 4 of 10 runs; why is not known: a scrape missed at its 1 s timeout
    # would do it) plus one evaluation, and the sampler's own period on each side (a sample
    # is two HTTP calls: under load it comes later than SAMPLE_S).
    start = sampler.rows[0][0]
    for serve_t, prom_t in (
        (sampler.first(start, True, None), sampler.first(start, None, ("firing",))),
        (sampler.first(down_until, False, None), sampler.first(down_until, None, (None,))),
    ):
        slack = 3 * SCRAPE_S + sampler.gap_before(serve_t) + sampler.gap_before(prom_t)
        assert abs(prom_t - serve_t) <= slack, _story(
            sampler, r, (serve_t - start, prom_t - start, slack)
        )


# ------------------------------------------------------------------ empty cluster


def test_empty_cluster_killed_server_is_one_page_until_it_is_back(rig: Rig) -> None:
    """Issue 38's repro: FlussTabletServerUnreachable fired 8 s after the kill and resolved
    10 s later, the server still dead (the coordinator had dropped it; no replicas)."""
    fault_and_recover(rig, lambda: rig.lc.kill("ts", VICTIM))


def test_empty_cluster_gracefully_stopped_server_is_one_page_until_it_is_back(rig: Rig) -> None:
    """Issue 38's repro: `konsole cluster stop-server ts 1` on the empty cluster, and no
    alert reached the webhook within 180 s."""
    fault_and_recover(rig, lambda: rig.lc.stop_server("ts", VICTIM))


# ------------------------------------------------------------------ seeded cluster


def test_seeded_cluster_killed_server_is_one_page_not_six(rig: Rig) -> None:
    """The demo tables (replication 3: the server holds replicas and leads buckets): issue
    38 saw six pages for one kill (Unreachable resolving as Down took over, UnderReplicated,
    ReadErrors firing and resolving, MetricsUnknown twice)."""
    bootstrap = rig.lc.describe().bootstrap_servers
    # on 0.9.1 under load: a table created anew, or the coordinator restarted (seed_local)
    asyncio.run(seed_local(rig.lc, bootstrap, replication_factor=TABLET_SERVERS))
    polls = _polls(rig)
    assert wait_for(lambda: _polls(rig) >= polls + 3, 30)
    # The premise is a healthy cluster before the kill: wait until serve finds nothing and
    # fires nothing (r14 on 0.9.1: a FlussReadErrors page, 8 buckets of demo.clickstream
    # without a leader in serve's metadata, resolved after the kill; it likely began first).
    assert wait_for(lambda: _quiet(rig), 90), f"not quiet after the seed: {_quiet(rig, say=True)}"
    fault_and_recover(rig, lambda: rig.lc.kill("ts", VICTIM))


def _quiet(r: Rig, *, say: bool = False) -> bool | str:
    """Serve has no finding and fires no alert (``say``: what it has instead)."""
    try:
        series = r.scrape()
    except httpx.HTTPError as exc:
        return f"serve's /metrics: {exc!r}" if say else False
    left = [
        (n, lab.get("rule") or lab.get("alertname"), v)
        for n, lab, v in series
        if n in ("konsole_health_findings", "konsole_alerts_firing") and v
    ]
    return repr(left) if say else not left

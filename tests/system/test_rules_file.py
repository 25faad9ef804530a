"""The shipped Prometheus rules file (deploy/prometheus/konsole-rules.yml): promtool accepts
it, its unit tests pass (two alerts fire on synthetic series, a one-scrape blip does not),
its alertnames are konsole's own (konsole.model.alerts) and its expressions read only
families serve exports. It is tested against serve's rule table: the dead-server alert
has serve's series, severity and holds, the alerts that follow from it wait while it lasts
(konsole.model.causes), and every alert serve raises is in the file or said why not. The
shipped Alertmanager example (deploy/alertmanager/konsole-alertmanager.yml) passes
``amtool check-config`` and inhibits exactly those consequences."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from konsole.model.alerts import ALERTNAMES, EVENT_ALERTS, AlertSettings
from konsole.model.causes import (
    CONSEQUENCE_RULES,
    SERVER_DOWN_ALERT,
    SERVER_DOWN_SEVERITY,
)
from konsole.serve.exposition.families import FAMILIES
from tests._testutil.system_tools import need_binary

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
RULES = DEPLOY / "konsole-rules.yml"
ALERTMANAGER = DEPLOY.parent / "alertmanager" / "konsole-alertmanager.yml"
#: Alerts serve raises that the rules file cannot: the exposition has no series for them.
SERVE_ONLY = {
    "FlussNoData": "serve itself has not polled yet: KonsolePollsStale is the file's",
    "FlussUnderMinIsr": "a server metric serve judges; not exported",
    "FlussHeapHigh": "a server metric serve judges; not exported",
    "FlussReadErrors": "the poll's own read failures; not exported per item",
    "FlussTieringStalled": "storage findings; not exported",
    "FlussKvSnapshotStale": "storage findings; not exported",
    "FlussLakeLagHigh": "storage findings; not exported",
    "FlussCoordinatorFailover": "an event, not a state: the exposition counts events",
}
#: The `unless` every consequence's expression ends with (konsole.model.causes).
WHILE_UP = f'unless on (cluster) ALERTS{{alertname="{SERVER_DOWN_ALERT}"}}'
# Families the sinks keep besides the per-poll ones (exposition sink, alert deliveries).
OTHER_FAMILIES = {"konsole_poll_age_seconds", "konsole_alertmanager_up"}


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [need_binary("promtool"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=DEPLOY,
    )


def test_promtool_check_rules() -> None:
    done = promtool("check", "rules", RULES.name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_promtool_test_rules() -> None:
    done = promtool("test", "rules", "konsole-rules.test.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_alertnames_and_families_are_konsoles() -> None:
    text = RULES.read_text()
    fluss_alerts = set(re.findall(r"alert: (Fluss\w+)", text))
    assert fluss_alerts <= set(ALERTNAMES.values())
    assert {"FlussCoordinatorDown", "FlussWritesRejected", "FlussBucketsOffline"} <= fluss_alerts
    exported = {f.name for f in FAMILIES} | OTHER_FAMILIES
    used = set(re.findall(r"\b(konsole_[a-z_]+)", text)) - {"konsole_fluss", "konsole_serve"}
    assert used <= exported, used - exported


def rules() -> list[dict[str, str]]:
    """Each ``- alert:`` of the file: its name, expr, for, keep_firing_for and severity."""
    out = []
    for block in RULES.read_text().split("\n      - alert: ")[1:]:
        rule = {"alert": block.split()[0]}
        for key, pattern in (
            ("expr", r"\n        expr: (.+)"),
            ("for", r"\n        for: (\S+)"),
            ("keep_firing_for", r"\n        keep_firing_for: (\S+)"),
            ("severity", r"labels: \{severity: (\w+)\}"),
        ):
            found = re.search(pattern, block)
            if found:
                rule[key] = found.group(1).strip()
        out.append(rule)
    return out


def seconds(duration: str) -> float:
    value, unit = re.fullmatch(r"(\d+)([smh])", duration).groups()  # type: ignore[union-attr]
    return float(value) * {"s": 1, "m": 60, "h": 3600}[unit]


def test_the_dead_server_alert_is_judged_as_serve_judges_it() -> None:
    """Same series (serve's own judgement), severity and holds (serve's defaults) as the
    in-process alert: both paths fire and resolve on the same polls."""
    (down,) = [r for r in rules() if r["alert"] == SERVER_DOWN_ALERT]
    defaults = AlertSettings()
    assert down["expr"] == "konsole_tablet_server_up == 0"
    assert down["severity"] == SERVER_DOWN_SEVERITY
    assert seconds(down["for"]) == defaults.for_s
    assert seconds(down["keep_firing_for"]) == defaults.keep_firing_s


def test_what_follows_from_a_dead_server_waits_while_it_lasts() -> None:
    consequences = {ALERTNAMES[rule] for rule in CONSEQUENCE_RULES}
    in_file = [r for r in rules() if r["alert"] in consequences]
    assert in_file, "no consequence in the file: nothing proven"
    for rule in in_file:
        assert rule["expr"].endswith(WHILE_UP), rule
    others = [r for r in rules() if r["alert"] not in consequences]
    assert not [r for r in others if WHILE_UP in r["expr"]]


def test_every_alert_serve_raises_is_in_the_file_or_said_why() -> None:
    serve = set(ALERTNAMES.values()) | set(EVENT_ALERTS.values())
    in_file = {r["alert"] for r in rules() if r["alert"].startswith("Fluss")}
    assert in_file <= serve
    missing = serve - in_file
    assert missing <= set(SERVE_ONLY), missing - set(SERVE_ONLY)
    assert not (in_file & set(SERVE_ONLY)), in_file & set(SERVE_ONLY)
    assert set(SERVE_ONLY) <= serve, set(SERVE_ONLY) - serve


def test_amtool_checks_the_alertmanager_example_and_it_inhibits_the_consequences() -> None:
    done = subprocess.run(
        [need_binary("amtool"), "check-config", str(ALERTMANAGER)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout
    text = ALERTMANAGER.read_text()
    (targets,) = re.findall(
        rf'source_matchers: \[alertname="{SERVER_DOWN_ALERT}"\]\n\s+target_matchers:\n'
        r'\s+- alertname=~"([\w|]+)"',
        text,
    )
    assert set(targets.split("|")) == {ALERTNAMES[rule] for rule in CONSEQUENCE_RULES}
    assert f'alertname=~"{SERVER_DOWN_ALERT}|FlussBucketsOffline"' in text

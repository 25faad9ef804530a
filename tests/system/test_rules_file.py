"""The shipped Prometheus rules file (deploy/prometheus/konsole-rules.yml): promtool accepts
it, its unit tests pass (two alerts fire on synthetic series, a one-scrape blip does not),
its alertnames are konsole's own (konsole.model.alerts) and its expressions read only
families serve exports."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from konsole.collect.exposition.families import FAMILIES
from konsole.model.alerts import ALERTNAMES
from tests._testutil.system_tools import need_binary

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
RULES = DEPLOY / "konsole-rules.yml"
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

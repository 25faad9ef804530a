"""serve's alert settings ([alerts] in the config file, the options over it) and the
delivery families a scrape reads (konsole.serve.alerts.metrics)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from prometheus_client import CollectorRegistry, generate_latest

from konsole.cli.main import main
from konsole.collect.profiles import parse_profiles
from konsole.errors import ProfileError
from konsole.model.alerts import AlertSettings
from konsole.serve.alerts.config import AlertConfig, load_alert_config
from konsole.serve.alerts.delivery import AlertmanagerSink
from konsole.serve.alerts.metrics import AlertCollector
from tests._testutil.builders import all_metrics, snap, table, view
from tests._testutil.judging import judged


def test_alerts_table(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[alerts]\nalertmanager = ['http://a:9093', 'http://b:9093']\n"
        "for = 60\nresend = 20\nkeep_firing = 0\nevent_hold = 120\n"
        "[profiles.p]\nbootstrap = 'h'\n"
    )
    config = load_alert_config(path)
    assert config == AlertConfig(("http://a:9093", "http://b:9093"), 60.0, 0.0, 120.0, 20.0)
    assert config.settings == AlertSettings(60.0, 0.0, 120.0)
    assert list(parse_profiles(path.read_text(), path)) == ["p"]  # profiles still parse


def test_no_file_or_no_table_is_the_defaults(tmp_path: Path) -> None:
    assert load_alert_config(tmp_path / "missing.toml") == AlertConfig()
    (tmp_path / "c.toml").write_text("[profiles.p]\nbootstrap = 'h'\n")
    assert load_alert_config(tmp_path / "c.toml") == AlertConfig()


@pytest.mark.parametrize(
    ("body", "key", "words"),
    [
        ("alertmanager = 3", "alerts.alertmanager", "URL"),
        ("for = -1", "alerts.for", "seconds"),
        ("resend = 0", "alerts.resend", "more than 0"),
        ("colour = 'red'", "alerts.colour", "unknown key"),
    ],
)
def test_bad_alerts_values(tmp_path: Path, body: str, key: str, words: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f"[alerts]\n{body}\n")
    with pytest.raises(ProfileError, match=words) as info:
        load_alert_config(path)
    assert info.value.key == key


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--alertmanager", "am:9093"], "is not an Alertmanager URL"),
        (["--alertmanager", "http://am:x"], "is not an Alertmanager URL"),
        (["--alert-resend", "0"], "--alert-resend"),
    ],
)
def test_serve_refuses_a_bad_alert_option(tmp_path: Path, args: list[str], words: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text("")
    result = CliRunner().invoke(
        main,
        ["serve", "--config", str(config), "--bootstrap", "127.0.0.1:1", "--no-history", *args],
    )
    assert result.exit_code in (2, 3), result.output
    assert words in result.output


T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (0, (2, 0, 1), 10)])


async def test_delivery_families_in_the_scrape() -> None:
    sink = AlertmanagerSink(["http://127.0.0.1:9"], AlertSettings(for_s=0.0))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(AlertCollector(sink))
    before = generate_latest(registry).decode()
    assert 'konsole_alertmanager_posts_total{result="error",url="http://127.0.0.1:9"} 0.0' in before
    assert "konsole_alertmanager_up{" not in before  # unknown before the first post
    down = snap(view((0, 1), tables=[T]), metrics=all_metrics((0, 1)))
    try:
        await sink.on_poll("prod", judged(down))
        text = generate_latest(registry).decode()
    finally:
        await sink.aclose()  # nothing listens on port 9: deliveries fail, counted
    assert (
        'konsole_alerts_firing{alertname="FlussTabletServerDown",cluster="prod",'
        'severity="warning"} 1.0' in text
    )

"""Profiles: TOML parsing, bad input as one line, resolution order, secrets kept out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from konsole.collect.profiles import (
    DEFAULT_BOOTSTRAP,
    HealthThresholds,
    MetricsEndpoint,
    Profile,
    ProfileError,
    default_config_path,
    load_profiles,
    parse_profiles,
    profile_from_local,
    resolve_profile,
)

CONFIG = Path("/cfg/config.toml")

GOOD = """\
[profiles.prod]
bootstrap = ["127.0.0.1:9123", "127.0.0.2:9123"]
coordinators = "127.0.0.1:9123,127.0.0.3:9123"
sasl_user = "ops"
password_env = "PROD_PASS"
metrics_port = 9249
poll_interval = 2
earliest_every = 5

[profiles.prod.health]
disk_usage_warn = 0.7
ingest_stall_polls = 4

[profiles.dev]
bootstrap = "127.0.0.1"
metrics = ["http://127.0.0.1:9249/metrics"]
"""


def test_good_file_parses_every_key() -> None:
    profiles = parse_profiles(GOOD, CONFIG)
    prod = profiles["prod"]
    assert prod.bootstrap == ("127.0.0.1:9123", "127.0.0.2:9123")
    assert prod.coordinators == ("127.0.0.1:9123", "127.0.0.3:9123")
    assert (prod.sasl_user, prod.password_env, prod.metrics_port) == ("ops", "PROD_PASS", 9249)
    assert (prod.poll_interval, prod.earliest_every) == (2.0, 5)
    assert prod.health == HealthThresholds(disk_usage_warn=0.7, ingest_stall_polls=4)
    dev = profiles["dev"]
    assert dev.bootstrap == ("127.0.0.1:9123",)
    assert dev.metrics == (MetricsEndpoint("http://127.0.0.1:9249/metrics"),)
    assert dev.sasl() is None


@pytest.mark.parametrize(
    ("text", "line", "key", "words"),
    [
        # syntax errors: the line, and the key written on it
        ('[profiles.a]\nbootstrap = "h"\npoll_interval = \n', 3, "poll_interval", "syntax"),
        ('[profiles.a]\nbootstrap = "h"\n[profiles.a\n', 3, "profiles.a", "syntax"),
        # unknown keys, wherever they are
        ('[profiles.a]\nbootstrap = "h"\nbootstap = "x"\n', 3, "profiles.a.bootstap", "unknown"),
        ('top = 1\n[profiles.a]\nbootstrap = "h"\n', 1, "top", "unknown"),
        (
            '[profiles.a]\nbootstrap = "h"\n\n[profiles.a.health]\ndisk_warn = 0.5\n',
            5,
            "profiles.a.health.disk_warn",
            "unknown",
        ),
        ('profiles.a.bootstrap = "h"\nprofiles.a.colour = 1\n', 2, "profiles.a.colour", "unknown"),
        # passwords never belong in the file (the value must not be echoed)
        ('[profiles.a]\nbootstrap = "h"\npassword = "hunter2"\n', 3, "profiles.a.password", "env"),
        # wrong types and values
        ("[profiles.a]\nbootstrap = 5\n", 2, "profiles.a.bootstrap", "string"),
        ('[profiles.a]\nbootstrap = "h:99999"\n', 2, "profiles.a.bootstrap", "bad bootstrap"),
        ('[profiles.a]\nbootstrap = "h"\npoll_interval = 0\n', 3, "profiles.a.poll_interval", ">"),
        ('[profiles.a]\nbootstrap = "h"\nmetrics = ["ftp://x"]\n', 3, "profiles.a.metrics", "http"),
        (
            '[profiles.a]\nbootstrap = "h"\nmetrics_port = true\n',
            3,
            "profiles.a.metrics_port",
            "port",
        ),
        (
            '[profiles.a]\nbootstrap = "h"\n[profiles.a.health]\ndisk_usage_warn = 2\n',
            4,
            "profiles.a.health.disk_usage_warn",
            "ratio",
        ),
        (
            '[profiles.a]\nbootstrap = "h"\n[profiles.a.health]\nrequire_metrics = 1\n',
            4,
            "profiles.a.health.require_metrics",
            "true",
        ),
        ('[profiles.a]\ncoordinators = "h"\n', 1, "profiles.a.bootstrap", "missing"),
        (
            '[profiles.a]\nbootstrap = "h"\npassword_env = "X"\n',
            1,
            "profiles.a.sasl_user",
            "sasl_user",
        ),
        (
            '[profiles.a]\nbootstrap = "h"\nsasl_user = "u"\npassword_env = "X"\n'
            'password_file = "/p"\n',
            5,
            "profiles.a.password_file",
            "not both",
        ),
    ],
)
def test_bad_file_is_one_line_naming_file_line_and_key(
    text: str, line: int, key: str, words: str
) -> None:
    with pytest.raises(ProfileError) as info:
        parse_profiles(text, CONFIG)
    err = info.value
    assert (err.path, err.line, err.key) == (CONFIG, line, key)
    message = str(err)
    assert "\n" not in message
    assert message.startswith(f"{CONFIG}:{line}: {key}: ")
    assert words in message
    assert "hunter2" not in message


def test_missing_file_means_no_profiles(tmp_path: Path) -> None:
    assert load_profiles(tmp_path / "absent.toml") == {}


def test_config_path_env_override(tmp_path: Path) -> None:
    assert default_config_path({"KONSOLE_CONFIG": str(tmp_path / "c.toml")}) == tmp_path / "c.toml"
    assert default_config_path({}).name == "config.toml"


@pytest.mark.parametrize(
    ("kwargs", "env", "source", "bootstrap"),
    [
        (
            {"bootstrap": "127.0.0.9:1"},
            {"FLUSS_BOOTSTRAP": "127.0.0.8:1"},
            "--bootstrap",
            "127.0.0.9:1",
        ),
        ({}, {"FLUSS_BOOTSTRAP": "127.0.0.8:1"}, "FLUSS_BOOTSTRAP", "127.0.0.8:1"),
        ({}, {}, "default", DEFAULT_BOOTSTRAP),
        ({"profile": "dev"}, {"FLUSS_BOOTSTRAP": "127.0.0.8:1"}, "profile", "127.0.0.1:9123"),
    ],
)
def test_resolution_order(
    tmp_path: Path, kwargs: dict[str, Any], env: dict[str, str], source: str, bootstrap: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(GOOD)
    profile = resolve_profile(env=env, config_path=path, **kwargs)
    assert profile.source == source
    assert profile.bootstrap[0] == bootstrap


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"profile": "nope"}, "no profile 'nope' (profiles: dev, prod)"),
        ({"profile": "dev", "bootstrap": "h"}, "only one of --profile, --bootstrap"),
        ({"local": {"bootstrap_servers": "h"}, "bootstrap": "h"}, "only one of --local"),
        ({"bootstrap": "h:0"}, "--bootstrap"),
    ],
)
def test_resolution_errors(tmp_path: Path, kwargs: dict[str, Any], words: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(GOOD)
    with pytest.raises(ProfileError, match=r".*") as info:
        resolve_profile(env={}, config_path=path, **kwargs)
    assert words in str(info.value)


LOCAL = {
    "version": "0.9.1-incubating",
    "bootstrap_servers": "127.0.0.1:35783,127.0.0.1:49563",
    "sasl": {"enabled": False},
    "processes": [
        {"role": "zookeeper", "id": 0, "metrics_url": None, "endpoint": "127.0.0.1:58727"},
        {
            "role": "coordinator",
            "id": 0,
            "metrics_url": "http://127.0.0.1:50235/metrics",
            "endpoint": "127.0.0.1:35783",
        },
        {
            "role": "tablet-server",
            "id": 0,
            "metrics_url": "http://127.0.0.1:46745/metrics",
            "endpoint": "127.0.0.1:49563",
        },
    ],
}


def test_local_profile_from_description() -> None:
    profile = resolve_profile(local=LOCAL, env={})
    assert profile.source == "local"
    assert profile.bootstrap == ("127.0.0.1:35783", "127.0.0.1:49563")
    assert profile.coordinators == ("127.0.0.1:35783",)
    assert profile.metrics == (
        MetricsEndpoint("http://127.0.0.1:50235/metrics", role="coordinator"),
        MetricsEndpoint("http://127.0.0.1:46745/metrics", role="tablet", server_id="0"),
    )
    assert profile.sasl_user is None


def test_local_profile_with_sasl_takes_the_password_from_the_environment() -> None:
    profile = profile_from_local({**LOCAL, "sasl": {"enabled": True, "users": ["admin"]}})
    assert (profile.sasl_user, profile.password_env) == ("admin", "FLUSS_PASSWORD")


def test_local_description_without_bootstrap() -> None:
    with pytest.raises(ProfileError, match="no bootstrap"):
        profile_from_local({"processes": []})


SECRET = "s3cr3t-value"


@pytest.mark.parametrize(
    ("profile", "env", "words"),
    [
        (Profile("p", "profile", ("h:1",), sasl_user="u", password_env="PW"), {}, "PW"),
        (Profile("p", "profile", ("h:1",), sasl_user="u", password_env="PW"), {"PW": ""}, "PW"),
        (Profile("p", "profile", ("h:1",), sasl_user="u"), {}, "neither"),
        (
            Profile("p", "profile", ("h:1",), sasl_user="u", password_file=Path("/nonexistent/pw")),
            {},
            "/nonexistent/pw",
        ),
    ],
)
def test_missing_password_names_the_variable_or_file(
    profile: Profile, env: dict[str, str], words: str
) -> None:
    with pytest.raises(ProfileError) as info:
        profile.sasl(env)
    assert words in str(info.value)


def test_password_is_read_late_and_never_shown(tmp_path: Path) -> None:
    from_env = Profile("p", "profile", ("h:1",), sasl_user="u", password_env="PW")
    sasl = from_env.sasl({"PW": SECRET})
    assert sasl is not None and sasl.username == "u"
    assert SECRET.encode() in sasl.initial_response()
    pw_file = tmp_path / "pw"
    pw_file.write_text(SECRET + "\n")
    from_file = Profile("p", "profile", ("h:1",), sasl_user="u", password_file=pw_file)
    sasl2 = from_file.sasl({})
    assert sasl2 is not None and sasl2.initial_response().endswith(SECRET.encode())
    for shown in (repr(from_env), repr(from_file), repr(sasl), str(from_env.describe())):
        assert SECRET not in shown
    assert from_env.describe()["password"] == "env PW"


@pytest.mark.parametrize(
    ("profile", "hosts", "urls"),
    [
        (Profile("p", "x", ("127.0.0.1:9123",)), ("127.0.0.1",), ()),
        (
            Profile("p", "x", ("127.0.0.1:9123", "127.0.0.2:9123"), metrics_port=9249),
            (),
            ("http://127.0.0.1:9249/metrics", "http://127.0.0.2:9249/metrics"),
        ),
        (
            Profile("p", "x", ("127.0.0.1:9123",), metrics_port=9249),
            ("127.0.0.5", "127.0.0.5", "::1"),
            ("http://127.0.0.5:9249/metrics", "http://[::1]:9249/metrics"),
        ),
        (
            Profile(
                "p",
                "x",
                ("h:1",),
                metrics=(MetricsEndpoint("http://127.0.0.1:1/m"),),
                metrics_port=2,
            ),
            ("127.0.0.5",),
            ("http://127.0.0.1:1/m",),
        ),
    ],
)
def test_metrics_endpoints(profile: Profile, hosts: tuple[str, ...], urls: tuple[str, ...]) -> None:
    assert tuple(e.url for e in profile.metrics_endpoints(hosts)) == urls

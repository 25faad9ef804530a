"""Reading an unpacked Fluss distribution: version, generation, Java floor, bad layouts."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from konsole.localcluster.cluster import ClusterError, LocalCluster
from konsole.localcluster.distribution import (
    PROBE_CLASS,
    DistributionError,
    from_home,
    generation,
    has_standby_coordinator,
    parse_version,
)


def _jar(path: Path, *, version: str | None = "1.0-SNAPSHOT", class_major: int = 55) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        if version is not None:
            zf.writestr(
                "META-INF/MANIFEST.MF",
                f"Manifest-Version: 1.0\nImplementation-Version: {version}\n",
            )
        zf.writestr(PROBE_CLASS, b"\xca\xfe\xba\xbe\x00\x00" + class_major.to_bytes(2, "big"))
    return path


def _home(tmp_path: Path, **jar: object) -> Path:
    home = tmp_path / "fluss-1.0-SNAPSHOT"
    _jar(home / "lib" / "fluss-server-1.0-SNAPSHOT.jar", **jar)  # type: ignore[arg-type]
    _jar(home / "plugins" / "prometheus" / "fluss-metrics-prometheus-1.0-SNAPSHOT.jar")
    return home


@pytest.mark.parametrize(
    ("text", "parsed", "gen", "standby"),
    [
        ("0.9.1-incubating", (0, 9, 1), "0.9", False),
        ("1.0-SNAPSHOT", (1, 0, 0), "1.0", True),
        ("1.0.0", (1, 0, 0), "1.0", True),
        ("1.2.3", (1, 2, 3), "1.2", True),
        ("0.8.0-incubating", (0, 8, 0), "0.8", False),
    ],
)
def test_versions_give_generation_and_abilities(
    text: str, parsed: tuple[int, int, int], gen: str, standby: bool
) -> None:
    assert parse_version(text) == parsed
    assert generation(text) == gen
    assert has_standby_coordinator(text) is standby


@pytest.mark.parametrize("text", ["", "SNAPSHOT", "one.two", "1"])
def test_unreadable_versions_are_refused(text: str) -> None:
    with pytest.raises(DistributionError, match="cannot read a Fluss version"):
        parse_version(text)


def test_a_distribution_gives_its_version_class_path_and_java_floor(tmp_path: Path) -> None:
    dist = from_home(_home(tmp_path))
    assert dist.version == "1.0-SNAPSHOT" and dist.generation == "1.0"
    assert dist.standby_coordinator
    assert dist.java_release == 11
    assert dist.class_path == (
        f"{(tmp_path / 'fluss-1.0-SNAPSHOT' / 'lib').resolve()}/*",
        f"{(tmp_path / 'fluss-1.0-SNAPSHOT' / 'plugins' / 'prometheus').resolve()}/*",
    )
    dist.check_java(11)
    dist.check_java(17)


def test_the_version_falls_back_to_the_jar_name(tmp_path: Path) -> None:
    home = tmp_path / "d"
    _jar(home / "lib" / "fluss-server-0.9.1-incubating.jar", version=None)
    _jar(home / "lib" / "fluss-metrics-prometheus-0.9.1-incubating.jar")
    dist = from_home(home)
    assert dist.version == "0.9.1-incubating" and not dist.standby_coordinator
    assert len(dist.class_path) == 1  # the reporter sits in lib/ already


def test_a_server_built_for_a_newer_java_is_refused_in_one_line(tmp_path: Path) -> None:
    dist = from_home(_home(tmp_path, class_major=65))  # Java 21 class files
    with pytest.raises(DistributionError) as err:
        dist.check_java(17)
    assert str(err.value) == (
        "Fluss 1.0-SNAPSHOT needs Java 21 or newer; the Java found is 17 "
        "(set JAVA_HOME to a newer one)"
    )


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ("missing", "no such directory"),
        ("file", "not a directory"),
        ("empty", "not a Fluss distribution (no lib/ directory with fluss-server-*.jar)"),
        ("no-server", "no fluss-server-*.jar in"),
        ("two-servers", "2 server jars in"),
        ("no-reporter", "no Prometheus reporter"),
        ("not-a-jar", "not a readable jar"),
    ],
)
def test_bad_distributions_get_one_clear_line(tmp_path: Path, layout: str, message: str) -> None:
    home = tmp_path / "home"
    if layout == "file":
        home.write_text("x")
    elif layout != "missing":
        home.mkdir()
    if layout in ("no-server", "two-servers", "no-reporter", "not-a-jar"):
        (home / "lib").mkdir()
        _jar(home / "plugins" / "prometheus" / "fluss-metrics-prometheus-1.jar")
    if layout == "two-servers":
        _jar(home / "lib" / "fluss-server-1.0.jar")
        _jar(home / "lib" / "fluss-server-0.9.jar")
    if layout == "no-reporter":
        _jar(home / "lib" / "fluss-server-1.0.jar")
        (home / "plugins" / "prometheus" / "fluss-metrics-prometheus-1.jar").unlink()
    if layout == "not-a-jar":
        (home / "lib" / "fluss-server-1.0.jar").write_text("not a zip")
    with pytest.raises(DistributionError) as err:
        from_home(home)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_bad_distribution_starts_nothing(tmp_path: Path) -> None:
    lc = LocalCluster(tmp_path / "run")
    with pytest.raises(DistributionError):
        lc.start(fluss_home=tmp_path / "nowhere")
    assert not (tmp_path / "run").exists()


def test_a_version_that_contradicts_the_distribution_is_refused(tmp_path: Path) -> None:
    lc = LocalCluster(tmp_path / "run")
    with pytest.raises(ClusterError, match=r"holds Fluss 1\.0-SNAPSHOT"):
        lc.start("0.9.1-incubating", fluss_home=_home(tmp_path))
    assert not (tmp_path / "run").exists()

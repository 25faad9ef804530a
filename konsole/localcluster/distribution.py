"""Where the servers' jars come from, which Fluss version they are, and what it can do.

Two sources: the published jars fetched with Maven (``--version``), or an unpacked Fluss
binary distribution (``--fluss-home``: the ``FLUSS_HOME`` layout of ``fluss-*-bin.tgz``,
server jars in ``lib/``, the Prometheus reporter under ``plugins/``). What the runner may
do with a server (standby coordinators, ...) follows from the version the jars carry, not
from a list of known version strings.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SERVER_JAR = "fluss-server-*.jar"
PROMETHEUS_JAR = "fluss-metrics-prometheus-*.jar"
# Read to learn the Java release the server was compiled for (class file major - 44).
PROBE_CLASS = "org/apache/fluss/server/coordinator/CoordinatorServer.class"
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:[-.].*)?$")


class DistributionError(RuntimeError):
    """The jars cannot be used; the message is one line saying what is missing."""


def parse_version(version: str) -> tuple[int, int, int]:
    """``0.9.1-incubating`` -> (0, 9, 1); ``1.0-SNAPSHOT`` -> (1, 0, 0)."""
    m = _VERSION.match(version.strip())
    if m is None:
        raise DistributionError(f"cannot read a Fluss version from {version!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def generation(version: str) -> str:
    """The server generation a version belongs to: ``0.9``, ``1.0``, ..."""
    major, minor, _ = parse_version(version)
    return f"{major}.{minor}"


def has_standby_coordinator(version: str) -> bool:
    # Coordinator leader election (a second coordinator waits as a standby) is in 1.0.
    return parse_version(version) >= (1, 0, 0)


@dataclass(frozen=True)
class Distribution:
    """Server jars ready to run: a class path, the version they carry, their Java floor."""

    version: str
    class_path: tuple[str, ...]
    # The unpacked distribution's directory, or None for jars fetched with Maven.
    home: str | None
    # The Java release the server classes were compiled for (11 for Fluss today).
    java_release: int | None

    @property
    def generation(self) -> str:
        return generation(self.version)

    @property
    def standby_coordinator(self) -> bool:
        return has_standby_coordinator(self.version)

    @property
    def lib(self) -> str:
        """The directory holding the server jar (kept in the state file for old readers)."""
        return self.class_path[0].removesuffix("/*")

    def check_java(self, java_major: int) -> None:
        if self.java_release is not None and java_major < self.java_release:
            raise DistributionError(
                f"Fluss {self.version} needs Java {self.java_release} or newer; "
                f"the Java found is {java_major} (set JAVA_HOME to a newer one)"
            )


def from_home(home: Path | str) -> Distribution:
    """An unpacked Fluss distribution; every problem is one line naming what is missing."""
    root = Path(home).expanduser()
    if not root.exists():
        raise DistributionError(f"--fluss-home {root}: no such directory")
    if not root.is_dir():
        raise DistributionError(f"--fluss-home {root}: not a directory")
    lib = root / "lib"
    if not lib.is_dir():
        raise DistributionError(
            f"--fluss-home {root}: not a Fluss distribution (no lib/ directory with {SERVER_JAR})"
        )
    servers = sorted(lib.glob(SERVER_JAR))
    if not servers:
        raise DistributionError(f"--fluss-home {root}: no {SERVER_JAR} in {lib}")
    if len(servers) > 1:
        names = ", ".join(p.name for p in servers)
        raise DistributionError(
            f"--fluss-home {root}: {len(servers)} server jars in {lib} ({names}); keep one"
        )
    reporters = sorted((root / "plugins").glob(f"*/{PROMETHEUS_JAR}")) or sorted(
        lib.glob(PROMETHEUS_JAR)
    )
    if not reporters:
        raise DistributionError(
            f"--fluss-home {root}: no Prometheus reporter ({PROMETHEUS_JAR} under plugins/ or lib/)"
        )
    version, release = read_server_jar(servers[0])
    class_path = [f"{lib.resolve()}/*"]
    if reporters[0].parent != lib:
        class_path.append(f"{reporters[0].parent.resolve()}/*")
    return Distribution(version, tuple(class_path), str(root.resolve()), release)


def from_maven(version: str, fetch: Callable[[str], Path]) -> Distribution:
    """Published jars: ``fetch(version)`` returns the lib dir (downloading when needed)."""
    lib = fetch(version)
    servers = sorted(lib.glob(SERVER_JAR))
    release = read_server_jar(servers[0])[1] if len(servers) == 1 else None
    return Distribution(version, (f"{lib}/*",), None, release)


def read_server_jar(jar: Path) -> tuple[str, int | None]:
    """The version (manifest, else the file name) and the Java release of a server jar."""
    try:
        with zipfile.ZipFile(jar) as zf:
            manifest = _manifest(zf)
            release = _class_release(zf)
    except (OSError, zipfile.BadZipFile) as exc:
        raise DistributionError(f"{jar}: not a readable jar ({exc})") from exc
    version = manifest.get("Implementation-Version") or _version_from_name(jar.name)
    if version is None:
        raise DistributionError(f"{jar}: no version in its manifest or file name")
    parse_version(version)
    return version, release


def _manifest(zf: zipfile.ZipFile) -> dict[str, str]:
    try:
        text = zf.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except KeyError:
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and not line.startswith(" "):
            out[key.strip()] = value.strip()
    return out


def _class_release(zf: zipfile.ZipFile) -> int | None:
    try:
        with zf.open(PROBE_CLASS) as f:
            head = f.read(8)
    except KeyError:
        return None
    if len(head) < 8 or head[:4] != b"\xca\xfe\xba\xbe":
        return None
    return int.from_bytes(head[6:8], "big") - 44


def _version_from_name(name: str) -> str | None:
    m = re.match(r"fluss-server-(.+)\.jar$", name)
    return m.group(1) if m else None

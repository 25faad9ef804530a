"""Fetch the Fluss server jars from Maven Central with the machine's ``mvn``.

The jars land in a per-version cache (``<user cache>/konsole/fluss/<version>/lib``); a
marker file written last says the copy is complete, so an interrupted download is redone
rather than half-used. Maven's own settings decide where artifacts come from.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import platformdirs

from konsole.errors import JarFetchError
from konsole.localcluster.versions import lookup

COMPLETE_MARKER = ".complete"
PROMETHEUS_ARTIFACT = "org.apache.fluss:fluss-metrics-prometheus:{version}:jar"
MAVEN_TIMEOUT_S = 1200


__all__ = ["JarFetchError", "cache_root", "ensure_jars", "is_cached", "lib_dir"]


def cache_root() -> Path:
    override = os.environ.get("KONSOLE_CACHE_DIR")
    return Path(override) if override else Path(platformdirs.user_cache_dir("konsole"))


def lib_dir(version: str) -> Path:
    return cache_root() / "fluss" / version / "lib"


def is_cached(version: str) -> bool:
    return (lib_dir(version) / COMPLETE_MARKER).exists()


def ensure_jars(version: str, progress: Callable[[str], None] | None = None) -> Path:
    """Return the lib dir for ``version``, downloading it first when it is not cached."""
    lookup(version)
    lib = lib_dir(version)
    if is_cached(version):
        return lib
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JarFetchError("Maven (mvn) is not on PATH; it is needed to fetch the Fluss jars")
    work = lib.parent
    work.mkdir(parents=True, exist_ok=True)
    partial = work / "lib.partial"
    shutil.rmtree(partial, ignore_errors=True)
    pom = work / "runtime-pom.xml"
    template = resources.files("konsole.localcluster").joinpath("runtime-pom.xml").read_text()
    pom.write_text(template.replace("@FLUSS_VERSION@", version))
    say(f"Fetching Fluss {version} server jars with Maven into {lib} ...")
    # -U retries artifacts an earlier run found missing (Maven caches "not found").
    _run_maven(
        [
            mvn,
            "-B",
            "-U",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={partial}",
            "-DincludeScope=runtime",
            "-DexcludeArtifactIds=slf4j-api,jsr305",
        ],
        say,
    )
    _run_maven(
        [
            mvn,
            "-B",
            "-f",
            str(pom),
            "dependency:copy",
            f"-Dartifact={PROMETHEUS_ARTIFACT.format(version=version)}",
            f"-DoutputDirectory={partial}",
        ],
        say,
    )
    servers = list(partial.glob("fluss-server-*.jar"))
    if len(servers) != 1:
        raise JarFetchError(f"expected one fluss-server jar in {partial}, found {len(servers)}")
    shutil.rmtree(lib, ignore_errors=True)
    partial.rename(lib)
    (lib / COMPLETE_MARKER).write_text(version + "\n")
    say(f"Fluss {version} jars ready ({_size_mb(lib):.0f} MB).")
    return lib


_DOWNLOADED = re.compile(r"Downloaded from \S+: \S+/([^/\s]+) \(([^)]*)\)")
_URL_IN_PARENS = re.compile(r"\s*\(https?://[^)]*\)")
_HELP_SUFFIX = re.compile(r"\s*-> \[Help \d+\]\s*$")
_BOILERPLATE = (
    "Re-run Maven",
    "To see the full stack",
    "For more information",
    "[Help 1]",
    "mvn install:install-file",
    "mvn deploy:deploy-file",
    "Try downloading the file manually",
    "Then, install it",
    "Alternatively, if",
)


def _run_maven(cmd: list[str], say: Callable[[str], None]) -> None:
    errors: list[str] = []
    try:
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            stdin=subprocess.DEVNULL,
        )
    except OSError as exc:
        raise JarFetchError(f"could not run Maven: {exc}") from exc
    assert proc.stdout is not None
    for raw in proc.stdout:
        line = _strip_ansi(raw.rstrip())
        m = _DOWNLOADED.search(line)
        if m and m.group(1).endswith(".jar"):
            say(f"  downloaded {m.group(1)} ({m.group(2).split(' at ')[0]})")
        if line.startswith("[ERROR]"):
            errors.append(line)
    try:
        rc = proc.wait(timeout=MAVEN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise JarFetchError(f"Maven did not finish within {MAVEN_TIMEOUT_S}s") from None
    if rc != 0:
        raise JarFetchError(maven_error_summary(errors) or f"Maven failed with exit code {rc}")


def maven_error_summary(error_lines: list[str], limit: int = 3) -> str:
    """The meaningful part of Maven's [ERROR] lines: no help links, no registry addresses."""
    kept: list[str] = []
    for line in error_lines:
        text = _HELP_SUFFIX.sub("", line.removeprefix("[ERROR]").strip())
        if not text or any(b in text for b in _BOILERPLATE) or text.startswith("org."):
            continue
        text = _URL_IN_PARENS.sub("", text)
        if text not in kept:
            kept.append(text)
    return "\n".join(kept[:limit])


def _strip_ansi(s: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", s)


def _size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.iterdir() if f.is_file()) / 1e6

"""Find a Java runtime for the Fluss servers and check that it is new enough."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from konsole.errors import JavaError

MIN_JAVA = 11  # Fluss servers need Java 11+; the official image runs 17.


__all__ = ["MIN_JAVA", "JavaError", "JavaRuntime", "find_java", "java_major"]


@dataclass(frozen=True)
class JavaRuntime:
    executable: str
    major: int

    def jvm_flags(self) -> list[str]:
        flags = ["-XX:+IgnoreUnrecognizedVMOptions"]
        if self.major >= 17:
            # Arrow's memory code reflects into java.nio; the Fluss scripts open it too.
            flags.append("--add-opens=java.base/java.nio=ALL-UNNAMED")
        if self.major > 17:
            flags.append("-Djava.security.manager=allow")
        return flags


def find_java() -> JavaRuntime:
    candidates = []
    if home := os.environ.get("JAVA_HOME"):
        candidates.append(str(Path(home) / "bin" / "java"))
    if found := shutil.which("java"):
        candidates.append(found)
    for exe in candidates:
        if Path(exe).is_file():
            major = java_major(exe)
            if major < MIN_JAVA:
                raise JavaError(
                    f"Java {MIN_JAVA} or newer is needed to run Fluss; {exe} is Java {major}"
                )
            return JavaRuntime(exe, major)
    raise JavaError(f"no Java runtime found (set JAVA_HOME or put java {MIN_JAVA}+ on PATH)")


def java_major(exe: str) -> int:
    try:
        out = subprocess.run(
            [exe, "-XshowSettings:properties", "-version"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise JavaError(f"could not run {exe}: {exc}") from exc
    return parse_java_major(out.stderr + out.stdout)


def parse_java_major(text: str) -> int:
    m = re.search(r"java\.specification\.version = (\d+)(?:\.(\d+))?", text)
    if m is None:
        m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if m is None:
        raise JavaError("could not tell the Java version")
    first = int(m.group(1))
    # Java 8 and older report "1.8".
    return int(m.group(2)) if first == 1 and m.group(2) else first

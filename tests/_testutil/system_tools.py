"""Programs from Debian's packages that some tests drive for real (Prometheus, Alertmanager,
promtool, Chromium, tmux, setpriv).

:func:`need_binary` returns a program's path. Where it is missing, a test skips with a
message naming the package to install, except in CI (``CI=true``), where `.ci/run` installs
these packages: there a missing program fails the test.
"""

from __future__ import annotations

import os
import shutil

import pytest

__all__ = ["PACKAGES", "in_ci", "need_binary"]

# The program each test may ask for, and the Debian package that ships it.
PACKAGES: dict[str, str] = {
    "prometheus": "prometheus",
    "promtool": "prometheus",
    "prometheus-alertmanager": "prometheus-alertmanager",
    "amtool": "prometheus-alertmanager",
    "chromium": "chromium",
    "setpriv": "util-linux",
    "tmux": "tmux",
}


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def need_binary(name: str) -> str:
    """The path of ``name``; skip (fail in CI) when it is not on PATH."""
    package = PACKAGES.get(name, name)
    path = shutil.which(name)
    if path is not None:
        return path
    message = f"{name} not found: install the Debian package {package!r}"
    if in_ci():
        pytest.fail(f"{message} (.ci/run installs it)", pytrace=False)
    pytest.skip(message)

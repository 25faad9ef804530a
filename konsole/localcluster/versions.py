"""Fluss server versions the local runner knows, and what each one can do."""

from __future__ import annotations

from dataclasses import dataclass

from konsole.errors import UnknownVersionError

__all__ = ["DEFAULT_VERSION", "SUPPORTED_VERSIONS", "FlussVersion", "UnknownVersionError"]


@dataclass(frozen=True)
class FlussVersion:
    version: str
    # A second CoordinatorServer waits as a standby (leader election arrived after 0.9).
    standby_coordinator: bool
    # The ZooKeeper version matching the shaded client inside the fat jar (informational).
    notes: str = ""


SUPPORTED_VERSIONS: dict[str, FlussVersion] = {
    v.version: v
    for v in (
        FlussVersion(
            "1.0.0",
            standby_coordinator=True,
            notes="newest 1.0.x line; used only when Maven Central serves it",
        ),
        FlussVersion("0.9.1-incubating", standby_coordinator=False),
    )
}

# Maven Central did not serve org.apache.fluss:fluss-server:1.0.0 when this was written
# (checked with `mvn dependency:get` on 2026-11-29), so the default is the newest release
# that resolves. Flip this when 1.0.x is published.
DEFAULT_VERSION = "0.9.1-incubating"


def lookup(version: str) -> FlussVersion:
    try:
        return SUPPORTED_VERSIONS[version]
    except KeyError:
        raise UnknownVersionError(version, SUPPORTED_VERSIONS) from None

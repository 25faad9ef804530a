"""Run a real Fluss cluster on loopback from the published Maven Central jars.

Used by `konsole cluster ...`, `konsole demo` and the live test suite. Nothing here is
built from source: the server comes from the released ``fluss-server`` fat jar.
"""

from konsole.localcluster.cluster import (
    ClusterDescription,
    ClusterError,
    LocalCluster,
    ProcessInfo,
    SaslInfo,
)
from konsole.localcluster.versions import DEFAULT_VERSION, SUPPORTED_VERSIONS, FlussVersion

__all__ = [
    "DEFAULT_VERSION",
    "SUPPORTED_VERSIONS",
    "ClusterDescription",
    "ClusterError",
    "FlussVersion",
    "LocalCluster",
    "ProcessInfo",
    "SaslInfo",
]

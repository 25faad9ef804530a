"""From what a command was given to a live poller: the profile, its history file, the poller.

One rule names a cluster's history file (:func:`history_path`), so the console, ``record``,
``check --record`` and ``history`` read and write the same file for the same cluster:

- ``--profile NAME`` -> ``NAME``; ``--local`` -> ``local``;
- ``--bootstrap A,B`` or ``FLUSS_BOOTSTRAP`` -> ``bootstrap-A`` (the first address as parsed);
- nothing -> ``default``;

under ``<user data dir>/konsole/history/<name>.sqlite``, unless ``--history PATH`` names one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from konsole.collect.profiles import Profile, ProfileError, resolve_profile

if TYPE_CHECKING:
    from fluss_proto.model import ClusterView
    from konsole.collect.cluster.capacity import CapacityCollector
    from konsole.collect.cluster.metrics import Scraper
    from konsole.collect.cluster.poller import Poller, PollerConfig
    from konsole.collect.profiles import MetricsEndpoint
    from konsole.model.storage import StoragePart

__all__ = [
    "LivePoller",
    "assemble_poller",
    "build_poller",
    "default_history_path",
    "history_name",
    "history_path",
    "history_path_for",
    "live_poller",
    "resolve",
]


def resolve(
    profile: str | None,
    bootstrap: str | None,
    local: bool,
    run_dir: Path | None,
    config_path: Path | None,
) -> Profile:
    """The profile the options name (``--local`` asks the local cluster); raises ProfileError,
    or NoLocalClusterError for ``--local`` without a running local cluster."""
    description = None
    if local:
        from konsole.errors import NoLocalClusterError
        from konsole.localcluster import ClusterError, LocalCluster

        cluster = LocalCluster(run_dir)
        try:
            description = cluster.status()
        except ClusterError as exc:
            raise ProfileError(f"--local: {exc}") from None
        if description is None or not description.running:
            raise NoLocalClusterError(f"--local: no running local cluster in {cluster.run_dir}")
    return resolve_profile(
        profile=profile,
        bootstrap=bootstrap,
        local=None if description is None else description.to_dict(),
        config_path=config_path,
    )


# =========================================================================== history file


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "default"


def default_history_path(name: str) -> Path:
    """``<user data dir>/konsole/history/<name>.sqlite``."""
    import platformdirs

    return Path(platformdirs.user_data_dir("konsole")) / "history" / f"{_safe(name)}.sqlite"


def history_name(profile: Profile) -> str:
    """The cluster's name among history files: the one rule (module docstring)."""
    if profile.source in ("profile", "local", "default"):
        return profile.name
    return "bootstrap-" + profile.bootstrap[0]


def history_path(profile: Profile, override: Path | None = None) -> Path:
    """``override`` when given, else the profile's file."""
    return override if override is not None else default_history_path(history_name(profile))


def history_path_for(
    override: Path | None,
    profile: str | None,
    bootstrap: str | None,
    local: bool,
    env: Mapping[str, str] | None = None,
) -> Path:
    """The file the options name, without connecting or asking the local cluster (a stopped
    cluster's history is still readable); the same file :func:`history_path` gives once the
    profile is resolved. Raises ProfileError for a malformed ``--bootstrap``."""
    if override is not None:
        return override
    if profile:
        return default_history_path(profile)
    if local:
        return default_history_path("local")
    env = os.environ if env is None else env
    return history_path(resolve_profile(bootstrap=bootstrap, env=env))


# =========================================================================== poller


@dataclass
class LivePoller:
    """A poller with the parts a caller may need beside it, and how to release them."""

    poller: Poller
    scraper: Scraper
    #: The metrics endpoints of a view's servers (the profile's, or guessed from hosts).
    endpoints: Callable[[ClusterView | None], tuple[MetricsEndpoint, ...]]
    #: Rejected-credential messages the connect step met (``check`` says UNKNOWN for them).
    rejected: list[str] = field(default_factory=list)
    #: The capacity collector (its forecasts start from a history: ``capacity.seed``).
    capacity: CapacityCollector | None = None

    async def aclose(self) -> None:
        await self.poller.aclose()
        await self.scraper.aclose()


def assemble_poller(
    profile: Profile,
    config: PollerConfig,
    *,
    connect_timeout: float,
    request_timeout: float,
    scrape_timeout: float,
    retries: int | None = None,
) -> LivePoller:
    """The live poller of ``profile``: a client factory, the coordinator probe and the
    metrics scrape, with these timeouts, none longer than the poll's per-server deadline
    (``config.server_timeout``). Reads the profile's password variable now: a missing one
    is bad configuration, not a failed poll."""
    from fluss_proto.client import FlussClient
    from fluss_proto.coordinators import probe_coordinators
    from fluss_proto.errors import AuthenticationError
    from konsole.collect.cluster.capacity import CapacityCollector
    from konsole.collect.cluster.metrics import Scraper
    from konsole.collect.cluster.poller import Poller
    from konsole.collect.cluster.storage import StorageCursor, poll_storage
    from konsole.collect.cluster.target import connect_client

    sasl = profile.sasl()
    scraper = Scraper(timeout=min(scrape_timeout, config.server_timeout))
    request_timeout = min(request_timeout, config.server_timeout)
    connect_timeout = min(connect_timeout, config.server_timeout)
    rejected: list[str] = []

    async def connect() -> FlussClient:
        try:
            return await connect_client(
                profile,
                request_timeout=request_timeout,
                connect_timeout=connect_timeout,
                retries=retries,
                sasl=sasl,
                quarantine=True,
            )
        except AuthenticationError as exc:
            rejected.append(str(exc))
            raise

    def endpoints(view: ClusterView | None) -> tuple[MetricsEndpoint, ...]:
        hosts = tuple(dict.fromkeys(s.host for s in view.servers)) if view else ()
        return profile.metrics_endpoints(hosts)

    cursor = StorageCursor()
    capacity = CapacityCollector(profile.health)

    async def storage(client: FlussClient, view: ClusterView, now: float) -> StoragePart:
        return await poll_storage(client, view, now=now, cursor=cursor)

    poller = Poller(
        config,
        connect=connect,
        probe=lambda a: probe_coordinators(a, timeout=config.probe_timeout, sasl=sasl),
        scrape=scraper.scrape,
        endpoints=endpoints,
        storage=storage,
        capacity=capacity.collect,
    )
    return LivePoller(poller, scraper, endpoints, rejected, capacity)


def live_poller(profile: Profile, interval: float | None) -> LivePoller:
    """A live poller for ``profile`` (its own timeouts), with its parts."""
    from konsole.collect.cluster.poller import PollerConfig

    overrides = {"interval": interval} if interval else {}
    return assemble_poller(
        profile,
        PollerConfig.from_profile(profile, **overrides),
        connect_timeout=profile.connect_timeout,
        request_timeout=profile.request_timeout,
        scrape_timeout=profile.metrics_timeout,
    )


def build_poller(profile: Profile, interval: float | None) -> tuple[Poller, Callable[[], Any]]:
    """A live poller for ``profile`` (its own timeouts) and the coroutine function that
    releases it."""
    live = live_poller(profile, interval)
    return live.poller, live.aclose

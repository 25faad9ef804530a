"""What one command talks to, resolved once: a :class:`Target` (the profile, its history
file, how to open a client), and :func:`connect_client`, the one way a profile becomes a
connected :class:`~fluss_proto.client.FlussClient`.

Every face that asks the cluster something outside the poller (the console's preview and KV
snapshots, ``preview``, ``lookup``) and the poller itself connect through
:func:`connect_client`, so the profile's credentials, timeouts and write grant are read the
same way everywhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fluss_proto.api_keys import ApiKey
    from fluss_proto.client import ClientOptions, FlussClient
    from fluss_proto.sasl import SaslPlain
    from konsole.collect.profiles import Profile

__all__ = ["ClientFactory", "Target", "connect_client"]

#: Opens a client for a profile (``connect_client``'s keywords); tests inject fakes.
ClientFactory = Callable[..., Awaitable["FlussClient"]]

_UNSET: Any = object()


async def connect_client(
    profile: Profile,
    *,
    request_timeout: float | None = None,
    connect_timeout: float | None = None,
    retries: int | None = None,
    allow_writes: bool | Iterable[ApiKey] = False,
    sasl: SaslPlain | None = _UNSET,
    quarantine: bool = False,
    warm_up: bool = True,
) -> FlussClient:
    """A client connected to ``profile``'s bootstrap servers with its credentials.

    ``request_timeout``: the profile's when None; the connect timeout is the profile's,
    never longer than the request timeout. ``sasl``: the credentials already read from the
    profile (its password variable is read here otherwise). ``quarantine``: a poller's
    client (a server that timed out is not asked again until the next poll). Raises what
    :meth:`FlussClient.connect` raises.
    """
    from fluss_proto.client import FlussClient

    request = profile.request_timeout if request_timeout is None else request_timeout
    options: ClientOptions = {
        "sasl": profile.sasl() if sasl is _UNSET else sasl,
        "connect_timeout": (
            min(request, profile.connect_timeout) if connect_timeout is None else connect_timeout
        ),
        "request_timeout": request,
        "allow_writes": allow_writes,
        "quarantine": quarantine,
    }
    if retries is not None:
        options["retries"] = retries
    return await FlussClient.connect(list(profile.bootstrap), warm_up=warm_up, **options)


@dataclass(frozen=True, slots=True)
class Target:
    """One command's cluster: its profile, its history file (None: none), and the client
    factory every question outside the poller goes through."""

    profile: Profile
    history: Path | None
    connect: ClientFactory = connect_client

    @property
    def name(self) -> str:
        return self.profile.name

    async def client(self, **options: Any) -> FlussClient:
        """A connected client (``connect_client``'s keywords); the caller closes it."""
        return await self.connect(self.profile, **options)

"""The one spelling of each subject a finding, an event, an alert or a screen names.

Every face prints the subject these functions make, so ``check``'s headline, ``watch``'s
events, ``serve``'s alert labels, the history and the console name one server the same way.
A server's role is what the cluster said it is (metadata, or the server's own answer to a
probe), never where its address stood in the bootstrap list: an address whose role nobody
said is a :func:`bootstrap` address.
"""

from __future__ import annotations

__all__ = ["bootstrap", "coordinator", "tablet_server"]


def tablet_server(node_id: int | str) -> str:
    """``tablet-server 1``."""
    return f"tablet-server {node_id}"


def coordinator(address: str | None = None) -> str:
    """``coordinator 127.0.0.1:9123``, or ``coordinator`` when its address is unknown."""
    return f"coordinator {address}" if address else "coordinator"


def bootstrap(address: str) -> str:
    """``bootstrap 127.0.0.1:9124``: an address from the bootstrap list whose role the
    cluster has not said (it never answered, and no metadata named it)."""
    return f"bootstrap {address}"

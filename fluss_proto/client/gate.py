"""FlussClient's gate: every check a request must pass before anything is sent (no I/O).

Read-only by default: a mutating API (or LOOKUP with ``insert_if_not_exists``) is refused
unless its key is in the client's write grant (``allow_writes``: none, every write, or a
set of keys); server-to-server APIs and AUTHENTICATE (the handshake's own) are always
refused. Part of :class:`~fluss_proto.client.FlussClient`; see :mod:`fluss_proto.client`.
"""

from __future__ import annotations

from fluss_proto import messages
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client.target import request_mutates
from fluss_proto.errors import ReadOnlyViolationError

_API_KEYS: dict[int, ApiKey] = {int(k): k for k in ApiKey}


def admit(
    api: ApiKey | int,
    request: object,
    node: int | None,
    coordinator: bool,
    *,
    allow_writes: frozenset[ApiKey],
) -> ApiKey:
    """The API key of a request that may be sent; raises ``ReadOnlyViolationError``,
    ``ValueError`` or ``TypeError`` otherwise."""
    key = _API_KEYS.get(api)  # an IntEnum member hashes and compares like its int
    if key is None:
        raise ValueError(f"unknown API key {api!r}")
    spec = API_INFO[key]
    if spec.private:
        raise ReadOnlyViolationError(
            f"{key.name} is a server-to-server API; fluss_proto never sends it"
        )
    if request_mutates(key, request) and key not in allow_writes:
        what = "LOOKUP with insert_if_not_exists" if not spec.mutating else key.name
        why = "is read-only (allow_writes=False)" if not allow_writes else "may not send it"
        raise ReadOnlyViolationError(f"{what} changes the cluster and this client {why}")
    if key is ApiKey.AUTHENTICATE:
        raise ValueError("AUTHENTICATE is part of the connection handshake (pass sasl=...)")
    if node is not None and coordinator:
        raise ValueError("pass either node or coordinator=True, not both")
    expected = messages.request_class(key)
    if not isinstance(request, expected):
        raise TypeError(
            f"{key.name} takes a {expected.DESCRIPTOR.name}, got {type(request).__name__}"
        )
    if not request.IsInitialized():
        missing = ", ".join(request.FindInitializationErrors())
        raise ValueError(f"{key.name} request lacks required fields: {missing}")
    return key

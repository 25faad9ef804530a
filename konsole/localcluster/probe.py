"""A blocking GetMetadata probe used to tell when the local cluster is really ready.

Prometheus gauges are no readiness signal: the 0.9.1 coordinator refreshes its
``activeTabletServerCount`` only while it processes events, so an idle coordinator can
report 0 for ever. The coordinator's own metadata answer is the truth.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

from fluss_proto import frame, messages
from fluss_proto.api_keys import ApiKey
from fluss_proto.cluster import parse_metadata


@dataclass(frozen=True)
class MetadataView:
    coordinator: tuple[str, int] | None
    tablet_servers: frozenset[int]


def probe_metadata(host: str, port: int, timeout: float = 2.0) -> MetadataView | None:
    """One GetMetadata round trip on a plaintext listener; None if it did not answer."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.settimeout(timeout)
            body = messages.encode_request(
                ApiKey.GET_METADATA, messages.request_class(ApiKey.GET_METADATA)()
            )
            s.sendall(frame.encode_request(int(ApiKey.GET_METADATA), 0, 0, body))
            (length,) = struct.unpack(">i", _recv_exact(s, 4))
            if not 0 < length < 64 * 1024 * 1024:
                return None
            reply = frame.decode_response(_recv_exact(s, length))
    except (OSError, ValueError):
        return None
    if reply.kind is not frame.ResponseKind.SUCCESS:
        return None
    try:
        md = parse_metadata(messages.decode_response(ApiKey.GET_METADATA, reply.body))  # type: ignore[arg-type]
    except Exception:  # a half-started server may answer oddly; it is simply not ready
        return None
    coord = None if md.coordinator is None else (md.coordinator.host, md.coordinator.port)
    return MetadataView(coord, frozenset(md.tablet_servers))


def _recv_exact(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise OSError("connection closed")
        buf += chunk
    return bytes(buf)

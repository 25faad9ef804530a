"""A blocking GetMetadata probe used to tell when the local cluster is really ready.

Prometheus gauges are no readiness signal: the 0.9.1 coordinator refreshes its
``activeTabletServerCount`` only while it processes events, so an idle coordinator can
report 0 for ever. The coordinator's own metadata answer is the truth.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.frame import ResponseKind, decode_response, encode_request


@dataclass(frozen=True)
class MetadataView:
    coordinator: tuple[str, int] | None
    tablet_servers: frozenset[int]


def probe_metadata(host: str, port: int, timeout: float = 2.0) -> MetadataView | None:
    """One GetMetadata round trip on a plaintext listener; None if it did not answer."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.settimeout(timeout)
            body = pb.MetadataRequest().SerializeToString()
            s.sendall(encode_request(int(ApiKey.GET_METADATA), 0, 0, body))
            (length,) = struct.unpack(">i", _recv_exact(s, 4))
            if not 0 < length < 64 * 1024 * 1024:
                return None
            frame = decode_response(_recv_exact(s, length))
    except (OSError, ValueError):
        return None
    if frame.kind is not ResponseKind.SUCCESS:
        return None
    resp = pb.MetadataResponse()
    try:
        resp.ParseFromString(frame.body)
    except Exception:  # a half-started server may answer oddly; it is simply not ready
        return None
    coord = None
    if resp.HasField("coordinator_server"):
        coord = (resp.coordinator_server.host, resp.coordinator_server.port)
    return MetadataView(coord, frozenset(ts.node_id for ts in resp.tablet_servers))


def _recv_exact(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise OSError("connection closed")
        buf += chunk
    return bytes(buf)

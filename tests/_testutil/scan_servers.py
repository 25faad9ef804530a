"""A :class:`~tests._testutil.scan.FakeScanCluster` served over loopback sockets, so a real
``konsole preview`` process (its own client, frames and all) can read it.

One :class:`~tests._testutil.fakes.FakeServer` per node (the coordinator and each tablet
server) runs in a background thread with its own event loop; every request is decoded and
answered by the fake as its ``call`` would be for that node, and GetMetadata replies name
the servers' real ports::

    with serve_scan_cluster(kv_cluster(scan_kv_nodes=set())) as bootstrap:
        subprocess.run(["konsole", "preview", "db.t", "--bootstrap", bootstrap, ...])
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.errors import FlussError
from fluss_proto.messages import decode_request
from tests._testutil.fakes import Err, FakeServer, Frame, default_apis
from tests._testutil.scan import FakeScanCluster

__all__ = ["serve_scan_cluster"]

_START_S = 10.0


def _handler(fake: FakeScanCluster, node: int | None, ports: dict[int | None, int]) -> Any:
    async def answer(_server: FakeServer, frame: Frame) -> Any:
        api = ApiKey(frame.api_key)
        try:
            resp = await fake.call(api, decode_request(api, frame.body), node=node)
        except FlussError as exc:
            return Err(getattr(exc, "code", -1) or -1, str(exc))
        if isinstance(resp, pb.MetadataResponse):
            resp.coordinator_server.MergeFrom(
                pb.PbServerNode(node_id=0, host="127.0.0.1", port=ports[None])
            )
            for ts in resp.tablet_servers:
                ts.port = ports[ts.node_id]
        return resp

    return lambda server, frame: answer(server, frame)


@contextlib.contextmanager
def serve_scan_cluster(fake: FakeScanCluster) -> Iterator[str]:
    """Serve ``fake`` on loopback while the block runs; yields the bootstrap address."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    ports: dict[int | None, int] = {}
    servers: dict[int | None, FakeServer] = {None: FakeServer(1, apis=default_apis(1))}
    for node in fake.nodes:
        servers[node] = FakeServer(2, apis=default_apis(2, fluss_1_0=bool(fake.scan_kv_nodes)))

    async def start() -> None:
        for node, server in servers.items():
            await server.start()
            ports[node] = server.port
        for node, server in servers.items():
            handler = _handler(fake, node, ports)
            server.handlers = {int(api): handler for api in ApiKey if api != ApiKey.API_VERSIONS}

    async def stop() -> None:
        for server in servers.values():
            await server.stop()

    try:
        asyncio.run_coroutine_threadsafe(start(), loop).result(_START_S)
        yield f"127.0.0.1:{ports[None]}"
    finally:
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), loop).result(_START_S)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_START_S)
        loop.close()

"""Captured frame fixtures (tests/fixtures/frames) and a fake server that replays them.

Not a test module: shared by ``test_frame_fixtures.py`` and ``test_fuzz_protocol.py``.

A :class:`ReplayServer` is an ``asyncio.start_server`` on 127.0.0.1:0 that reads real Fluss
request frames and answers each with whatever its ``answer`` callback returns: a complete
response frame (length prefix included) whose request id is patched to the request's, raw
bytes written as they are, or ``None`` to drop the request (as a Fluss server does for an
API it does not serve).
"""

from __future__ import annotations

import asyncio
import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from fluss_proto import frame, messages
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from tests._testutil.loopback import LoopbackServer, read_request

FRAMES_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "frames"
#: The same kind of capture from a Fluss 1.0-line server.
FRAMES_DIR_1_0 = FRAMES_DIR / "fluss-1.0"


@dataclass(frozen=True)
class Fixture:
    name: str
    api: ApiKey
    version: int
    request_id: int
    server_type: str
    info: dict[str, Any]
    request: bytes  # whole request frame
    response: bytes  # whole response frame, length prefix included

    @property
    def request_body(self) -> bytes:
        return self.request[4 + frame.REQUEST_HEADER_SIZE :]

    @property
    def response_payload(self) -> bytes:
        """The response frame without its length prefix."""
        return self.response[frame.LENGTH_PREFIX_SIZE :]

    @property
    def response_body(self) -> bytes:
        """The protobuf body (after the type byte and, for SUCCESS/ERROR, the request id)."""
        return frame.decode_response(self.response_payload).body

    @property
    def ok(self) -> bool:
        return self.info["response_kind"] == "SUCCESS"


@cache
def index(directory: Path = FRAMES_DIR) -> dict[str, Any]:
    return json.loads((directory / "index.json").read_text())


@cache
def fixtures(directory: Path = FRAMES_DIR) -> dict[str, Fixture]:
    out = {}
    for name, info in sorted(index(directory)["frames"].items()):
        out[name] = Fixture(
            name=name,
            api=ApiKey(info["api_key"]),
            version=info["version"],
            request_id=info["request_id"],
            server_type=info["server_type"],
            info=info,
            request=(directory / f"{name}.req.bin").read_bytes(),
            response=(directory / f"{name}.resp.bin").read_bytes(),
        )
    return out


def with_request_id(response: bytes, request_id: int) -> bytes:
    """A whole response frame with its request id replaced (SUCCESS / ERROR frames only)."""
    if len(response) < 9 or response[4] not in (
        frame.ResponseKind.SUCCESS,
        frame.ResponseKind.ERROR,
    ):
        return response  # too short or without a request id: sent as it is
    return response[:5] + struct.pack(">i", request_id) + response[9:]


def success_frame(request_id: int, body: bytes) -> bytes:
    return struct.pack(">ibi", 5 + len(body), 0, request_id) + body


def metadata_pointing_to(
    fixture: Fixture, coordinator_port: int, tablet_ports: dict[int, int]
) -> bytes:
    """The recorded MetadataResponse body with every server moved to 127.0.0.1:<fake port>.

    The only edit made to recorded bytes: without it a replayed client would connect to the
    real cluster's ports.
    """
    md = messages.decode_response(ApiKey.GET_METADATA, fixture.response_body)
    assert isinstance(md, pb.MetadataResponse)
    if md.HasField("coordinator_server"):
        md.coordinator_server.host = "127.0.0.1"
        md.coordinator_server.port = coordinator_port
    for node in md.tablet_servers:
        node.host = "127.0.0.1"
        node.port = tablet_ports[node.node_id]
    return md.SerializeToString()


@dataclass
class Received:
    api_key: int
    version: int
    request_id: int
    body: bytes


#: answer(request) -> a response frame to send with its id patched, ``Raw`` bytes, or None.
Answer = Callable[[Received], "bytes | Raw | None"]


@dataclass(frozen=True)
class Raw:
    """Bytes written as they are (no request id patching), then optionally close."""

    data: bytes
    close: bool = False


class ReplayServer(LoopbackServer):
    """A fake Fluss server on 127.0.0.1 answering each request via ``answer``."""

    def __init__(self, answer: Answer) -> None:
        super().__init__()
        self.answer = answer
        self.received: list[Received] = []

    def count(self, api: ApiKey) -> int:
        return sum(1 for r in self.received if r.api_key == api)

    async def _converse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(100_000):  # bounded: no test sends this many requests
            api_key, version, request_id, body, _size = await read_request(reader)
            request = Received(api_key, version, request_id, body)
            self.received.append(request)
            reply = self.answer(request)
            if reply is None:
                continue
            if isinstance(reply, Raw):
                writer.write(reply.data)
                await writer.drain()
                if reply.close:
                    return
                continue
            writer.write(with_request_id(reply, request_id))
            await writer.drain()


def by_request(*names: str) -> dict[tuple[int, bytes], Fixture]:
    """(api key, request body) -> fixture, for exact-request replay."""
    fx = fixtures()
    chosen = names or tuple(fx)
    return {(int(fx[n].api), fx[n].request_body): fx[n] for n in chosen}


class Script:
    """Answers the n-th request with the n-th scripted response (None = drop it), after
    checking it is the request that was recorded with it."""

    def __init__(self, steps: list[tuple[Received | Fixture, bytes | None]]) -> None:
        self.steps = list(steps)
        self.mismatches: list[str] = []

    def __call__(self, request: Received) -> bytes | None:
        if not self.steps:
            self.mismatches.append(f"unexpected request for api key {request.api_key}")
            return None
        expected, response = self.steps.pop(0)
        want = (
            (int(expected.api), expected.request_body)
            if isinstance(expected, Fixture)
            else (expected.api_key, expected.body)
        )
        if (request.api_key, request.body) != want:
            self.mismatches.append(f"request for api key {request.api_key} is not the recorded one")
        return response

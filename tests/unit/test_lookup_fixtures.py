"""Replay LOOKUP / PREFIX_LOOKUP exchanges captured from real servers (0.9.1 and the 1.0 line).

``tests/fixtures/capture_lookup.py`` wrote the frames: GetTableInfo of two primary-key tables
pyfluss filled (a key of every key type; a table whose bucket key is a prefix of its key),
the one request konsole sends each leader, the server's replies, and pyfluss's own lookups
of the same keys. Checked here, without a server:

- our key bytes and buckets, from the typed key texts and the table's JSON as the server
  sent it, equal the captured requests' byte for byte (so the encoder is the one the server
  answered);
- the servers' answers decode to exactly the rows pyfluss looked up (so every present key
  was found where we looked, and the absent one was absent).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fluss_proto import frame
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.lookup import lookup_spec, plan_keys
from fluss_proto.records import make_row_decoder
from fluss_proto.records.kv_batch import split_value
from fluss_proto.types import TableInfo
from tests.fixtures.capture_lookup import jsonable

FRAMES = Path(__file__).resolve().parents[1] / "fixtures" / "frames"
DIRS = {"0.9.1": FRAMES / "lookup", "1.0": FRAMES / "fluss-1.0" / "lookup"}
CASES = [
    (gen, table)
    for gen, d in DIRS.items()
    for table in json.loads((d / "lookup.json").read_text())["tables"]
]


def _body(path: Path) -> bytes:
    data = path.read_bytes()
    return frame.decode_response(data[4:]).body


def _request_body(path: Path) -> tuple[int, int, bytes]:
    """(api key, version, body) of a captured request frame."""
    data = path.read_bytes()[4:]
    api, version = int.from_bytes(data[0:2], "big"), int.from_bytes(data[2:4], "big")
    return api, version, data[8:]


def _load(gen: str, table: str) -> tuple[Path, dict[str, Any], TableInfo]:
    d = DIRS[gen]
    doc = json.loads((d / "lookup.json").read_text())["tables"][table]
    reply = pb.GetTableInfoResponse.FromString(_body(d / f"{table}_table_info.resp.bin"))
    return d, doc, TableInfo.from_response("db", table, reply)


@pytest.mark.parametrize(("gen", "table"), CASES)
def test_our_key_bytes_and_buckets_are_the_captured_requests(gen: str, table: str) -> None:
    d, doc, info = _load(gen, table)
    plans = plan_keys(lookup_spec(info, prefix=doc["prefix"]), doc["keys"])
    sent: dict[int, list[bytes]] = {}
    for f in doc["frames"]:
        api, version, body = _request_body(d / f"{f['name']}.req.bin")
        assert api == (1034 if doc["prefix"] else 1017) and version == f["version"] == 1
        msg = (pb.PrefixLookupRequest if doc["prefix"] else pb.LookupRequest).FromString(body)
        assert msg.table_id == info.table_id
        for b in msg.buckets_req:
            sent.setdefault(b.bucket_id, []).extend(b.keys)
    ours: dict[int, list[bytes]] = {}
    for p in plans:
        for bucket in p.buckets:
            ours.setdefault(bucket, []).append(p.key)
    assert {b: sorted(k) for b, k in ours.items()} == {b: sorted(k) for b, k in sent.items()}


@pytest.mark.parametrize(("gen", "table"), CASES)
def test_the_servers_answers_decode_to_pyfluss_lookups(gen: str, table: str) -> None:
    d, doc, info = _load(gen, table)
    prefix = doc["prefix"]
    plans = plan_keys(lookup_spec(info, prefix=prefix), doc["keys"])
    decoder = make_row_decoder(info.schema, str(info.kv_format))
    found: dict[bytes, list[dict[str, Any]]] = {p.key: [] for p in plans}
    for f in doc["frames"]:
        _, _, body = _request_body(d / f"{f['name']}.req.bin")
        req = (pb.PrefixLookupRequest if prefix else pb.LookupRequest).FromString(body)
        resp_cls = pb.PrefixLookupResponse if prefix else pb.LookupResponse
        resp = resp_cls.FromString(_body(d / f"{f['name']}.resp.bin"))
        answers = {b.bucket_id: b for b in resp.buckets_resp}
        for b in req.buckets_req:
            answer = answers[b.bucket_id]
            assert not answer.HasField("error_code")
            entries = answer.value_lists if prefix else answer.values
            for key, entry in zip(b.keys, entries, strict=True):
                values = (
                    list(entry.values)
                    if prefix
                    else ([entry.values] if entry.HasField("values") else [])
                )
                for value in values:
                    schema_id, row = split_value(value)
                    assert schema_id == info.schema_id
                    found[key].append(jsonable(decoder.decode(bytes(row))))
    for p, expected in zip(plans, doc["expected"], strict=True):
        rows = found[p.key]
        if prefix:
            key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
            assert sorted(rows, key=key) == sorted(expected, key=key)
        else:
            assert rows == ([] if expected is None else [expected])


def test_the_fixtures_hold_a_key_only_the_rust_clients_bucket_has() -> None:
    """pyfluss (the Rust client) wrote these rows; a key whose tail has a byte >= 0x80 lives
    in the bucket the Rust hash picks, which Java's hash would not have looked in."""
    _, doc, info = _load("1.0", "keys_all")
    plans = plan_keys(lookup_spec(info), doc["keys"])
    assert any(len(p.buckets) == 2 for p in plans)

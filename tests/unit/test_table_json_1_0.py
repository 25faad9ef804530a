"""Table, schema and database JSON captured from a Fluss 1.0-line server
(tests/fixtures/table_json/fluss-1.0, by capture_table_json.py --fluss-home) beside the
0.9.1 capture of the same tables: the same documents, but for what 1.0 adds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.types import TableInfo, parse_schema, parse_table_descriptor

OLD = Path(__file__).resolve().parent.parent / "fixtures" / "table_json"
NEW = OLD / "fluss-1.0"
INDEX = json.loads((NEW / "index.json").read_text())
OLD_INDEX = json.loads((OLD / "index.json").read_text())
STANDBY = "table.kv.standby-replica.enabled"


def test_same_tables_from_a_1_0_server() -> None:
    assert INDEX["server_version"] == "1.0-SNAPSHOT"
    assert set(INDEX["tables"]) == set(OLD_INDEX["tables"])
    assert (NEW / "database.json").read_bytes() == (OLD / "database.json").read_bytes()


@pytest.mark.parametrize("name", sorted(INDEX["tables"]))
def test_1_0_documents_equal_0_9_but_for_the_standby_replica_property(name: str) -> None:
    assert (NEW / f"{name}.schema.json").read_bytes() == (OLD / f"{name}.schema.json").read_bytes()
    new = parse_table_descriptor((NEW / f"{name}.table.json").read_bytes())
    old = parse_table_descriptor((OLD / f"{name}.table.json").read_bytes())
    assert new.schema == old.schema == parse_schema((NEW / f"{name}.schema.json").read_bytes())
    props = dict(new.properties)
    if new.schema.primary_key:  # the 1.0 coordinator adds it to every primary-key table
        assert props.pop(STANDBY) == "true"
    assert STANDBY not in old.properties
    assert props == dict(old.properties)
    assert (new.partition_keys, new.bucket_keys, new.bucket_count) == (
        old.partition_keys,
        old.bucket_keys,
        old.bucket_count,
    )


@pytest.mark.parametrize("name", sorted(INDEX["tables"]))
def test_1_0_table_info_carries_the_remote_data_dir(name: str) -> None:
    meta = INDEX["tables"][name]
    assert OLD_INDEX["tables"][name]["remote_data_dir"] is None  # 0.9.1 has no such field
    assert meta["remote_data_dir"].endswith("/remote")  # the runner's remote.data.dir
    resp = pb.GetTableInfoResponse(
        table_id=meta["table_id"],
        schema_id=meta["schema_id"],
        table_json=(NEW / f"{name}.table.json").read_bytes(),
        created_time=meta["created_time"],
        modified_time=meta["modified_time"],
        remote_data_dir=meta["remote_data_dir"],
    )
    info = TableInfo.from_response(INDEX["database"], name, resp)
    assert info.remote_data_dir == meta["remote_data_dir"]

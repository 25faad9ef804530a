"""`konsole preview`: output formats and exit codes, against the scan fake cluster."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from tests._testutil.scan import FakeScanCluster, kv_cluster

pytestmark = pytest.mark.timeout(30)


def _cli(fake: FakeScanCluster, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    from konsole.cli import main as cli

    async def connect(*_a: Any, **_k: Any) -> Any:
        async def close() -> None:
            return None

        fake.close = close  # type: ignore[attr-defined]
        return fake

    monkeypatch.setattr("fluss_proto.client.FlussClient.connect", connect)
    return CliRunner().invoke(cli.main, ["preview", *args])


def test_cli_json_output_and_exit_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = kv_cluster()
    res = _cli(fake, monkeypatch, "db.t", "--format", "json", "--limit", "5")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert len(doc["rows"]) == 5 and doc["report"]["limit_cut"]
    row = doc["rows"][0]
    assert row["amount"] == "0.00" and row["ts"] == "2024-01-01T00:00:00.000000"
    assert {c["name"]: c["type"] for c in doc["columns"]}["amount"] == "DECIMAL(10, 2)"
    assert "via ScanKv" in res.stderr

    fake = kv_cluster()
    fake.too_many.add((None, 0))
    res = _cli(fake, monkeypatch, "db.t", "--format", "csv")
    assert res.exit_code == 1 and res.stdout.startswith("id,name,amount,ts,_bucket\n")
    assert "TOO_MANY_SCANNERS" in res.stderr

    fake = kv_cluster()
    fake.too_many.update({(None, 0), (None, 1), (None, 2)})
    assert _cli(fake, monkeypatch, "db.t").exit_code == 2
    assert _cli(kv_cluster(), monkeypatch, "db.nope").exit_code == 2
    assert _cli(kv_cluster(), monkeypatch, "db.t", "--partition", "p").exit_code == 3
    assert _cli(kv_cluster(), monkeypatch, "nodot").exit_code == 3
    assert _cli(kv_cluster(), monkeypatch, "db.t", "--limit", "-1").exit_code == 3
    assert _cli(kv_cluster(), monkeypatch, "db.t", "--format", "xml").exit_code == 3
    res = _cli(kv_cluster(), monkeypatch, "db.t", "--limit", "3")
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["id", "name", "amount", "ts", "_bucket"] and len(lines) == 5

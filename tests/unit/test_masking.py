"""Masking: the rules (pure), where they apply (every writer, every format), the profile keys,
and what the CLI refuses before connecting (a masked column as a filter or key, an export
a profile forbids). The live proof on real servers is tests/live/test_lookup_live.py."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from fluss_proto.scan.rows import Rows, RowsSchema
from fluss_proto.types import BigIntType, Column, DecimalType, Schema, StringType
from konsole.cli.lookup import KeyArgumentError, parse_key
from konsole.collect.profiles import parse_profiles
from konsole.errors import ExitCode, MaskedColumnError, ProfileError
from konsole.export import FORMATS
from konsole.export.mask import hide_partitions, mask_chunk, mask_schema, masked_columns
from konsole.export.stream import make_writer
from konsole.model.masking import MASK_TEXT, MaskRules, missing_partition_text, pattern_problem
from tests._testutil.cli import run_konsole
from tests._testutil.scan import kv_cluster

pytestmark = pytest.mark.timeout(60)

SECRET = "hunter2-secret"
RULES = MaskRules(("card", "shop.orders.e*"))


def test_one_refusal_rule_names_the_masked_columns_and_the_profile_when_given() -> None:
    # the console's reads and the CLI refuse through this one rule (issue 39)
    with pytest.raises(MaskedColumnError) as by_cli:
        RULES.refuse("shop.orders", ["id", "email", "card"], "filtered on", profile="prod")
    assert str(by_cli.value) == (
        "column(s) card, email of shop.orders are masked in profile 'prod': "
        "they cannot be filtered on"
    )
    with pytest.raises(MaskedColumnError) as by_console:
        RULES.refuse("shop.orders", {"card": 1}, "looked up by")
    assert str(by_console.value) == (
        "column(s) card of shop.orders are masked: they cannot be looked up by"
    )
    RULES.refuse("shop.orders", ["id", "amount"], "filtered on")  # nothing masked: no refusal
    MaskRules().refuse("shop.orders", ["card"], "looked up by")  # no rules: nothing refused
    assert missing_partition_text("2024", "shop.orders") == (
        "partition '2024' of shop.orders does not exist"
    )


@pytest.mark.parametrize(
    ("table", "column", "masked"),
    [
        ("shop.orders", "card", True),
        ("other.t", "CARD", True),  # case ignored: masking more is the safe mistake
        ("shop.orders", "email", True),
        ("shop.other", "email", False),
        ("shop.orders", "name", False),
        ("shop.orders", "cardinality", False),  # whole names, not substrings
    ],
)
def test_rules_name_columns_everywhere_or_per_table(table: str, column: str, masked: bool) -> None:
    assert RULES.masked(table, column) is masked


@pytest.mark.parametrize("bad", ["", "  ", "a.b", "a..b", "a.b.c.d", 5])
def test_a_rule_is_column_or_db_table_column(bad: Any) -> None:
    assert pattern_problem(bad) is not None


def test_profiles_carry_masks_and_the_export_switch() -> None:
    text = '[profiles.p]\nbootstrap = "h:1"\nmask = ["card", "shop.*.email"]\nexport = false\n'
    p = parse_profiles(text, Path("c.toml"))["p"]
    assert p.masks == MaskRules(("card", "shop.*.email")) and p.export is False
    assert p.describe()["mask"] == ["card", "shop.*.email"]
    assert parse_profiles('[profiles.q]\nbootstrap = "h:1"\n', Path("c.toml"))["q"].export
    for body, problem in [
        ('mask = "card"', "list"),
        ('mask = ["a.b"]', "DB.TABLE"),
        ("export = 1", "true"),
    ]:
        with pytest.raises(ProfileError, match=problem):
            parse_profiles(f'[profiles.p]\nbootstrap = "h:1"\n{body}\n', Path("c.toml"))


def test_one_export_rule_for_every_face() -> None:
    from konsole.collect.cluster.table_reads import export_allowed, refuse_export
    from konsole.errors import ExportForbiddenError

    profiles = parse_profiles(
        '[profiles.locked]\nbootstrap = "h:1"\nexport = false\n'
        '[profiles.open]\nbootstrap = "h:1"\n',
        Path("c.toml"),
    )
    assert not export_allowed(profiles["locked"])
    assert export_allowed(profiles["open"]) and export_allowed(None)  # no profile: no rule
    with pytest.raises(ExportForbiddenError, match="profile 'locked' forbids export"):
        refuse_export(profiles["locked"])
    refuse_export(profiles["open"])
    refuse_export(None)


def test_partition_names_are_masked_with_a_masked_partition_key() -> None:
    rules = MaskRules(("region",))
    names = ["id", "region", "_partition", "_bucket"]
    assert masked_columns(rules, "db.t", names, ["region"]) == {"region", "_partition"}
    assert masked_columns(rules, "db.t", names, ["day"]) == {"region"}
    assert masked_columns(None, "db.t", names) == frozenset()


SCHEMA = Schema(
    columns=(
        Column("id", BigIntType(nullable=False)),
        Column("card", StringType()),
        Column("amount", DecimalType(10, 2)),
    )
)


def _light() -> Rows:
    schema = RowsSchema.of_table(SCHEMA)
    from decimal import Decimal

    return Rows(schema, [[1, 2], [SECRET, None], [Decimal("1.50"), Decimal("31337.42")]], 2)


def _arrow() -> pa.Table:
    light = _light()
    from fluss_proto.records import to_arrow_schema

    schema = to_arrow_schema(SCHEMA)
    return pa.Table.from_arrays(
        [pa.array(c, f.type) for c, f in zip(light.columns, schema, strict=True)], schema=schema
    )


def _written(fmt: str, data: Any, masked: frozenset[str]) -> bytes:
    sink = io.BytesIO()
    sink.flush = lambda: None  # type: ignore[method-assign]
    writer = make_writer(fmt, sink, data.schema, table="shop.orders", masked=masked)
    writer.write(data)
    writer.finish(None)
    return sink.getvalue()


def _values(fmt: str, raw: bytes) -> list[Any]:
    """The card column as the format holds it (decoded: compression cannot hide a value)."""
    if fmt == "parquet":
        return pq.read_table(io.BytesIO(raw)).column("card").to_pylist()
    if fmt == "arrow":
        return ipc.open_file(io.BytesIO(raw)).read_all().column("card").to_pylist()
    if fmt == "json":
        return [r["card"] for r in json.loads(raw)["rows"]]
    if fmt == "jsonl":
        return [json.loads(line)["card"] for line in raw.decode().splitlines()]
    return [raw.decode()]


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("kind", ["light", "arrow"])
def test_every_format_writes_the_mask_never_the_value(fmt: str, kind: str) -> None:
    if kind == "light" and fmt in ("parquet", "arrow"):
        pytest.skip("light rows have only the text formats")
    data = _light() if kind == "light" else _arrow()
    plain = _written(fmt, data, frozenset())
    assert SECRET in json.dumps(_values(fmt, plain), default=str)  # the test can fail
    masked = _written(fmt, data, frozenset({"card", "amount"}))
    assert SECRET.encode() not in masked and b"31337" not in masked
    values = _values(fmt, masked)
    if fmt in ("parquet", "arrow", "json", "jsonl"):
        assert values == [MASK_TEXT, MASK_TEXT]  # NULL is masked too
    else:
        assert MASK_TEXT in values[0]


def test_mask_schema_and_chunk_keep_the_columns_in_place() -> None:
    table = _arrow()
    schema = mask_schema(table.schema, {"card"})
    out = mask_chunk(table, {"card"}, schema)
    assert out.column_names == table.column_names and out.column("id") == table.column("id")
    assert out.schema.field("card").metadata[b"fluss.type"] == b"STRING (masked)"


def test_a_report_loses_its_partition_names() -> None:
    from fluss_proto.scan import BucketScan, BucketStatus, ScanMethod, ScanReport

    bucket = BucketScan(7, "eu", 0, 1, ScanMethod.SCAN_KV, BucketStatus.SCANNED, 1, 1)
    report = ScanReport("db.t", 1, True, False, 5, (bucket,), 1, 1, False, 0.1, 1.0, ("eu",))
    hidden = hide_partitions(report)
    assert "eu" not in json.dumps(hidden.to_dict()) and "eu" not in "".join(hidden.summary_lines())


# ---------------------------------------------------------------------------- the CLI


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("id=5", {"id": "5"}),
        (" region = eu , id=42", {"region": "eu", "id": "42"}),
        ("name='a,b',x=\"it's\"", {"name": "a,b", "x": "it's"}),
        ("name='don''t'", {"name": "don't"}),
        ("empty=", {"empty": ""}),
    ],
)
def test_key_arguments(text: str, key: dict[str, str]) -> None:
    assert parse_key(text) == key


@pytest.mark.parametrize("bad", ["", "id", "=5", "id=1,id=2", "name='open", "name='a'b"])
def test_bad_key_arguments(bad: str) -> None:
    with pytest.raises(KeyArgumentError):
        parse_key(bad)


@pytest.fixture
def config(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(
        '[profiles.locked]\nbootstrap = "127.0.0.1:1"\nmask = ["card"]\nexport = false\n'
    )
    return {"KONSOLE_CONFIG": str(path), "PATH": "/usr/bin:/bin"}


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["lookup", "db.t", "id"], ExitCode.USAGE, "bad key"),  # its form: usage (issue 40)
        (["lookup", "db.t", "card=1", "--profile", "locked"], ExitCode.NO_PERMISSION, "masked"),
        (["lookup", "db.t", "id=1", "--profile", "locked", "-o", "x.csv"], 77, "forbids export"),
        (["preview", "db.t", "--profile", "locked", "-o", "x.csv"], 77, "forbids export"),
    ],
)
def test_refused_before_connecting(
    config: dict[str, str], tmp_path: Path, args: list[str], code: int, says: str
) -> None:
    res = run_konsole(*args, env=config, cwd=tmp_path, timeout=60)
    assert res.returncode == code, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("konsole: error: ") and says in lines[0]
    assert not (tmp_path / "x.csv").exists()


def test_preview_masks_and_refuses_a_filter_on_a_masked_column(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from konsole.cli import main as cli

    fake = kv_cluster()

    async def connect(*_a: Any, **_k: Any) -> Any:
        async def close() -> None:
            return None

        fake.close = close  # type: ignore[attr-defined]
        return fake

    path = tmp_path / "c.toml"
    path.write_text('[profiles.p]\nbootstrap = "127.0.0.1:1"\nmask = ["name"]\n')
    monkeypatch.setenv("KONSOLE_CONFIG", str(path))
    monkeypatch.setattr("fluss_proto.client.FlussClient.connect", connect)
    runner = CliRunner()
    res = runner.invoke(cli.main, ["preview", "db.t", "--profile", "p", "--format", "jsonl"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert rows and all(r["name"] == MASK_TEXT for r in rows)
    res = runner.invoke(cli.main, ["preview", "db.t", "--profile", "p", "--where", "name = 'n1'"])
    assert res.exit_code == ExitCode.NO_PERMISSION and "cannot be filtered on" in res.stderr
    res = runner.invoke(cli.main, ["preview", "db.t", "--profile", "p", "--where", "id >= 201"])
    assert res.exit_code == 0 and "9 matched" in res.stderr


def test_an_unknown_partition_lists_no_partition_names_under_masking() -> None:
    from fluss_proto.error_codes import PartitionNotExistError
    from konsole.cli.preview import _Job, _public

    err = PartitionNotExistError("partition 'x' of db.t does not exist (partitions: eu, us)")
    job = _Job("b", ("db", "t"), "x", 1, False, "table", None, "bucket", 1.0)
    assert "eu" in _public(err, job)  # no masks: the server's words
    job.masks = MaskRules(("region",))
    assert "eu" not in _public(err, job) and "'x'" in _public(err, job)

"""konsole.collect.cluster.table_reads: masking of preview and lookup answers, masked filters and
keys refused (a lookup before connecting)."""

from __future__ import annotations

import asyncio

import pytest

from konsole.collect.cluster.table_reads import (
    LookupRequest,
    PreviewRequest,
    lookup,
    masked_lookup,
    masked_preview,
)
from konsole.errors import MaskedColumnError
from konsole.model.masking import MaskRules
from tests._testutil.table_reads import customers, lookup_fake

ROWS = [(1, "Ada", "London"), (2, None, "Paris")]
SCAN = PreviewRequest(("shop", "customers"), None, 100, False)


def test_masked_preview_hides_every_value_of_a_masked_column() -> None:
    result = masked_preview(customers(ROWS), SCAN, MaskRules(("name",)))
    assert result.table.column("name").to_pylist() == ["****", "****"]  # NULL too
    assert result.table.column("city").to_pylist() == ["London", "Paris"]
    assert result.table.schema.field("name").metadata[b"fluss.type"] == b"STRING (masked)"


def test_no_rules_leave_the_answer_alone() -> None:
    original = customers(ROWS)
    assert masked_preview(original, SCAN, MaskRules()) is original


def test_a_filter_on_a_masked_column_is_refused() -> None:
    request = PreviewRequest(("shop", "customers"), None, 100, False, where="name = 'Ada'")
    with pytest.raises(MaskedColumnError, match="name"):
        masked_preview(customers(ROWS), request, MaskRules(("shop.customers.name",)))


def test_masked_lookup() -> None:
    request = LookupRequest(("shop", "customers"), (("id", "1"),))
    found = asyncio.run(lookup_fake(ROWS)(request))
    masked = masked_lookup(found, MaskRules(("city",)))
    assert masked.table.to_pylist() == [{"id": 1, "name": "Ada", "city": "****"}]
    assert masked.headline() == "lookup id=1: found (1 row)"


def test_a_key_on_a_masked_column_is_refused_before_connecting() -> None:
    async def connect(**_kwargs):
        raise AssertionError("connected")

    request = LookupRequest(("shop", "customers"), (("id", "1"),))
    with pytest.raises(MaskedColumnError, match="looked up by"):
        asyncio.run(lookup(connect, request, MaskRules(("id",))))

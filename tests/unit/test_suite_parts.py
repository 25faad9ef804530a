"""`make test`'s two live parts (tests/conftest.py, ``--part``): every test in exactly one,
its server generation's; the tests tied to no generation with 0.9's."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import PARTS, UNBOUND_PART, part_of


def _item(params: dict[str, str] | None, fixtures: tuple[str, ...] = ()) -> Any:
    callspec = None if params is None else SimpleNamespace(params=params)
    return SimpleNamespace(callspec=callspec, fixturenames=fixtures)


@pytest.mark.parametrize(
    ("item", "part"),
    [
        (_item({"fluss_server": "0.9"}, ("fluss_server",)), "fluss0.9"),
        (_item({"fluss_server": "1.0"}, ("fluss_server", "fluss_1_0")), "fluss1.0"),
        (_item(None, ("fluss_1_0",)), "fluss1.0"),
        (_item({"other": "x"}), UNBOUND_PART),
        (_item(None), UNBOUND_PART),
    ],
)
def test_each_test_has_one_part(item: Any, part: str) -> None:
    assert part_of(item) == part


def test_the_parts_are_the_generations() -> None:
    assert PARTS == ("fluss0.9", "fluss1.0") and UNBOUND_PART in PARTS

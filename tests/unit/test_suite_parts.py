"""`make test`'s two live parts (tests/conftest.py, ``--part``): every test in exactly one,
its server generation's; the tests tied to no generation with 0.9's."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests._testutil import shards
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


def test_shards_split_whole_modules_the_longest_first() -> None:
    modules = ["a.py", "b.py", "c.py", "d.py"]
    weights = {"p": {"a.py": 100, "b.py": 60, "c.py": 50, "d.py": 10}}
    split = shards.split(modules, "p", 2, weights)
    assert split == {"a.py": 1, "b.py": 2, "c.py": 2, "d.py": 1}
    # every module in exactly one shard, the same split whatever the order collected
    assert shards.split(reversed(modules), "other", 3) == shards.split(modules, "other", 3)
    assert set(shards.split(modules, "other", 3).values()) <= {1, 2, 3}
    assert shards.split(modules, "other", 1) == dict.fromkeys(modules, 1)


@pytest.mark.parametrize("spec", ["0/2", "3/2", "1", "a/b", "1/0", ""])
def test_a_shard_is_k_of_n(spec: str) -> None:
    with pytest.raises(ValueError, match="K/N"):
        shards.parse(spec)
    assert shards.parse(" 2/3 ") == (2, 3)


def test_every_weighed_module_exists() -> None:
    """A renamed module would silently weigh the default: the table names real files."""
    from pathlib import Path

    live = {p.name for p in (Path(__file__).parents[1] / "live").glob("test_*.py")}
    for part, weights in shards.MODULE_SECONDS.items():
        assert set(weights) <= live, (part, sorted(set(weights) - live))

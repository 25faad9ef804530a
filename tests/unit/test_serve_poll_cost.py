"""One poll of a 1,600-bucket cluster through serve's path (events and health, as the
session's judge runs them, then the exposition's series) derives the cluster's placement,
replication figures, headroom and storage judgement once and each table's figures once,
and the series are those of facts derived afresh."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import konsole.model.headroom as headroom
import konsole.model.placement as placement_module
import konsole.model.storage as storage
import konsole.model.table_stats as table_stats
from konsole.model.health import HealthRules
from konsole.model.poll import Judge, JudgedPoll
from konsole.model.poll_facts import facts_of
from konsole.model.snapshot import ClusterSnapshot
from konsole.serve.exposition import Exposition
from tests._testutil.console import large_snapshot
from tests._testutil.judging import health_of

TABLES, BUCKETS = 200, 8  # 1,600 buckets


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts the placement, replication, headroom and storage passes (wherever each was
    imported by name) and the per-table figures made."""
    counts: Counter[str] = Counter()

    def counting(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return real(*args, **kwargs)

        return call

    for name, real in (
        ("placement", placement_module.placement),
        ("replication", placement_module.replication),
        ("capacity_view", headroom.capacity_view),
        ("trouble", storage.trouble),
    ):
        wrapped = counting(name, real)
        for module in list(sys.modules.values()):
            mine = module is not None and module.__name__.startswith("konsole.")
            if mine and getattr(module, name, None) is real:
                monkeypatch.setattr(module, name, wrapped)
    monkeypatch.setattr(table_stats, "_figures", counting("figures", table_stats._figures))
    yield counts


def polls() -> list[ClusterSnapshot]:
    return [large_snapshot(seq, tables=TABLES, buckets=BUCKETS) for seq in (1, 2, 3)]


def serve_poll(judge: Judge, exposition: Exposition, s: ClusterSnapshot) -> JudgedPoll:
    judged = judge.judge(s)
    asyncio.run(exposition.on_poll("c", judged))
    return judged


def exposition() -> Exposition:
    return Exposition(["c"], clock=lambda: 2e9)  # the poll age is read at scrape time


def series(exposition: Exposition) -> list[tuple[str, dict[str, str], float]]:
    return [(m.name, s.labels, s.value) for m in exposition.collect() for s in m.samples]


def test_a_serve_poll_derives_the_facts_and_each_tables_figures_once(
    made: Counter[str],
) -> None:
    judge, into = Judge(), exposition()
    for s in polls():
        made.clear()
        serve_poll(judge, into, s)
        once = {"placement": 1, "replication": 1, "capacity_view": 1, "trouble": 1}
        assert made == {**once, "figures": TABLES}


def test_the_shared_placement_gives_the_series_of_a_fresh_one() -> None:
    judge, shared, fresh = Judge(), exposition(), exposition()
    previous: ClusterSnapshot | None = None
    for s in polls():
        judged = serve_poll(judge, shared, s)
        assert judged.facts is not None and judged.own_facts is judged.facts
        # A poll judged alone, its facts derived again: the same series.
        again = facts_of(s, HealthRules())
        alone = JudgedPoll(s, judged.events, health_of(s, previous=previous), s, previous, again)
        asyncio.run(fresh.on_poll("c", alone))
        assert series(shared) == series(fresh)
        previous = s

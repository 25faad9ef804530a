"""The capacity collector: the servers' effective limits from their own configs, data dirs
seen from this host, forecasts kept across polls, the poller's hook, and the history rows
that carry it (no real server here: tests/live/test_capacity_live.py is the proof)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from fluss_proto.model import ConfigEntry
from konsole.collect.cluster.capacity import (
    CapacityCollector,
    data_dirs,
    dir_usage,
    effective,
    write_limits,
)
from konsole.collect.history.capacity_rows import capacity_from_values, capacity_values
from konsole.collect.history.rows import poll_record, snapshot_from_state
from konsole.model.capacity import CapacityPart, ConfigSource, DirUsage, ServerCapacity
from konsole.model.forecast import forecast_crossing
from konsole.model.thresholds import HealthThresholds
from tests._testutil.builders import snap, tm, view
from tests._testutil.judging import judged

INITIAL = "INITIAL_SERVER_CONFIG"
DYNAMIC = "DYNAMIC_SERVER_CONFIG"


def entry(key: str, value: str | None, source: str = INITIAL) -> ConfigEntry:
    return ConfigEntry(key, value, source)


# =========================================================================== configs


def test_effective_value_dynamic_beats_initial_and_absent_is_the_default() -> None:
    entries = [
        entry("server.data-disk.write-limit-ratio", "0.7"),
        entry("server.data-disk.write-limit-ratio", "0.6", DYNAMIC),
        entry("server.data-disk.write-recover-ratio", "0.5"),
    ]
    assert effective(entries, "server.data-disk.write-limit-ratio") == ("0.6", ConfigSource.DYNAMIC)
    assert effective(entries, "server.data-disk.write-recover-ratio") == (
        "0.5",
        ConfigSource.INITIAL,
    )
    assert effective(entries, "data.dir") == (None, ConfigSource.DEFAULT)
    limits = write_limits(entries)
    assert not isinstance(limits, str)
    assert (limits.limit_ratio, limits.recover_ratio) == (0.6, 0.5)
    assert (limits.limit_source, limits.recover_source) == (
        ConfigSource.DYNAMIC,
        ConfigSource.INITIAL,
    )
    assert limits.check_interval_s == 30.0 and limits.enabled


def test_defaults_are_the_1_0_lines_and_labelled_so() -> None:
    limits = write_limits([])
    assert not isinstance(limits, str)
    assert (limits.limit_ratio, limits.recover_ratio) == (0.85, 0.80)
    assert limits.limit_source is ConfigSource.DEFAULT


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("30 s", 30.0), ("500ms", 0.5), ("2 min", 120.0), ("1h", 3600.0), ("250", 0.25)],
)
def test_check_interval_durations(text: str, seconds: float) -> None:
    limits = write_limits([entry("server.data-disk.check-interval", text)])
    assert not isinstance(limits, str) and limits.check_interval_s == seconds


def test_an_unreadable_ratio_is_said_not_guessed() -> None:
    why = write_limits([entry("server.data-disk.write-limit-ratio", "lots")])
    assert isinstance(why, str) and "unreadable" in why
    disabled = write_limits([entry("server.data-disk.write-limit-ratio", "1.0")])
    assert not isinstance(disabled, str) and not disabled.enabled


def test_data_dirs_before_data_dir() -> None:
    assert data_dirs([entry("data.dir", "/a"), entry("data.dirs", "/b, /c")]) == ("/b", "/c")
    assert data_dirs([entry("data.dir", "/a")]) == ("/a",)
    assert data_dirs([]) == ()


# =========================================================================== dirs


def disk(path: Path, server_id: str | None) -> str:
    path.mkdir(parents=True, exist_ok=True)
    if server_id is not None:
        (path / "disk.properties").write_text(
            f"#\n#Mon Dec 01 10:00:00 UTC 2026\nversion=1\ndisk.id=abc\nserver.id={server_id}\n"
        )
    return str(path)


def test_a_dir_is_seen_when_local_and_its_disk_properties_names_the_server(
    tmp_path: Path,
) -> None:
    mine, other = disk(tmp_path / "a", "3"), disk(tmp_path / "b", "4")
    bare = disk(tmp_path / "c", None)
    got = dir_usage("3", "127.0.0.1", [mine, other, bare, str(tmp_path / "gone")])
    st = os.statvfs(mine)
    assert got[0].total_bytes == st.f_blocks * st.f_frsize and got[0].free_bytes is not None
    assert got[0].used_ratio is not None and 0 <= got[0].used_ratio <= 1
    assert got[1].total_bytes is None and got[1].why == "its disk.properties names server 4"
    assert got[2].why == "no disk.properties here (a 1.0-line server writes one)"
    assert got[3].total_bytes is None
    remote = dir_usage("3", "10.9.8.7", [mine])
    assert remote[0].total_bytes is None and "not on this host" in (remote[0].why or "")


def test_two_dirs_on_one_file_system_are_one_disk(tmp_path: Path) -> None:
    a, b = disk(tmp_path / "a", "1"), disk(tmp_path / "b", "1")
    got = dir_usage("1", "localhost", [a, b])
    assert got[0].same_disk_as is None and got[1].same_disk_as == a


# =========================================================================== collector


class FakeConfigs:
    def __init__(self, answers: Mapping[int, Sequence[ConfigEntry] | Exception]) -> None:
        self.answers = dict(answers)
        self.calls = 0

    async def __call__(
        self, client: Any, nodes: Sequence[int]
    ) -> Mapping[int, Sequence[ConfigEntry] | Exception]:
        self.calls += 1
        return {n: self.answers[n] for n in nodes}


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def collector(
    answers: Mapping[int, Sequence[ConfigEntry] | Exception], **rules: Any
) -> tuple[CapacityCollector, FakeConfigs, Clock]:
    fake, clock = FakeConfigs(answers), Clock()
    thresholds = HealthThresholds(forecast_window_s=60, forecast_min_span_s=5, **rules)
    return CapacityCollector(thresholds, configs=fake, clock=clock), fake, clock


LIMITED = [
    entry("server.data-disk.write-limit-ratio", "0.5"),
    entry("server.data-disk.write-recover-ratio", "0.4"),
]


def test_forecast_from_polls_and_configs_read_on_their_own_cadence() -> None:
    c, fake, clock = collector({0: LIMITED, 1: [], 2: RuntimeError("refused")})
    parts = []
    for i in range(12):
        clock.t = float(i)
        metrics = [
            tm(0, disk_usage_ratio=0.1 + 0.01 * i, disk_write_locked=False),
            tm(1),
            tm(2, disk_usage_ratio=0.3, disk_write_locked=False),
        ]
        s = snap(view(), metrics=metrics, t=1000.0 + i, seq=i + 1)
        part = asyncio.run(c.collect(object(), s))
        assert part is not None
        parts.append(part)
    assert fake.calls == 1  # once a minute
    last = parts[-1].servers
    assert last["0"].limits is not None and last["0"].limits.limit_ratio == 0.5
    f = last["0"].forecast
    assert f is not None and f.confident
    assert f.eta_s == pytest.approx((0.5 - 0.21) / 0.01)
    # server 1 exports no disk metrics (0.9.1): no lock, said so; server 2 failed to answer
    assert last["1"].limits is None and "0.9.1" in (last["1"].limits_why or "")
    assert last["2"].limits is None and "refused" in (last["2"].limits_why or "")
    assert parts[0].servers["0"].forecast is not None
    assert parts[0].servers["0"].forecast.why == "needs 5 samples in the window (1 so far)"
    clock.t = 61.0
    asyncio.run(c.collect(object(), snap(view(), metrics=[tm(0)], t=1061.0, seq=13)))
    assert fake.calls == 2


def test_a_failed_poll_has_no_part_and_a_gone_server_is_forgotten() -> None:
    c, _, _ = collector({0: LIMITED})
    assert asyncio.run(c.collect(object(), snap(None, failed="down"))) is None
    asyncio.run(c.collect(object(), snap(view([0]), metrics=[tm(0, disk_usage_ratio=0.2)])))
    assert ("0", None) in c._samples
    asyncio.run(c.collect(object(), snap(view([1]), metrics=[], t=1001.0, seq=2)))
    assert ("0", None) not in c._samples


def test_seeded_history_gives_a_forecast_at_the_first_poll() -> None:
    c, _, _ = collector({0: LIMITED})
    c.seed({("0", None): [(1000.0 + i, 0.1 + 0.01 * i) for i in range(10)]})
    s = snap(view([0]), metrics=[tm(0, disk_usage_ratio=0.2, disk_write_locked=False)], t=1010.0)
    part = asyncio.run(c.collect(object(), s))
    assert part is not None
    f = part.servers["0"].forecast
    assert f is not None and f.points == 11 and f.eta_s == pytest.approx(30.0)


def test_dirs_get_their_own_forecast_when_visible(tmp_path: Path) -> None:
    a, b = disk(tmp_path / "a", "0"), disk(tmp_path / "b", "0")
    answers = {0: [*LIMITED, entry("data.dirs", f"{a},{b}")]}
    used = {"v": 0}

    def stat(path: str) -> os.statvfs_result:
        real = os.statvfs(path)
        # 1,000 blocks; dir a fills 10 blocks a poll, dir b stays
        free = 1000 - (100 + 10 * used["v"] if path == a else 300)
        return os.statvfs_result((4096, 4096, 1000, free, free, 0, 0, 0, 0, real.f_namemax))

    devices = {a: 1, b: 2}
    fake, clock = FakeConfigs(answers), Clock()
    rules = HealthThresholds(forecast_window_s=60, forecast_min_span_s=5)
    c = CapacityCollector(rules, configs=fake, clock=clock, stat=stat, device=devices.__getitem__)
    part = None
    for i in range(8):
        used["v"], clock.t = i, float(i)
        m = tm(0, disk_usage_ratio=0.1 + 0.01 * i, disk_write_locked=False)
        part = asyncio.run(c.collect(object(), snap(view([0]), metrics=[m], t=1000.0 + i)))
    assert part is not None
    da, db = part.servers["0"].dirs
    assert (da.total_bytes, da.free_bytes) == (4096 * 1000, 4096 * (1000 - 170))
    assert da.forecast is not None and da.forecast.eta_s == pytest.approx((0.5 - 0.17) / 0.01)
    assert db.forecast is not None and db.forecast.why == "not rising"


# =========================================================================== history rows


def a_part() -> CapacityPart:
    pts = [(990.0 + i, 0.3 + 0.01 * i) for i in range(11)]
    f = forecast_crossing(pts, 0.5, now=1000.0, window_s=60)
    limits = write_limits(LIMITED)
    assert not isinstance(limits, str)
    dirs = (
        DirUsage("/data/a", 1000, 600, forecast=f),
        DirUsage("/data/b", why="not on this host"),
    )
    server = ServerCapacity("0", limits, None, dirs, f, 1000.0)
    return CapacityPart(1000.0, MappingProxyType({"0": server}), 60.0)


def test_capacity_rides_on_the_servers_metric_row_and_reads_back() -> None:
    part = a_part()
    values = capacity_values(part, 1000.0)["0"]
    names = [n for n, _ in values]
    assert "write_limit_ratio" in names and "lock_eta_s" in names
    assert "dir_used_ratio@/data/a" in names and not any("/data/b" in n for n in names)
    back = capacity_from_values([("0", dict(values))], 1000.0)
    assert back is not None
    s = back.servers["0"]
    assert s.limits == part.servers["0"].limits
    assert s.forecast is not None and s.forecast.confident
    assert s.forecast.eta_s == pytest.approx(10.0)
    assert [d.path for d in s.dirs] == ["/data/a"] and s.dirs[0].used_ratio == 0.4
    assert s.dirs[0].forecast is not None and s.dirs[0].forecast.eta_s == pytest.approx(10.0)
    assert capacity_from_values([("1", {"leader_count": 3.0})], 1000.0) is None


def test_a_recorded_poll_reads_back_with_its_capacity(tmp_path: Path) -> None:
    from store import open_reader, open_writer

    metrics = [tm(0, disk_usage_ratio=0.4, disk_write_locked=False), tm(1)]
    s = replace(snap(view([0, 1]), metrics=metrics, t=1000.0), capacity=a_part())
    path = tmp_path / "h.sqlite"
    with open_writer(path) as writer:
        writer.record(poll_record(s))
    with open_reader(path) as reader:
        state = reader.state_at(1_000_000)
        assert state is not None
        back = snapshot_from_state(state)
        (point,) = reader.metric_series("tablet-server 0", "dir_used_ratio@/data/a")
        assert point.value == pytest.approx(0.4)  # the store keeps float32
    assert back.capacity is not None
    limits = back.capacity.servers["0"].limits
    assert limits is not None and limits.limit_ratio == pytest.approx(0.5)
    assert limits.limit_source is ConfigSource.INITIAL
    assert back.tablet_metrics["0"].disk_usage_ratio == pytest.approx(0.4)  # read as before


# =========================================================================== the poller's hook


def test_the_poller_attaches_the_capacity_part_of_a_good_poll_within_its_time() -> None:
    from konsole.collect.cluster.poller import Poller
    from tests._testutil.poller import Fakes

    seen: list[Any] = []

    async def quick(client: Any, snapshot: Any) -> CapacityPart:
        seen.append(client)
        return CapacityPart(snapshot.taken_at)

    async def slow(client: Any, snapshot: Any) -> CapacityPart:
        await asyncio.sleep(5)
        return CapacityPart(snapshot.taken_at)

    async def broken(client: Any, snapshot: Any) -> CapacityPart:
        raise RuntimeError("a bug")

    def poller(fn: Any, fakes: Fakes) -> Poller:
        # Only the slow part waits the poll out; the others are in time on a starved run too.
        base = fakes.poller(poll_timeout=0.5 if fn is slow else 10.0)
        return Poller(
            base.config,
            connect=fakes.connect,
            gather=fakes.gather,
            health=fakes.health,
            probe=fakes.probe,
            scrape=fakes.scrape,
            capacity=fn,
        )

    async def one(fn: Any, fakes: Fakes | None = None) -> Any:
        p = poller(fn, fakes or Fakes())
        try:
            return await p.poll()
        finally:
            await p.aclose()

    good = asyncio.run(one(quick))
    assert good.capacity is not None and seen and seen[0] is not None  # the poll's client
    assert asyncio.run(one(slow)).capacity is None  # out of time: left out, the poll kept
    assert asyncio.run(one(broken)).capacity is None
    down = asyncio.run(one(quick, Fakes(views=[ConnectionError("refused")])))
    assert not down.ok and down.capacity is None


# =========================================================================== serve's series


def test_serve_exports_headroom_limit_eta_and_the_visible_dirs() -> None:
    from konsole.model.poll import Judge
    from konsole.serve.exposition.families import cluster_series

    metrics = [tm(0, disk_usage_ratio=0.4, disk_write_locked=False), tm(1)]
    s = replace(snap(view([0, 1]), metrics=metrics, t=1000.0), capacity=a_part())
    out = cluster_series(Judge().judge(s))
    assert out["konsole_disk_write_limit_ratio"] == [(("0",), 0.5)]
    assert out["konsole_disk_headroom_ratio"] == [(("0",), pytest.approx(0.1))]
    assert out["konsole_write_lock_eta_seconds"] == [(("0",), pytest.approx(10.0))]
    assert out["konsole_data_dir_usage_ratio"] == [(("0", "/data/a"), pytest.approx(0.4))]
    assert out["konsole_data_dir_free_bytes"] == [(("0", "/data/a"), 600.0)]
    # unknown is absent, never 0: no part, or a 0.9.1 server
    bare = cluster_series(Judge().judge(snap(view([0, 1]), metrics=[tm(0), tm(1)], t=1000.0)))
    assert bare["konsole_disk_headroom_ratio"] == [] == bare["konsole_write_lock_eta_seconds"]


# =========================================================================== the report


def test_the_report_and_its_text_say_each_state() -> None:
    from konsole.cli.capacity import capacity_text
    from konsole.model.capacity_report import capacity_dict

    metrics = [
        tm(0, disk_usage_ratio=0.4, disk_write_locked=False, local_size=1 << 30),
        tm(
            1,
            disk_usage_ratio=0.52,
            disk_write_locked=True,
            requests=MappingProxyType({"produceLog": (2.5, 163.7)}),
        ),
        tm(2),  # 0.9.1: nothing of it
    ]
    part = a_part()
    limited = part.servers["0"].limits
    servers = dict(part.servers)
    servers["1"] = ServerCapacity("1", limited)
    servers["2"] = ServerCapacity("2", None, "the server has no data-disk write lock (0.9.1)")
    s = replace(
        snap(view([0, 1, 2]), metrics=metrics, t=1000.0),
        capacity=replace(part, servers=MappingProxyType(servers)),
    )
    report = capacity_dict(judged(s, HealthThresholds()), HealthThresholds(), history_samples=11)
    json_ok = json.dumps(report)  # plain JSON values only
    assert json_ok
    by = {r["server"]: r for r in report["servers"]}
    assert by["0"]["lock_outlook"]["level"] == "critical"  # 10 s away
    assert by["1"]["write_locked"] is True and by["1"]["lock_outlook"]["level"] is None
    assert "write lock is engaged" in by["1"]["requests"]["why_writes_fail"]
    assert by["2"]["used_ratio"] is None and by["2"]["limits"] is None
    assert [f["rule"] for f in report["findings"]] == ["disk_headroom", "write_lock_forecast"]
    text = capacity_text(report)
    head = "forecast: theil-sen over the last 1h00m (90% interval; 11 recorded samples read)"
    assert head in text
    assert "LOCKED" in text and "0.9.1" in text and "why writes fail" in text
    assert "/data/b" in text and "not on this host" in text


def test_a_history_seeds_the_forecast_of_the_server_and_its_dirs(tmp_path: Path) -> None:
    from konsole.collect.history.capacity_rows import seed_from_history
    from store import open_reader, open_writer

    path = tmp_path / "h.sqlite"
    with open_writer(path) as writer:
        for i in range(12):
            part = CapacityPart(
                1000.0 + i,
                MappingProxyType(
                    {"0": ServerCapacity("0", None, None, (DirUsage("/d", 1000, 900 - 10 * i),))}
                ),
            )
            m = tm(0, disk_usage_ratio=0.1 + 0.01 * i, disk_write_locked=False)
            s = replace(snap(view([0]), metrics=[m], t=1000.0 + i, seq=i + 1), capacity=part)
            writer.record(poll_record(s))
    c, _, _ = collector({0: LIMITED})
    with open_reader(path) as reader:
        n = seed_from_history(c, reader, 1011.5, 60.0)
    assert n == 24  # 12 of the server's, 12 of its dir
    assert [round(v, 2) for _, v in c._samples[("0", None)]][-2:] == [0.20, 0.21]
    assert len(c._samples[("0", "/d")]) == 12
    s = snap(view([0]), metrics=[tm(0, disk_usage_ratio=0.22, disk_write_locked=False)], t=1012.0)
    got = asyncio.run(c.collect(object(), s))
    assert got is not None
    f = got.servers["0"].forecast
    assert f is not None and f.points == 13 and f.eta_s == pytest.approx(28.0, abs=0.1)


def test_the_console_session_seeds_its_forecasts_from_the_history_before_its_first_poll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 41: a polling console session's forecasts begin from the recorded disk usage
    (konsole.collect.history.reads.seed_capacity), not empty."""
    import time

    from konsole.collect.cluster import connect
    from konsole.collect.session import ClusterSession
    from konsole.model.known_servers import KnownServers
    from store import open_writer

    path = tmp_path / "h.sqlite"
    now = time.time()
    with open_writer(path) as writer:
        for i in range(12):
            m = tm(0, disk_usage_ratio=0.1 + 0.01 * i, disk_write_locked=False)
            writer.record(poll_record(snap(view([0]), metrics=[m], t=now - 12 + i, seq=i + 1)))
    c, _, _ = collector({0: LIMITED})

    class NoPolls:
        # the session also seeds the poller's known servers (issue 38)
        known = KnownServers()

        def seed_known(self, known: KnownServers) -> None:
            self.known = known

        def follow_retirements(self, look: Any) -> None:
            pass

        async def snapshots(self, stop: asyncio.Event) -> Any:
            return
            yield

    class Live:
        poller, capacity = NoPolls(), c

        async def aclose(self) -> None:
            return None

    monkeypatch.setattr(connect, "live_poller", lambda profile, interval: Live())
    session = ClusterSession(profile=Any, history=path, interval=1.0, clock=lambda: now)  # type: ignore[arg-type]
    snapshots, _ = session._source()

    async def drain() -> None:
        async for _ in snapshots(asyncio.Event()):
            pass

    asyncio.run(drain())
    assert [round(v, 2) for _, v in c._samples[("0", None)]] == [
        round(0.1 + 0.01 * i, 2) for i in range(12)
    ]

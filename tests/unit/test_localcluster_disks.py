"""Small disks for local tablet servers: ``--disk`` parsed, data dirs in server.yaml, tmpfs
mounts made and always taken away (root: the machine and CI run as root)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from konsole.errors import ClusterError
from konsole.localcluster import LocalCluster
from konsole.localcluster.config import write_server_config
from konsole.localcluster.disks import _mounted, mount_tmpfs, parse_disks, unmount
from konsole.localcluster.state import COORDINATOR, TABLET_SERVER, ClusterState
from tests._testutil.mounts import need_root


def test_parse_disks() -> None:
    assert parse_disks(["ts0=256m", "ts1=64m,1g"], 2) == {0: (256,), 1: (64, 1024)}
    assert parse_disks([], 3) == {}


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("ts0", "tsN=SIZE"),
        ("cs0=64m", "tsN=SIZE"),
        ("ts=64m", "tsN=SIZE"),
        ("ts5=64m", "no tablet server 5"),
        ("ts0=lots", "not a size"),
        ("ts0=1m", "outside"),
    ],
)
def test_parse_disks_rejects(spec: str, words: str) -> None:
    with pytest.raises(ClusterError, match=words):
        parse_disks([spec], 2)


def test_a_server_given_twice_is_an_error() -> None:
    with pytest.raises(ClusterError, match="given twice"):
        parse_disks(["ts0=64m", "ts0=32m"], 1)


def _yaml(path: str) -> dict[str, str]:
    text = (Path(path) / "server.yaml").read_text()
    return dict(line.split(": ", 1) for line in text.splitlines())


def test_server_yaml_names_one_dir_as_data_dir_and_several_as_data_dirs(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path)
    state = ClusterState("1.0-SNAPSHOT", "/lib", "java", 17, [], [])
    state.servers.append(cluster._new_server("zookeeper", 0, ["client"]))
    state.servers.append(cluster._new_server(COORDINATOR, 0, ["rpc", "metrics"]))
    for i in range(3):
        state.servers.append(cluster._new_server(TABLET_SERVER, i, ["rpc", "metrics"]))
    ts0, ts1, ts2 = state.servers[2:]
    ts1.data_dirs = ["/mnt/a"]
    ts2.data_dirs = ["/mnt/a2", "/mnt/b2"]
    for s in state.servers:
        write_server_config(cluster.run_dir, state, s, {}, [])
    assert _yaml(ts0.config_dir)["data.dir"] == ts0.data_dir
    assert "data.dirs" not in _yaml(ts0.config_dir)
    assert _yaml(ts1.config_dir)["data.dir"] == "/mnt/a"
    assert "data.dirs" not in _yaml(ts1.config_dir)
    assert _yaml(ts2.config_dir)["data.dirs"] == "/mnt/a2,/mnt/b2"


def test_a_tmpfs_is_mounted_at_its_size_and_unmounted(tmp_path: Path) -> None:
    need_root("a tmpfs mount")
    where = tmp_path / "disk"
    mount_tmpfs(where, 16)
    try:
        st = os.statvfs(where)
        assert st.f_blocks * st.f_frsize == 16 << 20
        assert _mounted(str(where))
    finally:
        assert unmount([str(where)]) == []
    assert not _mounted(str(where))
    assert unmount([str(where), str(tmp_path / "never")]) == []  # nothing mounted: nothing to do


def test_a_busy_tmpfs_is_detached_lazily(tmp_path: Path) -> None:
    need_root("a tmpfs mount")
    where = tmp_path / "busy"
    mount_tmpfs(where, 16)
    held = (where / "open").open("w")  # a server that did not let go
    try:
        assert unmount([str(where)]) == []
        assert not _mounted(str(where))
    finally:
        held.close()


def test_stop_and_a_new_start_unmount_what_the_state_lists(tmp_path: Path) -> None:
    """A cluster's mounts go on stop, and a leftover (a stop that never ran) on the next
    start's wipe: nothing stays mounted under a run dir."""
    need_root("a tmpfs mount")
    cluster = LocalCluster(tmp_path / "run")
    state = ClusterState("1.0-SNAPSHOT", "/lib", "java", 17, [], [])
    cluster.run_dir.mkdir(parents=True)
    ts = cluster._new_server(TABLET_SERVER, 0, ["rpc", "metrics"])
    state.servers.append(ts)
    said: list[str] = []
    cluster._mount(state, {0: (16, 16)}, said.append)
    assert [Path(p).name for p in ts.mounts] == ["disk-0", "disk-1"] and len(said) == 2
    assert all(_mounted(p) for p in ts.mounts)
    cluster.stop()
    after = cluster.load()
    assert after is not None and after.servers[0].mounts == []
    assert not any(_mounted(p) for p in ts.data_dirs)
    # a leftover: mounted again, then the next start's wipe takes it away
    cluster._mount(state, {0: (16,)}, said.append)
    leftover = list(state.servers[0].mounts)
    cluster._wipe()
    assert not any(_mounted(p) for p in leftover)

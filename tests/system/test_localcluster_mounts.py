"""Small disks for local tablet servers: tmpfs mounts made and always taken away (root:
the machine and CI run as root). Here, not among the unit tests: mounts are the machine's,
not to be made from every core of the parallel unit run."""

from __future__ import annotations

import os
from pathlib import Path

from konsole.localcluster import LocalCluster
from konsole.localcluster.disks import _mounted, mount_tmpfs, unmount
from konsole.localcluster.state import TABLET_SERVER, ClusterState
from tests._testutil.mounts import need_root


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

"""Small disks for a local tablet server: each of its data dirs on a tmpfs of a given size,
so that a test (or a demo) can fill one in seconds and watch the server lock its writes.

``--disk ts0=256m`` gives tablet server 0 one data dir on a 256 MiB tmpfs; ``--disk
ts1=64m,128m`` gives server 1 two data dirs (``data.dirs``, the 1.0 line), each on its own
tmpfs, so that each has its own usage. A tmpfs is memory: it holds what is written to it
until it is unmounted, and no more than its size.

Mounting needs root (``mount -t tmpfs``). The mounts are listed in the cluster's state
(``ServerState.mounts``) before they are made, and :func:`unmount` takes them away after the
servers are stopped: on ``stop``, when a start fails, and when a new cluster wipes the run
dir. A mount that is still busy is detached lazily (``umount -l``), so nothing is left
mounted even when a server process survives.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

from konsole.errors import ClusterError
from konsole.localcluster.state import TABLET_SERVER, parse_target

__all__ = ["DiskSpec", "mount_tmpfs", "parse_disks", "unmount"]

#: Tablet server id -> the size in MiB of each of its data dirs' tmpfs.
DiskSpec = Mapping[int, Sequence[int]]

_SIZE: Final = re.compile(r"^(\d+)\s*([mg]i?b?)?$", re.IGNORECASE)
#: Smallest and largest tmpfs a data dir may get (MiB): the server needs a few MiB to
#: start, and a tmpfs holds its data in memory.
MIN_MIB: Final = 16
MAX_MIB: Final = 8192


def _mib(text: str) -> int:
    match = _SIZE.match(text.strip())
    if match is None:
        raise ClusterError(f"--disk: not a size: {text!r} (use 256m or 1g)")
    n, unit = int(match.group(1)), (match.group(2) or "m").lower()
    mib = n * 1024 if unit.startswith("g") else n
    if not MIN_MIB <= mib <= MAX_MIB:
        raise ClusterError(f"--disk: {text} is outside {MIN_MIB}m..{MAX_MIB // 1024}g")
    return mib


def parse_disks(specs: Iterable[str], tablet_servers: int) -> dict[int, tuple[int, ...]]:
    """``ts0=256m``, ``ts1=64m,128m`` -> {0: (256,), 1: (64, 128)}; ClusterError otherwise."""
    out: dict[int, tuple[int, ...]] = {}
    for spec in specs:
        target, sep, sizes = spec.partition("=")
        role, sid = parse_target(target.strip()) if sep else (None, None)
        if role != TABLET_SERVER or sid is None:
            raise ClusterError(f"--disk takes tsN=SIZE[,SIZE...], got {spec!r}")
        if sid >= tablet_servers:
            raise ClusterError(f"--disk {spec}: there is no tablet server {sid}")
        if sid in out:
            raise ClusterError(f"--disk: tablet server {sid} given twice")
        out[sid] = tuple(_mib(s) for s in sizes.split(","))
    return out


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=30, check=False)


def mount_tmpfs(path: Path, mib: int) -> None:
    """A tmpfs of ``mib`` MiB at ``path`` (made if missing); ClusterError when it cannot be."""
    if os.geteuid() != 0:
        raise ClusterError("--disk mounts a tmpfs for each data dir: it needs root")
    path.mkdir(parents=True, exist_ok=True)
    done = _run("mount", "-t", "tmpfs", "-o", f"size={mib}m,mode=0755", "tmpfs", str(path))
    if done.returncode != 0:
        raise ClusterError(f"mount of a {mib} MiB tmpfs at {path} failed: {done.stderr.strip()}")


def _mounted(path: str) -> bool:
    target = os.path.realpath(path)
    try:
        with open("/proc/self/mounts") as f:
            return any(line.split()[1] == target for line in f if len(line.split()) > 1)
    except OSError:
        return False


def unmount(paths: Iterable[str]) -> list[str]:
    """Unmounts each of ``paths`` that is mounted (lazily when busy); returns what was
    still mounted afterwards (empty when all went)."""
    left = []
    for path in paths:
        if not _mounted(path):
            continue
        if _run("umount", path).returncode != 0:
            _run("umount", "-l", path)
        if _mounted(path):
            left.append(path)
    return left

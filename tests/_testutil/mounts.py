"""File systems a test makes and removes: a tiny tmpfs (to fill), a read-only bind mount,
an ext4 image on a loop device that the kernel turns read-only under an open file.

They need root (``mount``). :func:`need_root` skips a test when not root, except in CI,
which runs as root: there a test that cannot make its file system fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = [
    "FaultPlace",
    "ext4_image",
    "fault_place",
    "fill",
    "need_root",
    "read_only_bind",
    "tmpfs",
    "turn_read_only",
]


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def need_root(what: str) -> None:
    if os.geteuid() != 0:
        if _in_ci():
            pytest.fail(f"{what} needs root (CI runs as root)", pytrace=False)
        pytest.skip(f"{what} needs root (mount)")


def _run(*args: str) -> None:
    out = subprocess.run(args, capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise OSError(f"{' '.join(args)}: {out.stderr.strip() or out.returncode}")


def _umount(path: Path) -> None:
    # Lazy: a process of the test may still hold files there; the kernel detaches it now
    # and frees it when they are closed.
    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


@contextlib.contextmanager
def tmpfs(path: Path, size_kb: int) -> Iterator[Path]:
    """A tmpfs of ``size_kb`` KiB mounted at ``path`` (made if missing) for the block."""
    need_root("a tmpfs mount")
    path.mkdir(parents=True, exist_ok=True)
    _run("mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(path))
    try:
        yield path
    finally:
        _umount(path)


@contextlib.contextmanager
def read_only_bind(path: Path) -> Iterator[Path]:
    """``path`` mounted read-only over itself for the block (root ignores chmod)."""
    need_root("a read-only bind mount")
    _run("mount", "--bind", str(path), str(path))
    try:
        _run("mount", "-o", "remount,bind,ro", str(path))
        yield path
    finally:
        _umount(path)


def fill(directory: Path, *, limit_mb: int = 64) -> Path:
    """Write a filler file in ``directory`` until its file system is full (bounded)."""
    filler = directory / "filler"
    chunk = b"\0" * 4096
    with filler.open("wb", buffering=0) as f:
        for _ in range(limit_mb * 256):
            try:
                f.write(chunk)
            except OSError:
                return filler
    raise AssertionError(f"{directory}: not full after {limit_mb} MB")


@contextlib.contextmanager
def ext4_image(path: Path, image: Path, size_mb: int = 16) -> Iterator[str]:
    """An ext4 image on a loop device mounted at ``path`` with ``errors=remount-ro``;
    yields the device's name (for :func:`turn_read_only`). Fails in CI if the machine has
    no loop device or ext4, skips elsewhere."""
    need_root("an ext4 loop mount")
    missing = [tool for tool in ("mkfs.ext4", "losetup") if shutil.which(tool) is None]
    if missing or not Path("/dev/loop-control").exists():
        why = f"no loop device or {', '.join(missing) or 'loop-control'} on this machine"
        if _in_ci():
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    with image.open("wb") as f:
        f.truncate(size_mb << 20)
    _run("mkfs.ext4", "-q", str(image))
    path.mkdir(parents=True, exist_ok=True)
    _run("mount", "-o", "loop,errors=remount-ro", str(image), str(path))
    try:
        source = subprocess.run(
            ["findmnt", "-no", "SOURCE", str(path)], capture_output=True, text=True, timeout=30
        ).stdout.strip()
        yield Path(os.path.realpath(source)).name
    finally:
        _umount(path)


def turn_read_only(device: str) -> None:
    """What the kernel does to ext4 after an I/O error with ``errors=remount-ro``: the file
    system becomes read-only under its open files (a plain remount is refused while files
    are open for writing)."""
    Path(f"/sys/fs/ext4/{device}/trigger_fs_error").write_text("konsole test\n")


@dataclass(frozen=True)
class FaultPlace:
    """Where the fault tests keep a history: a small tmpfs (``disk``) to fill, the history
    in a directory of it (``path``) to remove, a place to move it to (``moved``)."""

    disk: Path
    path: Path
    moved: Path


@contextlib.contextmanager
def fault_place(tmp_path: Path, size_kb: int = 16 * 1024) -> Iterator[FaultPlace]:
    disk = tmp_path / "disk"
    with tmpfs(disk, size_kb):
        # The history's folder exists when recording starts (an explicit --history in a
        # missing folder is refused); removing it later is one of the faults.
        (disk / "dir").mkdir()
        yield FaultPlace(disk, disk / "dir" / "h.sqlite", disk / "moved.sqlite")

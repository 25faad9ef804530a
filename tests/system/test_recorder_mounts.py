"""The history's file system under the recorder's feet: a directory turned read-only, a
full file system, an ext4 file system remounted read-only after an I/O error.

As in tests/unit/test_recorder_faults.py, the recorder says so once, keeps every poll it
can in memory and writes them in order once it can. Mounts (tmpfs, bind, ext4 on a loop
device) need root: see ``tests/_testutil/mounts.py`` (they skip without it, and fail under
CI, which runs as root).
"""

from __future__ import annotations

from pathlib import Path

from tests._testutil import mounts
from tests._testutil.history_files import poll_seqs as seqs
from tests._testutil.recorder_rig import Rig, kinds


def test_a_read_only_directory_keeps_the_polls_until_it_is_writable(tmp_path: Path) -> None:
    directory = tmp_path / "ro"
    directory.mkdir()
    path = directory / "h.sqlite"
    rig = Rig(path)
    rig.polls(2)
    path.unlink()  # to be made again, in a directory that has turned read-only
    with mounts.read_only_bind(directory):
        assert rig.polls(3) == [None, None, None]
        assert "Read-only file system" in rig.troubles[-1]
    assert rig.polls(1)[0] is not None
    rig.r.close()
    assert seqs(path) == [3, 4, 5, 6]
    assert len(rig.troubles) == 2  # deleted, then read-only (said once each)


def test_a_full_file_system_keeps_the_polls_until_there_is_room(tmp_path: Path) -> None:
    directory = tmp_path / "small"
    with mounts.tmpfs(directory, 1024):
        path = directory / "h.sqlite"
        rig = Rig(path)
        rig.polls(2, tables=20)
        filler = mounts.fill(directory)
        for _ in range(100):  # commits into space the WAL already has may still succeed
            rig.polls(1, tables=20)
            if rig.r.status.reason is not None:
                break
        assert rig.r.status.reason is not None and "full" in rig.r.status.reason
        waiting = rig.r.status.polls_waiting
        assert waiting >= 1
        filler.unlink()
        rig.polls(1, tables=20)
        assert rig.r.status.polls_waiting == 0 and rig.r.status.recording
        rig.r.close()
        assert seqs(path) == list(range(1, rig.seq + 1))
        assert kinds(path).count("history_trouble") == 1
        assert len(rig.troubles) == 1


def test_a_file_system_turned_read_only_under_the_writer(tmp_path: Path) -> None:
    """ext4 with errors=remount-ro after an I/O error: every write fails; the polls wait;
    the disk replaced (here: a new file system mounted there) takes them."""
    directory = tmp_path / "disk"
    with mounts.ext4_image(directory, tmp_path / "disk.img") as device:
        path = directory / "h.sqlite"
        rig = Rig(path)
        rig.polls(2)
        mounts.turn_read_only(device)
        assert rig.polls(2) == [None, None]
        assert len(rig.troubles) == 1, rig.said
        with mounts.tmpfs(directory, 4096):  # on top: the path names a new place
            rig.polls(1)
            rig.r.close()
            assert seqs(path) == [3, 4, 5]
            assert rig.r.status.polls_missed == 0
            assert len(rig.troubles) == 2  # the I/O error, then the file gone from the path


def test_a_healthy_history_in_a_read_only_directory_is_read_not_called_corrupt(
    tmp_path: Path,
) -> None:
    """Issue 40 finding 5: SQLite cannot make the -shm of a WAL file in a read-only
    directory; the reader used to answer "corrupt or not a database" (65)."""
    from click.testing import CliRunner

    from konsole.cli.main import main
    from tests._testutil.recorded import server_left_history

    directory = tmp_path / "ro"
    directory.mkdir()
    path = server_left_history(directory / "h.sqlite")
    before = sorted(p.name for p in directory.iterdir())
    with mounts.read_only_bind(directory):
        for args in (["events"], ["info"], ["as-of", "now"]):
            done = CliRunner().invoke(main, ["history", *args, "--history", str(path)])
            assert done.exit_code == 0, (args, done.output)
            assert "corrupt" not in done.output
        events = CliRunner().invoke(main, ["history", "events", "--history", str(path)])
        assert "server_left" in events.stdout
    assert sorted(p.name for p in directory.iterdir()) == before


def test_a_history_with_unmerged_writes_in_a_read_only_directory_says_the_directory(
    tmp_path: Path,
) -> None:
    """With a -wal holding writes, the file alone is not the history: not read as if it
    were (immutable would miss them), and not called corrupt: the directory is the trouble."""
    from click.testing import CliRunner

    from konsole.cli.main import main
    from tests._testutil.recorded import server_left_history

    directory = tmp_path / "ro"
    directory.mkdir()
    path = server_left_history(directory / "h.sqlite")
    (directory / "h.sqlite-wal").write_bytes(b"\0" * 32)  # a -wal with something in it
    with mounts.read_only_bind(directory):
        done = CliRunner().invoke(main, ["history", "events", "--history", str(path)])
    assert done.exit_code == 74, done.output
    assert "directory is not writable" in done.stderr and "corrupt" not in done.stderr

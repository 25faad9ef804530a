"""`konsole serve` against the session cluster while the history file it records is deleted,
moved, replaced by another program's database, its directory removed, its tmpfs filled, and
(a second test) its ext4 file system turned read-only under it until a good disk is mounted
at the same place; and (a third) `konsole admin` actions seen on its ``/metrics``.

After each fault serve is alive and polling (``/metrics`` answers, ``konsole_polls``
advances), it said NOT RECORDING once (twice for the foreign file: replaced, then refused;
twice for the read-only disk: the I/O error, then the new disk at the path), its
``/metrics`` shows the trouble (``konsole_history_troubles_total`` grows; while the fault
lasts ``konsole_history_ok`` is 0), it records again (``konsole_history_ok`` 1), and every
poll taken after the fault (but the one in flight) is in a history file afterwards, each
file passing ``PRAGMA integrity_check``; none was lost or is left waiting. Serve polls every
0.5 s; its history is under ``XDG_DATA_HOME`` on the test's own file system. Mounts need
root (tests/_testutil/mounts.py); every wait is bounded; everything on loopback.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from konsole.localcluster.ports import free_port
from tests._testutil import mounts
from tests._testutil.history_faults import WAIT_S, Faults, wait_alive

pytestmark = pytest.mark.timeout(240)
FILE_FAULTS = pytest.mark.client_side(
    "the faults are in the history file under konsole; the server generation does not enter"
)

INTERVAL = "0.5"
CLUSTER = "local"
STOPPED = re.compile(r"stopped on SIGTERM: (\d+) poll\(s\) served")
#: A config both generations take dynamically (a MemorySize); set, then deleted.
KEY = "kv.rocksdb.shared-rate-limiter.bytes-per-sec"


class Serving:
    """A `konsole serve --local` process, its stderr so far and its /metrics."""

    def __init__(self, cluster: dict[str, Any], data_home: Path, work: Path) -> None:
        self.port = free_port()
        self.data_home = data_home
        self.env = {
            **os.environ,
            "XDG_DATA_HOME": str(data_home),
            "XDG_CONFIG_HOME": str(work / "config"),
            "PYTHONUNBUFFERED": "1",
        }
        self.local = ["--local", "--run-dir", str(cluster["run_dir"])]
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "konsole.cli",
                "serve",
                *self.local,
                "--interval",
                INTERVAL,
                "--listen",
                f"127.0.0.1:{self.port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )
        self.err: list[str] = []
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line)

    @property
    def history(self) -> Path:
        return self.data_home / "konsole" / "history" / f"{CLUSTER}.sqlite"

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """Every sample of cluster ``local`` now: (name, other labels) -> value."""
        text = httpx.get(f"http://127.0.0.1:{self.port}/metrics", timeout=5).text
        return {
            (s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "cluster"))): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
            if s.labels.get("cluster") == CLUSTER
        }

    def value(self, name: str, **labels: str) -> float | None:
        return self.metrics().get((name, tuple(sorted(labels.items()))))

    def last_recorded(self) -> int:
        """Polls taken and handed on (each recorded, or kept to record, first)."""
        try:
            return int(self.value("konsole_polls_total") or 0)
        except httpx.HTTPError:
            return 0

    def said(self, text: str) -> int:
        return sum(text in line for line in list(self.err))

    def taken(self) -> int:
        return self.last_recorded()  # konsole_polls_total counts the polls kept in memory

    def wait(self, what: str, check: Callable[[], bool], timeout: float = WAIT_S) -> None:
        wait_alive(self.proc, self.err, what, check, timeout)

    def stop(self) -> int:
        """SIGTERM; the polls it served, from its last line."""
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=30) == 0, "".join(self.err)
        self._reader.join(timeout=10)
        found = [m for line in self.err if (m := STOPPED.search(line))]
        assert found, self.err
        return int(found[-1].group(1))


@contextmanager
def serving(cluster: dict[str, Any], data_home: Path, work: Path) -> Iterator[Serving]:
    run = Serving(cluster, data_home, work)
    try:
        run.wait("serve's first poll", lambda: run.last_recorded() >= 1, timeout=60)
        yield run
    finally:
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait(timeout=30)


class Shown:
    """What /metrics must show of each fault: checked by :class:`Faults` as it strikes."""

    def __init__(self, run: Serving) -> None:
        self.run = run
        self.troubles = 0.0

    def said(self, name: str, lasting: bool) -> None:
        run = self.run
        run.wait(
            f"{name}: a trouble more on /metrics",
            lambda: (run.value("konsole_history_troubles_total") or 0) > self.troubles,
        )
        if lasting:  # until undone: the history is not written, said on /metrics
            assert run.value("konsole_history_ok") == 0.0, name
            polls = run.last_recorded()
            run.wait(f"{name}: polling on", lambda: run.last_recorded() > polls)

    def healed(self, name: str) -> None:
        run = self.run
        run.wait(f"{name}: ok again", lambda: run.value("konsole_history_ok") == 1.0)
        self.troubles = run.value("konsole_history_troubles_total") or 0.0

    def final(self, faults: int) -> None:
        """Every fault counted once; nothing lost, nothing left waiting."""
        run = self.run
        assert run.value("konsole_history_troubles_total") == float(faults)
        assert run.value("konsole_history_polls_lost_total") == 0.0
        assert run.value("konsole_history_polls_waiting") == 0.0


@FILE_FAULTS
def test_serve_survives_its_history_deleted_moved_replaced_removed_and_full(
    fluss_cluster: dict[str, Any], tmp_path: Path
) -> None:
    disk = tmp_path / "disk"
    with mounts.tmpfs(disk, 16 * 1024), serving(fluss_cluster, disk / "data", tmp_path) as run:
        shown = Shown(run)
        faults = Faults(run, run.history, tmp_path, on_said=shown.said, on_healed=shown.healed)
        faults.on_disk(disk, disk / "moved.sqlite")
        shown.final(5)
        taken = run.stop()
        faults.check(taken)  # on the tmpfs still: serve has stopped


@FILE_FAULTS
def test_serve_survives_its_file_system_turned_read_only(
    fluss_cluster: dict[str, Any], tmp_path: Path
) -> None:
    disk = tmp_path / "disk"
    with (
        mounts.ext4_image(disk, tmp_path / "disk.img") as device,
        serving(fluss_cluster, disk / "data", tmp_path) as run,
        ExitStack() as replaced,
    ):
        shown = Shown(run)
        faults = Faults(run, run.history, tmp_path, on_said=shown.said, on_healed=shown.healed)
        faults.read_only(device, disk, replaced)
        shown.final(1)
        taken = run.stop()
        faults.check(taken)


def test_operator_actions_of_konsole_admin_count_on_serves_metrics(
    fluss_cluster: dict[str, Any], tmp_path: Path
) -> None:
    """`konsole admin config set` then `config delete` (the key back to its default) from
    another process, into the history serve records: the counter moves by action and result."""
    with serving(fluss_cluster, tmp_path / "data", tmp_path) as run:

        def admin(*args: str) -> None:
            proc = subprocess.run(
                [sys.executable, "-m", "konsole.cli", "admin", "config", *args],
                capture_output=True,
                text=True,
                env=run.env,
                timeout=120,
                check=False,
            )
            assert proc.returncode == 0, proc.stderr

        def counted(action: str, result: str) -> float:
            found = run.value("konsole_operator_actions_total", action=action, result=result)
            return found or 0.0

        assert counted("config set", "succeeded") == 0.0
        admin("set", KEY, "100mb", *run.local, "--allow-writes", "--yes")
        admin("delete", KEY, *run.local, "--allow-writes", "--yes")
        run.wait(
            "both actions on /metrics",
            lambda: (
                counted("config set", "succeeded") == 1.0
                and counted("config delete", "succeeded") == 1.0
            ),
        )
        assert run.value("konsole_history_ok") == 1.0
        run.stop()

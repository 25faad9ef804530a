"""The spinning-thread guard (tests/conftest.py, tests/_testutil/thread_guard.py) proven on a
real leak: a pytest run in a child process, with the project's conftest as its plugin, runs
one live module that leaves a pyfluss connection draining for ever, and the guard fails
that module at its teardown.

The leak is the one the guard exists for (konsole/localcluster/settle.py): a connection
with records that cannot be delivered (its one-server cluster stopped under it) whose
close() is given up on, so its sender loops with no pause. The child module is written
into a temporary ``tests/live/`` folder (the guard judges modules under that path); the
cluster is this module's own, stopped by the child. pyfluss is client side: the 1.0
generation's run is enough (``client_side``). Every wait is bounded; loopback only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from konsole.localcluster import LocalCluster
from tests.conftest import FlussServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(300),
    pytest.mark.client_side("the leak is pyfluss' own, whatever the server generation"),
]

REPO = Path(__file__).resolve().parents[2]

LEAKY_MODULE = '''
"""Leaves a pyfluss connection draining for ever (run by test_thread_guard_live.py)."""

import asyncio
import os
from pathlib import Path

from konsole.localcluster import LocalCluster
from tests._testutil import pyfluss_data as pf

#: Kept referenced: the connection and its writer outlive the test, as a leak does.
LEFT: list[object] = []


async def test_leaves_a_connection_draining() -> None:
    conn = await pf.connect(os.environ["LEAK_BOOTSTRAP"])
    LEFT.append(conn)
    db = await pf.create_database(conn.get_admin(), "leak")
    path = await pf.create_log_table(conn, db, "t", buckets=1, replication_factor=1)
    await pf.write_rows(conn, path, 10)  # delivered
    writer = (await conn.get_table(path)).new_append().create_writer()
    LEFT.append(writer)
    LocalCluster(Path(os.environ["LEAK_RUN_DIR"])).stop(graceful=False)
    for i in range(3):  # records that can no longer be delivered
        writer.append({"id": 100 + i, "name": "lost", "amount": None, "ts": None})
        try:
            await asyncio.wait_for(writer.flush(), 1)
        except TimeoutError:
            pass
    try:
        await asyncio.wait_for(conn.conn.close(), 1)  # given up on: the drain loops on
    except TimeoutError:
        pass
'''

INI = """[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = session
markers =
    live: a real cluster
    slow: slow
    client_side(reason): 1.0 only
"""


def test_the_guard_fails_the_module_that_leaves_a_writer_spinning(
    fluss_server: FlussServer, tmp_path: Path
) -> None:
    cluster = LocalCluster(tmp_path / "cluster")
    described: dict[str, Any] = cluster.start(
        **fluss_server.start_kwargs(), tablet_servers=1, ready_timeout=180
    ).to_dict()
    module = tmp_path / "child" / "tests" / "live" / "test_leaky_writer.py"
    module.parent.mkdir(parents=True)
    module.write_text(LEAKY_MODULE)
    ini = tmp_path / "child" / "pytest.ini"
    ini.write_text(INI)
    try:
        proc = subprocess.Popen(
            # the project's conftest as a plugin (the child's tests/ is not a package)
            [sys.executable, "-m", "pytest", "-c", str(ini), "-p", "tests.conftest",
             "-p", "no:cacheprovider", "-p", "no:randomly", "--timeout", "120",
             "--generations", fluss_server.generation, "-q", str(module)],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "LEAK_BOOTSTRAP": str(described["bootstrap_servers"]),
                 "LEAK_RUN_DIR": str(cluster.run_dir)},
        )  # fmt: skip
        try:
            out, _ = proc.communicate(timeout=180)
        except subprocess.TimeoutExpired:  # a spinning thread may hold up the exit itself
            proc.kill()
            out, _ = proc.communicate(timeout=30)
    finally:
        cluster.stop(graceful=False)
    assert "1 passed, 1 error" in out, out[-3000:]
    assert "ERROR at teardown of test_leaves_a_connection_draining" in out, out[-3000:]
    assert "a pyfluss writer/connection left alive after its cluster was gone" in out
    # after the module, or (a loaded machine starves the spinning thread below the share
    # one sample pair needs) at the session's end: either way the leaky module's teardown
    assert "tokio" in out and ("after module" in out or "at the end of the session" in out)
    assert proc.returncode == 1, out[-3000:]

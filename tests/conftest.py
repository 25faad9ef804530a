"""Shared pytest set-up: hypothesis profiles and the session-scoped real Fluss cluster."""

from __future__ import annotations

import compileall
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
from hypothesis import HealthCheck, settings

from konsole.localcluster import DEFAULT_VERSION, LocalCluster
from konsole.localcluster.distribution import DistributionError, from_home
from tests._testutil import shards, stale_clusters, thread_guard

# "ci" runs in `make test`; "fuzz" is `make fuzz` (much longer).
settings.register_profile("ci", max_examples=200, deadline=None)
settings.register_profile(
    "fuzz", max_examples=20_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TABLET_SERVERS = 3
#: The tablet servers' write limit in every cluster the tests start (unless a test sets its
#: own): the servers' data dirs are on the machine's disk, and at the 1.0 line's default
#: (85%) a disk 75% full (seen on this 2-core machine and in CI) makes every server warn
#: of its room, and every "OK" a test expects a WARNING. The capacity tests set their own.
TEST_WRITE_LIMIT = 0.99
os.environ.setdefault(
    "KONSOLE_CLUSTER_SET", f"ts:server.data-disk.write-limit-ratio={TEST_WRITE_LIMIT}"
)
#: JVM options for every server the tests start (read by each JVM from the environment the
#: runner passes on): the client compiler only and the serial collector. A test cluster
#: lives seconds to minutes, where the optimising compiler and G1's threads cost more CPU
#: than they give back: measured on the 2-core machine, a cluster of 3 tablet servers was
#: ready in 5-7 s instead of 7-12 s with ~40% less CPU (docs/performance.md). The servers'
#: behaviour the tests look at (protocol, metrics, faults) is the same. A JAVA_TOOL_OPTIONS
#: of the caller's own wins.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("JAVA_TOOL_OPTIONS", TEST_JVM_OPTIONS)
GENERATIONS = ("0.9", "1.0")
FLUSS_HOME_VAR = "KONSOLE_TEST_FLUSS_HOME"
PART_VAR = "KONSOLE_TEST_PART"
SHARD_VAR = "KONSOLE_TEST_SHARD"
#: One part per generation: each part's pytest starts only its own generation's clusters.
PARTS = tuple(f"fluss{g}" for g in GENERATIONS)
#: Where the tests tied to no generation (system tests, own clusters of the default
#: version) run: with 0.9, as the 1.0 part also has the client_side tests.
UNBOUND_PART = "fluss0.9"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fluss-version",
        default=os.environ.get("KONSOLE_TEST_FLUSS_VERSION", DEFAULT_VERSION),
        help="published Fluss version (fetched with Maven) for the 0.9 generation's live tests",
    )
    parser.addoption(
        "--fluss-home",
        default=os.environ.get(FLUSS_HOME_VAR),
        help=f"unpacked Fluss 1.0-line distribution for the 1.0 live tests (or {FLUSS_HOME_VAR})",
    )
    parser.addoption(
        "--generations",
        default=os.environ.get("KONSOLE_TEST_GENERATIONS", ",".join(GENERATIONS)),
        help="server generations the live tests run on, comma-separated (default: all)",
    )
    parser.addoption(
        "--part",
        default=os.environ.get(PART_VAR, ""),
        choices=("", *PARTS),
        help="run one of the suite's parts that run side by side (`make test`): the tests"
        " of that server generation; the tests tied to no generation go with"
        f" {UNBOUND_PART}'s (or {PART_VAR}); the others are deselected, not skipped",
    )
    parser.addoption(
        "--shard",
        default=os.environ.get(SHARD_VAR, "1/1"),
        help="K/N: run the K-th of N shards of the selected tests (whole modules, split by"
        f" their measured time: tests/_testutil/shards.py; or {SHARD_VAR})",
    )


@dataclass(frozen=True)
class FlussServer:
    """The server build one generation of the live tests runs on."""

    generation: str
    version: str
    fluss_home: str | None = None

    def start_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``LocalCluster.start`` selecting this build."""
        if self.fluss_home is not None:
            return {"fluss_home": self.fluss_home}
        return {"version": self.version}

    def cli_args(self) -> list[str]:
        """The same selection as ``konsole cluster start`` options."""
        if self.fluss_home is not None:
            return ["--fluss-home", self.fluss_home]
        return ["--version", self.version]

    @property
    def is_1_0(self) -> bool:
        return self.generation != "0.9"


#: Why a server generation's live tests did not run, for the summary at the end of the run.
NOT_RUN = pytest.StashKey[dict[str, str]]()
#: Servers of clusters an earlier, killed pytest left running, stopped at this start.
SWEPT = pytest.StashKey[list[stale_clusters.Server]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Marks the servers this session starts as its own, and stops those of clusters that
    an earlier pytest started and left running when it was killed (never another running
    session's: see tests/_testutil/stale_clusters.py). Compiles our packages first."""
    installed_bytecode()
    stale_clusters.claim()
    session.config.stash[SWEPT] = stale_clusters.sweep()


#: Our packages, as a wheel installs them.
PACKAGES = ("fluss_proto", "store", "konsole")


def installed_bytecode() -> None:
    """Our packages compiled to ``__pycache__``, as an installed konsole has them (as
    bench/_bytecode.py does for the benchmarks). Under PYTHONDONTWRITEBYTECODE (this
    machine's environment) every konsole process a test starts compiled every module it
    imported again: 0.2 s of CPU per `check`, 1.5-2 s of wall time at load 15, spent out of
    a `check -t 6` before it could look. Up-to-date files are skipped (each xdist worker
    calls this too); py_compile writes even under PYTHONDONTWRITEBYTECODE, atomically."""
    root = Path(__file__).resolve().parents[1]
    for name in PACKAGES:
        compileall.compile_dir(str(root / name), quiet=1)


def _not_run(config: pytest.Config, generation: str, reason: str) -> NoReturn:
    """Skips the tests of a generation the run was told to leave out, and keeps the reason
    for :func:`pytest_terminal_summary`. Under CI every generation must run."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI runs every generation)", pytrace=False)
    config.stash.setdefault(NOT_RUN, {})[generation] = reason
    pytest.skip(reason)


def resolve_server(config: pytest.Config, generation: str) -> FlussServer:
    """The build ``generation`` runs on. A 1.0 distribution that is asked for but cannot be
    used fails every test that needs it: only an explicitly empty ``KONSOLE_TEST_FLUSS_HOME``
    (or ``--fluss-home=``) or ``--generations`` leaves the generation out, with a skip."""
    wanted = [g.strip() for g in str(config.getoption("--generations")).split(",")]
    if generation not in wanted:
        _not_run(config, generation, f"generation {generation} not selected (--generations)")
    if generation == "0.9":
        return FlussServer("0.9", str(config.getoption("--fluss-version")))
    home = config.getoption("--fluss-home")
    if home is None:
        pytest.fail(
            f"no Fluss 1.0-line distribution: set {FLUSS_HOME_VAR} (or --fluss-home) to one,"
            " or to empty to leave the 1.0 generation out",
            pytrace=False,
        )
    if not home:
        _not_run(config, generation, f"{FLUSS_HOME_VAR} is empty: the 1.0 generation is left out")
    try:
        dist = from_home(str(home))
    except DistributionError as exc:
        pytest.fail(f"{FLUSS_HOME_VAR}={home} is not a usable distribution: {exc}", pytrace=False)
    return FlussServer(dist.generation, dist.version, dist.home)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Says, at the very end, which stale servers the session's start stopped, and which
    server generations the live tests left out, and why."""
    swept = config.stash.get(SWEPT, [])
    if swept:
        dirs = sorted({s.run_dir for s in swept})
        terminalreporter.write_line(
            f"stopped {len(swept)} server(s) left running by a killed pytest: {', '.join(dirs)}",
            yellow=True,
        )
    not_run = config.stash.get(NOT_RUN, {})
    if not_run:
        terminalreporter.section("server generations left out", sep="-", yellow=True)
    for generation, reason in sorted(not_run.items()):
        terminalreporter.write_line(
            f"live tests on Fluss {generation} NOT RUN: {reason}", yellow=True
        )


@pytest.fixture(scope="session", params=GENERATIONS, ids=lambda g: f"fluss{g}")
def fluss_server(request: pytest.FixtureRequest) -> FlussServer:
    """Every live test runs once per server generation (0.9.1-incubating and the 1.0 line)."""
    return resolve_server(request.config, str(request.param))


@pytest.fixture(scope="session")
def fluss_1_0(request: pytest.FixtureRequest) -> FlussServer:
    """The 1.0-line build, for tests of what only 1.0 servers have (not parametrised)."""
    return resolve_server(request.config, "1.0")


@pytest.fixture(scope="session")
def fluss_version(fluss_server: FlussServer) -> str:
    return fluss_server.version


@pytest.fixture(scope="session")
def fluss_cluster(
    fluss_server: FlussServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """A real cluster (1 coordinator, 3 tablet servers) on loopback per generation."""
    run_dir = tmp_path_factory.mktemp(f"fluss-cluster-{fluss_server.generation}")
    cluster = LocalCluster(run_dir)
    # The JSON shape (what `konsole cluster start --json` prints), plus the runner itself.
    desc: dict[str, Any] = cluster.start(
        **fluss_server.start_kwargs(), tablet_servers=TABLET_SERVERS, ready_timeout=180
    ).to_dict()
    desc["cluster"] = cluster
    try:
        yield desc
    finally:
        cluster.stop(graceful=False)
        leftover = our_java_processes(Path(desc["run_dir"]))
        assert not leftover, f"Java processes of the test cluster remain: {leftover}"


@pytest.fixture(scope="session")
def bootstrap(fluss_cluster: dict[str, Any]) -> str:
    return str(fluss_cluster["bootstrap_servers"])


def our_java_processes(run_dir: Path) -> list[int]:
    """Pids whose command line carries the run dir marker the runner puts on each server."""
    marker = f"-Dkonsole.run.dir={run_dir}".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in args and state != "Z":
            pids.append(int(proc.name))
    return pids


#: The generation a ``client_side`` live test runs on (the current server line).
CLIENT_SIDE_GENERATION = "1.0"


#: A run at this niceness or lower is the one tests/run_suite.sh starves on purpose (the
#: tests without a server, nice 19 beside the live shards: load 15-30 on 2 cores). A test
#: there can wait seconds for each slice, so its own tight bound (``pytest.mark.timeout(10)``
#: on a test of fake servers, meant to fail a hang fast) is raised to STARVED_TEST_BOUND_S.
STARVED_NICENESS = 10
STARVED_TEST_BOUND_S = 120.0


def _unhurried(item: pytest.Item) -> None:
    mark = item.get_closest_marker("timeout")
    if mark is not None and mark.args and float(mark.args[0]) < STARVED_TEST_BOUND_S:
        item.add_marker(pytest.mark.timeout(STARVED_TEST_BOUND_S), append=False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/live talks to a real cluster, everything under tests/system
    drives the machine's own programs and mounts: mark them so `-m "not live"` (or
    `-m "not live and not system"`) works.

    A test marked ``client_side(reason)`` proves what konsole does on its own side (a fault
    of the history file, the console keeping two clusters apart): its other generations
    are deselected, not skipped, so the suite does not start their clusters for it.

    With ``--part``, the tests of the other part are deselected too (not skipped: under CI
    a skipped generation fails): the other pytest of ``make test`` runs them. With
    ``--shard K/N``, so are the modules of the other shards (tests/_testutil/shards.py).

    In a starved run (STARVED_NICENESS) tight per-test bounds are raised."""
    part = str(config.getoption("--part") or "")
    starved = os.nice(0) >= STARVED_NICENESS
    try:
        shard, n_shards = shards.parse(str(config.getoption("--shard")))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        if starved:
            _unhurried(item)
        if "/tests/live/" in str(item.path):
            item.add_marker(pytest.mark.live)
        elif "/tests/system/" in str(item.path):
            item.add_marker(pytest.mark.system)
        marker = item.get_closest_marker("client_side")
        if marker is not None and not (marker.args and str(marker.args[0]).strip()):
            raise pytest.UsageError(f"{item.nodeid}: client_side needs its reason")
        server = getattr(getattr(item, "callspec", None), "params", {}).get("fluss_server")
        other_generation = server is not None and server != CLIENT_SIDE_GENERATION
        other_part = bool(part) and part_of(item) != part
        (dropped if (marker is not None and other_generation) or other_part else kept).append(item)
    if n_shards > 1:
        split = shards.split((i.path.name for i in kept), part, n_shards)
        dropped += [i for i in kept if split[i.path.name] != shard]
        kept = [i for i in kept if split[i.path.name] == shard]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def part_of(item: pytest.Item) -> str:
    """The part (see ``--part``) an item runs in: its server generation's, when it has one
    (the ``fluss_server`` parametrisation, or the 1.0-only ``fluss_1_0`` fixture)."""
    server = getattr(getattr(item, "callspec", None), "params", {}).get("fluss_server")
    if server is None and "fluss_1_0" in getattr(item, "fixturenames", ()):
        server = "1.0"
    return UNBOUND_PART if server is None else f"fluss{server}"


#: Threads the guard has failed a module for already (not blamed on the next module too),
#: and the module that ran last (named when the session's end finds a spinning thread).
SPUN = pytest.StashKey[set[int]]()
LAST_MODULE = pytest.StashKey[str]()


def _fail_if_spinning(config: pytest.Config, when: str) -> None:
    """Fails (an error in the teardown) when a client thread left by the tests spins."""
    reported = config.stash.setdefault(SPUN, set())
    found = [s for s in thread_guard.check() if s.tid not in reported]
    if found:
        reported.update(s.tid for s in found)
        pytest.fail(
            f"{'; '.join(map(str, found))} {when}: a pyfluss writer/connection left alive"
            " after its cluster was gone (its sender loops with no pause)",
            pytrace=False,
        )


@pytest.fixture(scope="module", autouse=True)
def no_spinning_client_after_live_module(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each live module (its own clusters stopped): no pyfluss thread spins."""
    module = request.node.nodeid
    request.config.stash[LAST_MODULE] = module
    yield
    if "/tests/live/" in str(request.node.path):
        _fail_if_spinning(request.config, f"after module {module}")


@pytest.fixture(scope="session", autouse=True)
def no_spinning_client_at_session_end(request: pytest.FixtureRequest) -> Iterator[None]:
    """At the very end (the session clusters stopped too): no pyfluss thread spins."""
    yield
    last = request.config.stash.get(LAST_MODULE, "none")
    _fail_if_spinning(request.config, f"at the end of the session (last module: {last})")

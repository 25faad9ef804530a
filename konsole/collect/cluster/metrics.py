"""Scrape each Fluss server's Prometheus endpoint and keep what an operator acts on.

The Fluss Prometheus reporter names a metric ``fluss_<scope>_<name>`` (scope: the metric
group path, e.g. ``tabletserver``, ``tabletserver_table``, ``coordinator_status_JVM_memory_heap``)
and exports counters, gauges and meters alike as gauges (a meter as its per-second rate).
Labels: ``cluster_id``, ``host``, ``server_id`` (+ ``rack`` on tablet servers; ``database``,
``table``, ``tablet_type`` on table metrics). At 0.9.1 label values are character-filtered
too (``host="127_0_0_1"``, a table ``my-t`` shows as ``my_t``); at 1.0 they are raw.

Names read here (``MetricNames`` in fluss-common; [1.0] = the 1.0 line only):

- tablet server: ``underReplicated``, ``underMinIsr``, ``atMinIsr``, ``isrShrinksPerSecond``,
  ``isrExpandsPerSecond``, ``failedIsrUpdatesPerSecond``, ``leaderCount``, ``replicaCount``,
  ``bytesInPerSecond``, ``bytesOutPerSecond``, ``messagesInPerSecond``,
  ``replicationBytesIn/OutPerSecond``, ``request_requestsPerSecond`` /
  ``request_errorsPerSecond`` (label ``request``), ``request_totalTimeMs`` (a summary: its
  ``quantile="0.99"`` line is kept), ``request_requestQueueSize``, ``diskUsageRatio`` [1.0],
  ``diskWriteLocked`` [1.0], ``physicalStorage_localSize`` and
  ``physicalStorage_remoteLogSize`` (bytes held on local disk and in remote storage; the
  per-bucket ``remoteLog_*`` families with segment counts and sizes are dropped with the
  other per-bucket lines);
- table (on the tablet server that leads or follows it): ``kvBackpressureMaxPressure`` [1.0],
  ``kvBackpressureRejectionsTotal`` [1.0, a running count] (other per-table families, e.g.
  ``failedPutKvRequestsPerSecond``, are skipped: one line per table each, and parsing is
  the costly part of a scrape);
- coordinator: ``activeCoordinatorCount`` (1 on the active one; a standby does not export
  it), ``aliveCoordinatorCount`` [1.0], ``activeTabletServerCount``, ``offlineBucketCount``,
  ``tableCount``, ``bucketCount``, ``partitionCount`` (refreshed only while the coordinator
  processes events: they can be stale on an idle cluster);
- both: ``status_JVM_memory_heap_used`` / ``_max``, ``status_JVM_CPU_load`` (the process's
  share of the host's CPUs, 0..1; negative while the JVM has no figure yet).

A scrape never raises: an endpoint that is down, slow, answers an HTTP error, HTML or
garbage becomes a :class:`MetricsError` for that server. Scrapes run concurrently, each
bounded by its timeout, through one ``httpx.AsyncClient`` that ignores proxy settings
(``trust_env=False``): the endpoints are the servers' own, usually on loopback.
"""

from __future__ import annotations

import asyncio
import functools
import math
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from konsole.collect.profiles import MetricsEndpoint
from konsole.model.metrics import MetricsError, MetricsResult, Role, ServerMetrics, TableMetrics

if TYPE_CHECKING:
    import httpx

# httpx and prometheus_client are imported where used: the snapshot types below are
# needed by every screen of the console, the HTTP client only by the poller (start-up),
# prometheus_client only for a sample line beyond the reporter's plain form.

__all__ = [
    "MetricsError",
    "MetricsResult",
    "Scraper",
    "ServerMetrics",
    "TableMetrics",
    "parse_metrics",
]

_TS: Final = "fluss_tabletserver_"
_CS: Final = "fluss_coordinator_"
_TABLE: Final = "fluss_tabletserver_table_"
_HEAP: Final = "status_JVM_memory_heap_"
#: The JVM process's CPU load, 0..1 of all the host's cores (``getProcessCpuLoad``).
_CPU_LOAD: Final = "status_JVM_CPU_load"
#: A request type's time on the server (a summary): the quantile kept of it.
_LATENCY: Final = "request_totalTimeMs"
_LATENCY_QUANTILE: Final = "0.99"
#: Largest body read from one endpoint (a 1,600-bucket server sends ~1 MB).
MAX_BODY_BYTES: Final = 32 << 20

#: Every family read below; other lines are dropped before parsing (the text parser is
#: pure Python, and a big server exports thousands of per-bucket lines we do not need).
_SERVER_NAMES: Final = (
    "underReplicated",
    "underMinIsr",
    "atMinIsr",
    "isrShrinksPerSecond",
    "isrExpandsPerSecond",
    "failedIsrUpdatesPerSecond",
    "leaderCount",
    "replicaCount",
    "bytesInPerSecond",
    "bytesOutPerSecond",
    "messagesInPerSecond",
    "replicationBytesInPerSecond",
    "replicationBytesOutPerSecond",
    "request_requestsPerSecond",
    "request_errorsPerSecond",
    "request_totalTimeMs",
    "request_requestQueueSize",
    "diskUsageRatio",
    "diskWriteLocked",
    "physicalStorage_localSize",
    "physicalStorage_remoteLogSize",
    _HEAP + "used",
    _HEAP + "max",
    _CPU_LOAD,
)
#: Per-table families come once per table (and tablet type): only those events and health
#: read are kept, since parsing costs about 10 µs a line.
_TABLE_NAMES: Final = (
    "kvBackpressureMaxPressure",
    "kvBackpressureRejectionsTotal",
)
_COORDINATOR_NAMES: Final = (
    "activeCoordinatorCount",
    "aliveCoordinatorCount",
    "activeTabletServerCount",
    "offlineBucketCount",
    "tableCount",
    "bucketCount",
    "partitionCount",
    _HEAP + "used",
    _HEAP + "max",
    _CPU_LOAD,
)
_WANTED: Final = frozenset(
    [_TS + n for n in _SERVER_NAMES]
    + [_TABLE + n for n in _TABLE_NAMES]
    + [_CS + n for n in _COORDINATOR_NAMES]
)


# =========================================================================== parsing


#: Labels read nowhere; dropping them before the parser halves its work (labels are
#: where it spends its time).
_UNREAD_LABEL: Final = re.compile(r'\b(?:cluster_id|rack|tablet_type)="(?:[^"\\]|\\.)*",?')
#: The family headers a group starts with (the Prometheus reporter writes both per family).
_HEADERS: Final = ("# HELP ", "# TYPE ")
#: Names a family's own sample names could begin a wanted name with (``<family>_...``):
#: such a family's group is filtered line by line instead of dropped whole.
_WANTED_STEMS: Final = frozenset(
    w[:i] for w in _WANTED for i, c in enumerate(w) if c == "_" and i > 0
)
#: The cluster's id, read once from the raw text (the label is dropped before parsing).
_CLUSTER_ID: Final = re.compile(r'\bcluster_id="((?:[^"\\]|\\.)*)"')


def _filtered(text: str) -> str:
    """Only the sample lines of families read here, without the labels read nowhere.

    The text is cut into groups at its comment lines (a one-character ``find``, not a split
    of every line), and a group whose header names a family not read here is dropped whole:
    a big tablet server's megabyte of per-bucket lines costs a few hundred ``find`` calls.
    This relies on the exposition format's rule that a family's lines come as one group
    after its header; a group that does not end with its own family's line (samples without
    a header after it) is filtered line by line, as is any group with a wanted or unusual
    header. Comment lines are dropped too: the parser names a family after its samples when
    no ``# TYPE`` precedes them, which for the names read here (gauges, none ending in
    ``_total``) is the name ``# TYPE`` gives, and it spends time on every line.
    """
    keep: list[str] = []
    start, size = 0, len(text)
    while start < size:
        end = _next_comment_line(text, start + 1)
        if not _droppable(text, start, end):
            keep.extend(_wanted_lines(text[start:end]))
        start = end
    return _UNREAD_LABEL.sub("", "\n".join(keep)) + "\n"


def _next_comment_line(text: str, start: int) -> int:
    """Where the first line starting with ``#`` at or after ``start`` begins (the text's
    length if none). A one-character ``find`` is a ``memchr``: ``"\\n#"`` scans ~30x slower."""
    while (hash_at := text.find("#", start)) > 0 and text[hash_at - 1] != "\n":
        start = hash_at + 1
    return len(text) if hash_at < 0 else hash_at


def _droppable(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is one whole group of a family not read here."""
    if not text.startswith(_HEADERS, start):
        return False
    line_end = text.find("\n", start, end)
    header = text[start : end if line_end < 0 else line_end].split(" ", 3)
    name = header[2] if len(header) > 2 else ""
    if not name or name in _WANTED or name in _WANTED_STEMS:
        return False
    last = text.rfind("\n", start, end - 1) + 1  # where the group's last line starts
    after = last + len(name)  # the last line is the family's own: `name{`, `name `, `name_`
    return last <= start or (text.startswith(name, last) and text[after : after + 1] in "{ _\t")


def _wanted_lines(text: str) -> list[str]:
    """The lines of ``text`` that belong to families read here (the per-line filter)."""
    keep: list[str] = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        brace = line.find("{")
        name = line[:brace] if brace >= 0 else line.partition(" ")[0]
        if name in _WANTED:
            keep.append(line)
    return keep


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _count(value: float | None) -> int | None:
    return None if value is None or math.isinf(value) else round(value)


@dataclass
class _Samples:
    """What one endpoint's text said, grouped as :func:`parse_metrics` needs it."""

    role: Role | None = None
    #: short family name -> value (server and coordinator families)
    single: dict[str, float | None] = field(default_factory=dict)
    #: ``server_id`` / ``host`` label -> the first value seen
    labels: dict[str, str] = field(default_factory=dict)
    #: request type -> [requests/s, errors/s]
    requests: dict[str, list[float | None]] = field(
        default_factory=lambda: defaultdict(lambda: [None, None])
    )
    #: request type -> its 99th percentile total time (ms)
    latency: dict[str, float | None] = field(default_factory=dict)
    #: (database, table) -> short family name -> value summed over tablet types
    tables: dict[tuple[str, str], dict[str, float]] = field(
        default_factory=lambda: defaultdict(dict)
    )

    def add(self, name: str, value: float | None, labels: Mapping[str, str]) -> None:
        if name.startswith(_TABLE):
            self.role = "tablet"
            key = (labels.get("database", ""), labels.get("table", ""))
            short = name[len(_TABLE) :]
            if value is not None:
                # Should a family come per tablet type (log, kv, cdc_log): add them up.
                self.tables[key][short] = self.tables[key].get(short, 0.0) + value
            return
        if name.startswith(_TS):
            self.role = "tablet"
            short = name[len(_TS) :]
        else:
            self.role = self.role or "coordinator"
            short = name[len(_CS) :]
        for label in ("server_id", "host"):
            if label in labels:
                self.labels.setdefault(label, labels[label])
        if short == _LATENCY:
            if labels.get("quantile") == _LATENCY_QUANTILE:
                self.latency[labels.get("request", "?")] = value
        elif short.startswith("request_") and "request" in labels:
            slot = self.requests[labels["request"]]
            slot[0 if short.endswith("requestsPerSecond") else 1] = value
        else:
            self.single[short] = value


def _samples(text: str) -> _Samples:
    """The Fluss samples of a Prometheus text; ValueError when it is not one."""
    if text.lstrip()[:1] == "<":
        raise ValueError("the endpoint answered HTML, not Prometheus text")
    if "fluss_" not in text:
        raise ValueError("no Fluss metrics in the answer")
    found = _Samples()
    for line in _filtered(text).split("\n"):
        if line:
            name, labels, value = _sample(line)
            found.add(name, _number(value), labels)
    if found.role is None:
        raise ValueError("no Fluss server metrics in the answer")
    return found


#: A sample line as the Fluss reporter writes it: a name, labels (``name="value"`` with
#: commas, maybe one trailing), one space, a plain number. Only such a line is read by
#: :func:`_sample` itself; prometheus_client's parser costs ~15 µs a line (it walks the
#: labels a character at a time), this ~2 µs.
_PLAIN_SAMPLE: Final = re.compile(
    r"([a-zA-Z_:][a-zA-Z0-9_:]*)"
    r'(?:\{((?:(?!__)[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",)*'
    r'(?:(?!__)[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")?)\})?'
    r" ([+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|NaN|[+-]?Inf)"
)
_PLAIN_LABEL: Final = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
_INTEGER: Final = re.compile(r"[+-]?[0-9]+")
#: The escapes of a label value (the exposition format's three; others stay as written).
_ESCAPE: Final = re.compile(r'\\[\\n"]')
_ESCAPED: Final = {"\\\\": "\\", "\\n": "\n", '\\"': '"'}


def _sample(line: str) -> tuple[str, Mapping[str, str], float]:
    """One sample line: name, labels, value (ValueError when it is not a sample).

    The lines kept are a few dozen of known gauge families, in one fixed form: that form is
    read here, exactly as prometheus_client reads it (``tests/unit/test_metrics_parse.py``
    compares both on every captured scrape); any other line goes to prometheus_client's
    parser, which accepts what the format allows beyond it or raises.
    """
    plain = _PLAIN_SAMPLE.fullmatch(line)
    if plain is None:
        return _library_sample(line)
    name, body, token = plain.groups()
    pairs = _PLAIN_LABEL.findall(body) if body else []
    labels = {
        k: _ESCAPE.sub(lambda m: _ESCAPED[m.group(0)], v) if "\\" in v else v for k, v in pairs
    }
    if len(labels) != len(pairs):  # a label given twice: the library's error
        return _library_sample(line)
    # As the library: an integer is read as one (``-0`` is 0, not -0.0), the rest as floats.
    return name, labels, int(token) if _INTEGER.fullmatch(token) else float(token)


def _library_sample(line: str) -> tuple[str, Mapping[str, str], float]:
    """A line beyond :data:`_PLAIN_SAMPLE`, read by prometheus_client's parser."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(line):
        for sample in family.samples:
            return family.name, sample.labels, sample.value
    raise ValueError(f"not a sample line: {line[:80]!r}")


def parse_metrics(
    text: str,
    *,
    url: str,
    scraped_at: float,
    duration_s: float = 0.0,
    endpoint: MetricsEndpoint | None = None,
) -> ServerMetrics:
    """Keep the operator's metrics from one endpoint's Prometheus text.

    Raises ``ValueError`` when the text is not Prometheus exposition of a Fluss server.
    """
    found = _samples(text)
    role, single, labels_seen = found.role, found.single, found.labels
    requests, tables = found.requests, found.tables

    def get(name: str) -> float | None:
        return single.get(name)

    locked = get("diskWriteLocked")
    server_id = labels_seen.get("server_id")
    if server_id is None and endpoint is not None:
        server_id = endpoint.server_id
    return ServerMetrics(
        url=url,
        role=role,
        server_id=server_id,
        host=labels_seen.get("host"),
        scraped_at=scraped_at,
        duration_s=duration_s,
        disk_usage_ratio=get("diskUsageRatio"),
        disk_write_locked=None if locked is None else locked >= 0.5,
        under_replicated=_count(get("underReplicated")),
        under_min_isr=_count(get("underMinIsr")),
        at_min_isr=_count(get("atMinIsr")),
        isr_shrinks_rate=get("isrShrinksPerSecond"),
        isr_expands_rate=get("isrExpandsPerSecond"),
        failed_isr_updates_rate=get("failedIsrUpdatesPerSecond"),
        leader_count=_count(get("leaderCount")),
        replica_count=_count(get("replicaCount")),
        bytes_in_rate=get("bytesInPerSecond"),
        bytes_out_rate=get("bytesOutPerSecond"),
        messages_in_rate=get("messagesInPerSecond"),
        replication_in_rate=get("replicationBytesInPerSecond"),
        replication_out_rate=get("replicationBytesOutPerSecond"),
        local_size=_count(get("physicalStorage_localSize")),
        remote_log_size=_count(get("physicalStorage_remoteLogSize")),
        requests=MappingProxyType({k: (v[0], v[1]) for k, v in sorted(requests.items())}),
        request_latency_ms=MappingProxyType(dict(sorted(found.latency.items()))),
        request_queue_size=_count(get("request_requestQueueSize")),
        tables=tuple(
            TableMetrics(
                database=db,
                table=table,
                kv_pressure=values.get("kvBackpressureMaxPressure"),
                kv_rejections=values.get("kvBackpressureRejectionsTotal"),
            )
            for (db, table), values in sorted(tables.items())
        ),
        active_coordinator_count=_count(get("activeCoordinatorCount")),
        alive_coordinator_count=_count(get("aliveCoordinatorCount")),
        active_tablet_server_count=_count(get("activeTabletServerCount")),
        offline_bucket_count=_count(get("offlineBucketCount")),
        table_count=_count(get("tableCount")),
        bucket_count=_count(get("bucketCount")),
        partition_count=_count(get("partitionCount")),
        heap_used=get(_HEAP + "used"),
        heap_max=get(_HEAP + "max"),
        cpu_load=_share(get(_CPU_LOAD)),
        cluster_id=_cluster_id(text),
    )


def _share(value: float | None) -> float | None:
    """A 0..1 share; the JVM's negative "not known yet" (and NaN) is unknown, not 0."""
    if value is None or math.isnan(value) or value < 0:
        return None
    return min(value, 1.0)


def _cluster_id(text: str) -> str | None:
    found = _CLUSTER_ID.search(text)
    return found.group(1) if found else None


# =========================================================================== scraping


def _without_httpx_cli() -> None:
    """Call before ``import httpx``: it imports its optional command line ``httpx._main``
    (and with it rich and pygments, ~70 ms) whenever they are installed, as they are for the
    console. A ``None`` in ``sys.modules`` makes that one import fail, which httpx answers
    with a stub ``httpx.main``; nothing of konsole runs httpx's command line."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


class Scraper:
    """Scrapes endpoints concurrently with one reusable HTTP client; never raises."""

    def __init__(
        self,
        *,
        timeout: float = 2.0,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.timeout = timeout
        self._clock = clock
        self._transport = transport

    @functools.cached_property
    def _client(self) -> httpx.AsyncClient:
        """The HTTP client, made (and httpx imported) at the first scrape of an endpoint:
        a cluster named by ``--bootstrap`` alone has none, and its check never pays for it."""
        _without_httpx_cli()
        import httpx

        # trust_env=False: no proxy, no netrc; the endpoints are the servers' own.
        return httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout),
            trust_env=False,
            follow_redirects=False,
            transport=self._transport,
            headers={"Accept": "text/plain"},
        )

    async def aclose(self) -> None:
        if "_client" in self.__dict__:  # made: close it
            await self._client.aclose()

    async def scrape(self, endpoints: Iterable[MetricsEndpoint]) -> tuple[MetricsResult, ...]:
        """One result per endpoint, in order; each bounded by ``timeout``."""
        endpoints = list(endpoints)
        if not endpoints:
            return ()
        return tuple(await asyncio.gather(*(self._one(e) for e in endpoints)))

    async def _one(self, endpoint: MetricsEndpoint) -> MetricsResult:
        client = self._client
        import httpx

        started, t0 = self._clock(), time.monotonic()

        def fail(kind: str, message: str) -> MetricsError:
            return MetricsError(
                endpoint.url, endpoint.role, endpoint.server_id, kind, message, started
            )

        try:
            async with asyncio.timeout(self.timeout):
                response = await client.get(endpoint.url)
                body = response.content[:MAX_BODY_BYTES]
        except TimeoutError:
            return fail("timeout", f"no answer within {self.timeout:g}s")
        except httpx.TimeoutException:
            return fail("timeout", f"no answer within {self.timeout:g}s")
        except httpx.HTTPError as exc:
            return fail("unreachable", f"{type(exc).__name__}: {exc}"[:200])
        except (OSError, ValueError) as exc:  # a bad URL, a refused socket below httpx
            return fail("unreachable", f"{type(exc).__name__}: {exc}"[:200])
        if response.status_code != 200:
            return fail("http_status", f"HTTP {response.status_code}")
        if "html" in response.headers.get("content-type", ""):
            return fail("not_metrics", "the endpoint answered HTML, not Prometheus text")
        try:
            return parse_metrics(
                body.decode("utf-8", "replace"),
                url=endpoint.url,
                scraped_at=started,
                duration_s=time.monotonic() - t0,
                endpoint=endpoint,
            )
        except ValueError as exc:
            return fail("not_metrics", str(exc)[:200])


def split_results(
    results: Sequence[MetricsResult],
) -> tuple[tuple[ServerMetrics, ...], tuple[MetricsError, ...]]:
    ok = tuple(r for r in results if isinstance(r, ServerMetrics))
    bad = tuple(r for r in results if isinstance(r, MetricsError))
    return ok, bad

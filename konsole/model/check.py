"""The headless health check: one snapshot in, a monitoring-plugin answer out.

Pure: nothing here touches the network, the clock or the process. ``konsole check``
(:mod:`konsole.cli.check`) polls once, has the poll judged (:class:`konsole.model.poll.Judge`,
as every face's) and hands the judged poll to :func:`assess`, which adds the operator's
``-w``/``-c`` thresholds and returns a :class:`CheckResult`;
:func:`konsole.render.check.render` turns that into the Nagios/Icinga text, a versioned JSON
object or plain text.

Status: the worst of the health status (GREEN -> OK, YELLOW -> WARNING, RED -> CRITICAL,
UNKNOWN -> WARNING) and every threshold that alerts. Health UNKNOWN means the check
looked but part of the cluster did not answer (a silent metrics endpoint, items it could
not read): the plugin guidelines keep exit 3 for the check's own failures (bad arguments,
bad configuration, rejected credentials, internal errors), so that is WARNING, never OK.
An unreachable cluster or a timeout is CRITICAL. Metrics that were never configured are not
silence: the metric-based rules are listed as not configured (an OK finding, perfdata
``U``) and do not raise the status. See docs/health-check.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final

from fluss_proto.model import HealthStatus
from konsole.errors import ExitCode
from konsole.model import subjects
from konsole.model.headroom import capacity_measures
from konsole.model.health import METRIC_RULES, Health, HealthRules
from konsole.model.metrics import MetricsOrigin
from konsole.model.placement import Placement, Replication
from konsole.model.poll import JudgedPoll
from konsole.model.roles import unanswered
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole, bucket_name, table_names
from konsole.model.storage import StorageTrouble, untiered

__all__ = [
    "MEASURES",
    "CheckError",
    "CheckFinding",
    "CheckResult",
    "ExitCode",
    "Measure",
    "MetricsSeen",
    "Range",
    "Thresholds",
    "assess",
    "failure",
    "measure",
    "parse_range",
    "parse_thresholds",
    "plain_number",
    "rules_with_thresholds",
    "timeout_result",
]

#: Most buckets named per detail line (the rest are counted).
MAX_NAMED_BUCKETS: Final = 10
#: Most findings quoted in the first line's summary.
MAX_SUMMARY_FINDINGS: Final = 3


# konsole's one exit-code scheme; the names OK/WARNING/CRITICAL/UNKNOWN are the status words
# of the first line.
# OK < WARNING < CRITICAL; UNKNOWN is never produced by a rule, only by failure().
_RANK: Final = {ExitCode.OK: 0, ExitCode.WARNING: 1, ExitCode.CRITICAL: 2, ExitCode.UNKNOWN: 3}

_FROM_HEALTH: Final = {
    HealthStatus.GREEN: ExitCode.OK,
    HealthStatus.UNKNOWN: ExitCode.WARNING,
    HealthStatus.YELLOW: ExitCode.WARNING,
    HealthStatus.RED: ExitCode.CRITICAL,
}


#: A threshold finding's status in the findings' words: -w YELLOW, -c RED.
_TO_HEALTH: Final = {ExitCode.WARNING: HealthStatus.YELLOW, ExitCode.CRITICAL: HealthStatus.RED}


def _worst(codes: Iterable[ExitCode]) -> ExitCode:
    return max(codes, key=_RANK.__getitem__, default=ExitCode.OK)


class CheckError(ValueError):
    """Bad arguments (a malformed range, an unknown rule): the check exits UNKNOWN (3)."""


# =========================================================================== ranges

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
_RANGE_RE: Final = re.compile(rf"^(@)?(?:(~|{_NUMBER})?:)?({_NUMBER})?$")


@dataclass(frozen=True, slots=True)
class Range:
    """A monitoring-plugin threshold range: alert when the value is outside
    ``start..end`` (both ends included), or inside it with a leading ``@``."""

    start: float
    end: float
    inside: bool
    #: The text as given, shown in perfdata.
    text: str

    def alerts(self, value: float) -> bool:
        within = self.start <= value <= self.end
        return within if self.inside else not within


def parse_range(text: str) -> Range:
    """``10`` (0..10), ``10:`` (10..inf), ``~:10`` (-inf..10), ``10:20``, ``@10:20``."""
    spec = text.strip()
    match = _RANGE_RE.match(spec)
    if not spec or match is None or spec in ("@", ":", "@:"):
        raise CheckError(f"malformed range {text!r} (use 10, 10:, ~:10, 10:20 or @10:20)")
    inside, start_text, end_text = match.groups()
    has_colon = ":" in spec
    if not has_colon:
        start, end = 0.0, float(end_text)
    else:
        if start_text is None:
            start = 0.0
        elif start_text == "~":
            start = -math.inf
        else:
            start = float(start_text)
        end = math.inf if end_text is None else float(end_text)
    if start > end:
        raise CheckError(f"malformed range {text!r}: start {start:g} is above end {end:g}")
    return Range(start, end, inside is not None, spec)


# =========================================================================== measures


@dataclass(frozen=True, slots=True)
class MeasureSpec:
    label: str
    uom: str
    minimum: float | None
    maximum: float | None
    help: str


#: What the check measures: the perfdata labels, which are also the -w/-c rule names.
MEASURES: Final[tuple[MeasureSpec, ...]] = (
    MeasureSpec("tablet_servers", "", 0, None, "tablet servers alive (in metadata)"),
    MeasureSpec("coordinators_active", "", 0, None, "coordinators answering as active"),
    MeasureSpec("coordinators_standby", "", 0, None, "coordinators answering as standby"),
    MeasureSpec("offline_buckets", "", 0, None, "buckets without an active leader"),
    MeasureSpec(
        "under_replicated_buckets",
        "",
        0,
        None,
        "buckets with a replica out of sync (servers' metrics) or on a server that is gone",
    ),
    MeasureSpec("disk_usage_max", "", 0, 1, "highest data disk usage ratio of a tablet server"),
    MeasureSpec("write_locked_servers", "", 0, None, "tablet servers with the disk write lock"),
    MeasureSpec(
        "kv_rejections",
        "c",
        0,
        None,
        "write requests rejected by KV backpressure since server start",
    ),
    MeasureSpec("stalled_tables", "", 0, None, "tables whose ingest stopped (needs history)"),
    MeasureSpec("poll_latency", "s", 0, None, "seconds the poll took"),
    MeasureSpec(
        "tiering_stalled_tables",
        "",
        0,
        None,
        "tables whose remote log end stood still while the log grew (needs successive "
        "storage polls)",
    ),
    MeasureSpec(
        "kv_snapshot_stale_tables", "", 0, None, "PK tables taking writes without a new KV snapshot"
    ),
    MeasureSpec("untiered_offsets", "", 0, None, "offsets only on local disk (1.0 line)"),
    MeasureSpec(
        "disk_headroom_min",
        "",
        None,
        1,
        "least room below a tablet server's own write limit, server or data dir (ratio)",
    ),
    MeasureSpec(
        "write_lock_eta", "s", 0, None, "seconds until the soonest confident forecast lock"
    ),
    MeasureSpec("kv_pressure_max", "", 0, 1, "worst KV backpressure of a table on a server"),
)
_SPECS: Final = MappingProxyType({m.label: m for m in MEASURES})
#: Measures whose -w/-c set a health rule's limit instead of adding a threshold.
_RULE_LIMITS: Final = {"disk_usage_max": ("disk_usage_warn", "disk_usage_critical")}


@dataclass(frozen=True, slots=True)
class Measure:
    label: str
    #: None: could not be measured (perfdata ``U``).
    value: float | None
    uom: str = ""
    warn: str | None = None
    crit: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    #: Why the value is unknown.
    why_unknown: str | None = None


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The operator's ``-w``/``-c`` ranges by measure label."""

    warning: Mapping[str, Range] = field(default_factory=lambda: MappingProxyType({}))
    critical: Mapping[str, Range] = field(default_factory=lambda: MappingProxyType({}))


def parse_thresholds(warning: Sequence[str] = (), critical: Sequence[str] = ()) -> Thresholds:
    """``RULE=RANGE`` items of ``-w`` and ``-c``; raises :class:`CheckError`."""

    def parse(items: Sequence[str], flag: str) -> Mapping[str, Range]:
        out: dict[str, Range] = {}
        for item in items:
            name, eq, text = item.partition("=")
            name = name.strip()
            if not eq or not name:
                raise CheckError(f"{flag} takes RULE=RANGE, got {item!r}")
            if name not in _SPECS:
                raise CheckError(f"{flag}: unknown rule {name!r} (rules: {', '.join(_SPECS)})")
            if name in out:
                raise CheckError(f"{flag}: rule {name!r} given twice")
            limit = parse_range(text)
            if name in _RULE_LIMITS and (limit.inside or limit.start > 0 or limit.end > 1):
                raise CheckError(
                    f"{flag} {name}: give an upper limit within 0..1 (N or ~:N); it sets the "
                    "health rule's limit"
                )
            out[name] = limit
        return MappingProxyType(out)

    return Thresholds(parse(warning, "-w"), parse(critical, "-c"))


def rules_with_thresholds(rules: HealthRules, thresholds: Thresholds) -> HealthRules:
    """The health rules with the limits ``-w``/``-c`` set (disk usage), so the check and
    the console apply one rule, not two."""
    changes: dict[str, float] = {}
    for label, (warn_field, crit_field) in _RULE_LIMITS.items():
        if label in thresholds.warning:
            changes[warn_field] = thresholds.warning[label].end
        if label in thresholds.critical:
            changes[crit_field] = thresholds.critical[label].end
    if not changes:
        return rules
    merged = replace(rules, **changes)  # type: ignore[arg-type]
    if merged.disk_usage_warn > merged.disk_usage_critical:
        raise CheckError("disk_usage_max: the warning limit is above the critical one")
    return merged


def plain_number(value: float) -> str:
    """A C-locale decimal without exponent (perfdata parsers do not all read 1e-05)."""
    if math.isinf(value):
        return ""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


def measure(
    judged: JudgedPoll,
    *,
    thresholds: Thresholds | None = None,
    rules: HealthRules | None = None,
    stalled_tables: int | None = None,
) -> dict[str, Measure]:
    """Every measure of :data:`MEASURES` from the judged poll (None values where unknown):
    the figures of its snapshot and the facts derived as it was judged."""
    thresholds = thresholds or Thresholds()
    rules = rules or HealthRules()
    snapshot, own = judged.snapshot, judged.own_facts
    values: dict[str, tuple[float | None, str | None]] = {
        m.label: (None, "no snapshot") for m in MEASURES
    }
    values.update(_values(snapshot, None if own is None else own.replication))
    values.update(_storage_values(snapshot, None if own is None else own.storage))
    values.update(capacity_measures(snapshot, () if own is None else own.capacity, rules))
    values["stalled_tables"] = (
        (float(stalled_tables), None)
        if stalled_tables is not None
        else (None, "needs successive polls (konsole watch, or the history when recorded)")
    )
    out: dict[str, Measure] = {}
    for spec in MEASURES:
        value, why = values[spec.label]
        warn = thresholds.warning.get(spec.label)
        crit = thresholds.critical.get(spec.label)
        warn_text = warn.text if warn else None
        crit_text = crit.text if crit else None
        if spec.label == "disk_usage_max":  # the health rule's limits, as ranges
            warn_text = plain_number(rules.disk_usage_warn)
            crit_text = plain_number(rules.disk_usage_critical)
        out[spec.label] = Measure(
            spec.label,
            value,
            spec.uom,
            warn_text,
            crit_text,
            spec.minimum,
            spec.maximum,
            why if value is None else None,
        )
    return out


def _storage_values(
    s: ClusterSnapshot, found: StorageTrouble | None
) -> dict[str, tuple[float | None, str | None]]:
    """The storage measures; ``found``: the poll's storage judgement (None: it failed)."""
    labels = ("tiering_stalled_tables", "kv_snapshot_stale_tables", "untiered_offsets")
    part = s.storage
    if part is None:
        return {label: (None, "no storage poll in this look") for label in labels}
    if found is None:
        return {label: (None, f"the poll failed: {s.error}") for label in labels}
    left = [untiered(b) for b in part.buckets]
    known = part.capabilities.remote_manifests and all(v is not None for v in left)
    # A stall is a remote end that stood still: it needs a sighting from before this look.
    seen_before = any(
        b.remote_since is not None and b.remote_since < part.taken_at for b in part.buckets
    )
    stalled: tuple[float | None, str | None] = (float(len(found.stalled)), None)
    if not part.capabilities.remote_manifests:
        stalled = (None, "the servers do not advertise ListRemoteLogManifests (1.0 line)")
    elif not seen_before and not found.stalled:
        stalled = (None, "needs successive storage polls (a recorded history, konsole watch)")
    return {
        "tiering_stalled_tables": stalled,
        "kv_snapshot_stale_tables": (float(len(found.stale_kv)), None),
        "untiered_offsets": (float(sum(v or 0 for v in left)), None)
        if known
        else (None, "remote or local log end offsets unknown"),
    }


def _values(
    s: ClusterSnapshot, rep: Replication | None
) -> dict[str, tuple[float | None, str | None]]:
    """The snapshot's measures; ``rep``: its replication figures (None: the poll failed)."""
    out: dict[str, tuple[float | None, str | None]] = {}
    out["poll_latency"] = (s.latency_s, None)
    probes = s.coordinators
    if probes:
        active = sum(1 for c in probes if c.role is CoordinatorRole.ACTIVE)
        out["coordinators_active"] = (float(active), None)
        out["coordinators_standby"] = (float(len(s.standby_coordinators)), None)
    elif s.view is not None:
        out["coordinators_active"] = (1.0 if s.view.coordinator else 0.0, None)
        out["coordinators_standby"] = (None, "no coordinator address was probed")
    else:
        out["coordinators_active"] = (None, "no coordinator was probed")
        out["coordinators_standby"] = (None, "no coordinator was probed")
    tablets = [m for m in s.metrics if m.role == "tablet"]
    why = _no_metric(tablets, s.metrics_origin)
    disks = [m.disk_usage_ratio for m in tablets if m.disk_usage_ratio is not None]
    out["disk_usage_max"] = (max(disks), None) if disks else (None, why)
    locks = [m.disk_write_locked for m in tablets if m.disk_write_locked is not None]
    out["write_locked_servers"] = (
        (float(sum(1 for locked in locks if locked)), None) if locks else (None, why)
    )
    counts = [m.kv_rejections for m in tablets if m.kv_rejections is not None]
    if counts:
        out["kv_rejections"] = (sum(counts), None)
    elif disks:  # a 1.0-line server exports it for KV tables only: none here
        out["kv_rejections"] = (0.0, None)
    else:
        out["kv_rejections"] = (None, why)
    if rep is None:
        why = f"the poll failed: {s.error}"
        for label in ("tablet_servers", "offline_buckets", "under_replicated_buckets"):
            out[label] = (None, why)
        return out
    # The cluster-wide figures (placement and what servers report), as the overview shows them.
    out["tablet_servers"] = (float(len(rep.placement.alive)), None)
    out["offline_buckets"] = (float(rep.offline_buckets), None)
    out["under_replicated_buckets"] = (float(rep.under_replicated_buckets), None)
    return out


def _no_metric(tablets: Sequence[Any], origin: MetricsOrigin) -> str:
    if not tablets and origin is MetricsOrigin.NONE:
        return "metrics not configured"
    if not tablets:
        return "no tablet server's metrics were read"
    return "no tablet server exports it (the 1.0 line does)"


# =========================================================================== results


@dataclass(frozen=True, slots=True)
class CheckFinding:
    """One finding of the check. Its status for every reader is ``health``, the word every
    face gives a finding (GREEN/YELLOW/RED/UNKNOWN, as ``watch``, ``capacity`` and the
    console); ``status`` is what it adds to the check's first line and exit code (the
    plugin's OK/WARNING/CRITICAL, docs/health-check.md)."""

    status: ExitCode
    #: The health rule's name, or "threshold" for a -w/-c range.
    rule: str
    subject: str
    reason: str
    #: The finding's status: the health rule's; a -w range YELLOW, a -c range RED.
    health: HealthStatus

    def line(self) -> str:
        return f"[{self.health.name}] {self.subject}: {self.reason}"


@dataclass(frozen=True, slots=True)
class MetricsSeen:
    """The metrics endpoints of the look: how they were chosen and which answered."""

    origin: MetricsOrigin
    #: The metric-based health rules not judged (all of them when nothing is configured).
    not_configured: tuple[str, ...] = ()
    answered: tuple[str, ...] = ()
    #: ``url: kind: message`` of each endpoint that gave nothing usable.
    failed: tuple[str, ...] = ()

    @classmethod
    def of(cls, snapshot: ClusterSnapshot) -> MetricsSeen:
        origin = snapshot.metrics_origin
        return cls(
            origin,
            METRIC_RULES if origin is MetricsOrigin.NONE else (),
            tuple(m.url for m in snapshot.metrics),
            tuple(f"{e.url}: {e.kind}: {e.message}" for e in snapshot.metrics_errors),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "origin": self.origin.value,
            "not_configured": list(self.not_configured),
            "answered": list(self.answered),
            "failed": list(self.failed),
        }

    def text(self) -> str:
        if self.not_configured:
            return f"not configured ({', '.join(self.not_configured)} not judged)"
        failed = f", {len(self.failed)} failed" if self.failed else ""
        return f"{self.origin.value}: {len(self.answered)} endpoint(s) answered{failed}"


@dataclass(frozen=True, slots=True)
class CheckResult:
    status: ExitCode
    summary: str
    findings: tuple[CheckFinding, ...] = ()
    measures: Mapping[str, Measure] = field(default_factory=lambda: MappingProxyType({}))
    #: Detail lines naming buckets (offline, replicas on servers that are gone).
    details: tuple[str, ...] = ()
    health: Health | None = None
    time: float | None = None
    poll_ok: bool | None = None
    poll_error: str | None = None
    timed_out: bool = False
    active_coordinator: str | None = None
    standby_coordinators: tuple[str, ...] = ()
    unreachable_coordinators: tuple[str, ...] = ()
    offline_buckets: tuple[str, ...] = ()
    under_replicated_buckets: tuple[str, ...] = ()
    cluster: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    #: None when nothing was polled.
    metrics: MetricsSeen | None = None

    @property
    def exit_code(self) -> int:
        return int(self.status)


def _threshold_findings(measures: Mapping[str, Measure], thresholds: Thresholds) -> list[Any]:
    out: list[CheckFinding] = []
    for label, m in measures.items():
        if label in _RULE_LIMITS or m.value is None:
            continue
        for status, ranges in (
            (ExitCode.CRITICAL, thresholds.critical),
            (ExitCode.WARNING, thresholds.warning),
        ):
            limit = ranges.get(label)
            if limit is not None and limit.alerts(m.value):
                where = "inside" if limit.inside else "outside"
                out.append(
                    CheckFinding(
                        status,
                        "threshold",
                        label,
                        f"{plain_number(m.value)}{m.uom} is {where} {limit.text} "
                        f"({'-c' if status is ExitCode.CRITICAL else '-w'})",
                        _TO_HEALTH[status],
                    )
                )
                break  # the critical range wins over the warning one
    return out


def _bucket_lines(
    s: ClusterSnapshot, placement: Placement | None
) -> tuple[list[str], list[str], list[str]]:
    view = s.view
    if view is None or placement is None:
        return [], [], []
    tables = table_names(view)
    offline = [bucket_name(view, b, tables) for b in placement.offline]
    per_server = {
        server: [bucket_name(view, b, tables) for b in buckets]
        for server, buckets in placement.replicas_offline.items()
    }
    lines = []
    if offline:
        lines.append(f"offline buckets (no active leader): {_named(offline)}")
    for server, buckets in sorted(per_server.items()):
        lines.append(
            f"under-replicated buckets (a replica on {subjects.tablet_server(server)}, not alive): "
            f"{_named(buckets)}"
        )
    under = sorted({n for buckets in per_server.values() for n in buckets})
    return lines, offline, under


def _named(names: Sequence[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED_BUCKETS])
    more = len(names) - MAX_NAMED_BUCKETS
    return f"{shown} (+{more} more)" if more > 0 else shown


def assess(
    judged: JudgedPoll,
    *,
    thresholds: Thresholds | None = None,
    rules: HealthRules | None = None,
    stalled_tables: int | None = None,
    cluster: Mapping[str, Any] | None = None,
) -> CheckResult:
    """The check's answer for one judged poll (:class:`~konsole.model.poll.JudgedPoll`:
    its health, and the placement made once as it was judged)."""
    thresholds = thresholds or Thresholds()
    snapshot, health = judged.snapshot, judged.health
    # A failed poll has no view: no replication figures (the facts are the last good one's).
    own = judged.own_facts
    measures = measure(judged, thresholds=thresholds, rules=rules, stalled_tables=stalled_tables)
    findings = [
        CheckFinding(_FROM_HEALTH[f.status], f.rule, f.subject, f.reason, f.status)
        for f in health.findings
    ]
    findings += _threshold_findings(measures, thresholds)
    findings.sort(key=lambda f: -_RANK[f.status])  # stable: rule order kept within a status
    status = _worst([_FROM_HEALTH[health.status], *(f.status for f in findings)])
    details, offline, under = _bucket_lines(snapshot, own.placement if own else None)
    if not snapshot.ok:
        details += _seen(snapshot)
    unreachable = tuple(
        c.address for c in snapshot.coordinators if c.role is CoordinatorRole.UNREACHABLE
    )
    result = CheckResult(
        status=status,
        summary="",
        findings=tuple(findings),
        measures=MappingProxyType(measures),
        details=tuple(details),
        health=health,
        time=snapshot.taken_at,
        poll_ok=snapshot.ok,
        poll_error=snapshot.error,
        active_coordinator=snapshot.active_coordinator,
        standby_coordinators=snapshot.standby_coordinators,
        unreachable_coordinators=unreachable,
        offline_buckets=tuple(offline),
        under_replicated_buckets=tuple(under),
        cluster=MappingProxyType(dict(cluster or {})),
        metrics=MetricsSeen.of(snapshot),
    )
    return replace(result, summary=_summary(result))


def _seen(s: ClusterSnapshot) -> list[str]:
    """What a failed poll still saw: the coordinator probes and the metrics endpoints."""
    lines = []
    for c in s.coordinators:
        extra = f" ({c.error})" if c.error and c.role is CoordinatorRole.UNREACHABLE else ""
        lines.append(f"seen: {subjects.coordinator(c.address)} {c.role.value}{extra}")
    for u in unanswered(s):
        at = f" at {u.address}" if u.node_id is not None else ""
        lines.append(f"seen: {u.subject}{at} unreachable ({u.error})")
    for m in s.metrics:
        lines.append(f"seen: {m.subject} metrics answered")
    for e in s.metrics_errors:
        lines.append(f"seen: {e.subject} metrics {e.kind}: {e.message}")
    return lines


def _summary(r: CheckResult) -> str:
    parts: list[str] = []
    worst = [f for f in r.findings if f.status is r.status]
    if r.status is not ExitCode.OK and worst:
        parts.extend(f"{f.subject}: {f.reason}" for f in worst[:MAX_SUMMARY_FINDINGS])
        rest = len(r.findings) - min(len(worst), MAX_SUMMARY_FINDINGS)
        if rest > 0:
            parts.append(f"+{rest} more finding{'s' if rest != 1 else ''}")
    elif r.status is ExitCode.OK:
        parts.append("healthy")
    if r.metrics is not None and r.metrics.not_configured:
        parts.append("metrics not configured")
    servers = r.measures.get("tablet_servers")
    if r.active_coordinator is not None:
        standby = len(r.standby_coordinators)
        parts.append(
            f"active coordinator {r.active_coordinator}"
            + (f", {standby} standby" if standby else "")
        )
    if servers is not None and servers.value is not None:
        parts.append(f"{plain_number(servers.value)} tablet servers")
    return "; ".join(parts)


def failure(
    status: ExitCode,
    reason: str,
    *,
    cluster: Mapping[str, Any] | None = None,
    timed_out: bool = False,
) -> CheckResult:
    """A result without a snapshot: bad arguments or configuration, rejected credentials,
    an internal error (UNKNOWN) or a hard timeout (CRITICAL). Nothing was measured, so
    there is no perfdata: one line says why."""
    return CheckResult(
        status=status,
        summary=reason,
        poll_ok=None if status is ExitCode.UNKNOWN else False,
        poll_error=reason if status is not ExitCode.UNKNOWN else None,
        timed_out=timed_out,
        cluster=MappingProxyType(dict(cluster or {})),
    )


def timeout_result(timeout: float, *, cluster: Mapping[str, Any] | None = None) -> CheckResult:
    """Nothing came back within ``--timeout``: CRITICAL, as the plugin guidelines ask."""
    return failure(
        ExitCode.CRITICAL,
        f"no answer within the {timeout:g}s timeout",
        cluster=cluster,
        timed_out=True,
    )

"""The health check's answer as text: the Nagios/Icinga status line with its perfdata and
long output, the versioned JSON object (docs/health-check.md) and plain text for a person.

Pure, like :mod:`konsole.model.check`, whose :class:`~konsole.model.check.CheckResult` it
renders; ``konsole check`` (:mod:`konsole.cli.check`) prints what :func:`render` returns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from konsole.model.check import CheckResult, Measure, plain_number
from konsole.model.timefmt import iso_text, to_ms

__all__ = [
    "FORMATS",
    "JSON_SCHEMA",
    "as_dict",
    "perfdata",
    "render",
    "render_json",
    "render_nagios",
    "render_text",
]

#: The JSON object's ``schema`` field; bumped when a field changes meaning or goes away.
#: (It names the module that first wrote it: the value stays, readers match on it.)
#: 2: ``time`` is ISO 8601 text with ``time_ms`` beside it, as in every other konsole JSON
#: (1 had float epoch seconds). 3: a finding's ``status`` is the word every face gives a
#: finding (GREEN/YELLOW/RED/UNKNOWN); its plugin word is ``check_status`` (2 had them as
#: ``health``, null for a threshold, and ``status``).
JSON_SCHEMA: Final = "konsole.model.check/3"


def perfdata(measures: Mapping[str, Measure]) -> str:
    """``'label'=value[UOM];warn;crit;min;max`` for every measure, ``U`` when unknown."""
    items = []
    for m in measures.values():
        value = "U" if m.value is None else f"{plain_number(m.value)}{m.uom}"
        fields = [
            m.warn or "",
            m.crit or "",
            "" if m.minimum is None else plain_number(m.minimum),
            "" if m.maximum is None else plain_number(m.maximum),
        ]
        tail = ";".join(fields).rstrip(";")
        items.append(f"'{m.label}'={value}" + (f";{tail}" if tail else ""))
    return " ".join(items)


def render_nagios(r: CheckResult) -> str:
    """First line ``FLUSS <STATUS>: <summary> | <perfdata>``, then one line per finding and
    per detail (the plugin's long output)."""
    first = f"FLUSS {r.status.name}: {_one_line(r.summary)}"
    data = perfdata(r.measures)
    lines = [f"{first} | {data}" if data else first]
    lines += [_one_line(f.line()) for f in r.findings]
    lines += [_one_line(d) for d in r.details]
    return "\n".join(lines)


def _one_line(text: str) -> str:
    # "|" would start the perfdata; line breaks would start long output.
    return " ".join(text.replace("|", "/").split())


def as_dict(r: CheckResult) -> dict[str, Any]:
    """The versioned JSON object (see docs/health-check.md)."""
    return {
        "schema": JSON_SCHEMA,
        "status": r.status.name,
        "exit_code": r.exit_code,
        "summary": r.summary,
        "time": None if r.time is None else iso_text(r.time),
        "time_ms": None if r.time is None else to_ms(r.time),
        "cluster": dict(r.cluster),
        "poll": {"ok": r.poll_ok, "error": r.poll_error, "timed_out": r.timed_out},
        "health": None
        if r.health is None
        else {"status": r.health.status.name, "source": r.health.source},
        "coordinators": {
            "active": r.active_coordinator,
            "standby": list(r.standby_coordinators),
            "unreachable": list(r.unreachable_coordinators),
        },
        "findings": [
            {
                "status": f.health.name,
                "check_status": f.status.name,
                "rule": f.rule,
                "subject": f.subject,
                "reason": f.reason,
            }
            for f in r.findings
        ],
        "measures": {
            m.label: {
                "value": m.value,
                "uom": m.uom,
                "warning": m.warn,
                "critical": m.crit,
                "min": m.minimum,
                "max": m.maximum,
                "unknown_because": m.why_unknown,
            }
            for m in r.measures.values()
        },
        "buckets": {
            "offline": list(r.offline_buckets),
            "under_replicated": list(r.under_replicated_buckets),
        },
        "details": list(r.details),
        "metrics": None if r.metrics is None else r.metrics.as_dict(),
    }


def render_json(r: CheckResult) -> str:
    return json.dumps(as_dict(r), sort_keys=False)


def render_text(r: CheckResult) -> str:
    """For a person at a terminal: status, coordinators, findings, then the measures."""
    lines = [f"FLUSS {r.status.name}: {r.summary}"]
    if r.health is not None:
        lines.append(f"  health:       {r.health.status.name} ({r.health.source})")
    if r.poll_ok is not None or r.timed_out:
        poll = "ok" if r.poll_ok else f"failed: {r.poll_error}"
        lines.append(f"  poll:         {poll}")
    if r.metrics is not None:
        lines.append(f"  metrics:      {r.metrics.text()}")
    if r.active_coordinator or r.standby_coordinators or r.unreachable_coordinators:
        lines.append(
            f"  coordinators: active {r.active_coordinator or 'none'}"
            + (f"; standby {', '.join(r.standby_coordinators)}" if r.standby_coordinators else "")
            + (
                f"; unreachable {', '.join(r.unreachable_coordinators)}"
                if r.unreachable_coordinators
                else ""
            )
        )
    if r.findings:
        lines.append("  findings:")
        lines += [
            f"    {f.health.name:<8} {f.rule:<20} {f.subject}: {f.reason}" for f in r.findings
        ]
    if r.details:
        lines.append("  details:")
        lines += [f"    {d}" for d in r.details]
    if r.measures:
        lines.append("  measures:")
        for m in r.measures.values():
            shown = "unknown" if m.value is None else f"{plain_number(m.value)}{m.uom}"
            why = f"  ({m.why_unknown})" if m.why_unknown else ""
            limits = "".join(
                f"  {name} {text}" for name, text in (("warn", m.warn), ("crit", m.crit)) if text
            )
            lines.append(f"    {m.label:<26} {shown}{limits}{why}")
    return "\n".join(lines)


FORMATS: Final = ("nagios", "json", "text")


def render(r: CheckResult, fmt: str) -> str:
    if fmt == "json":
        return render_json(r)
    if fmt == "text":
        return render_text(r)
    return render_nagios(r)

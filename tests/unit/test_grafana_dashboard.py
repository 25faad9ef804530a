"""deploy/grafana: every query of the dashboard names a family `konsole serve` exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

from konsole.serve.exposition.families import FAMILIES

GRAFANA = Path(__file__).resolve().parents[2] / "deploy" / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "konsole-overview.json"
#: Families the sinks keep besides the per-poll ones (exposition sink, alert deliveries).
OTHER_FAMILIES = {"konsole_poll_age_seconds", "konsole_alertmanager_up", "konsole_events_total"}
FAMILY = re.compile(r"\b(konsole_[a-z_]+)")


def _queries() -> list[str]:
    doc = json.loads(DASHBOARD.read_text())
    out = [t["expr"] for p in doc["panels"] for t in p.get("targets", [])]
    out += [v["query"] for v in doc["templating"]["list"] if v["type"] == "query"]
    return out


def test_every_query_names_only_families_serve_exports() -> None:
    exported = {f.name for f in FAMILIES} | OTHER_FAMILIES
    queries = _queries()
    assert len(queries) >= 15
    for query in queries:
        used = set(FAMILY.findall(query))
        assert used, f"a query without a konsole family: {query}"
        assert used <= exported, (query, used - exported)


def test_the_throughput_and_cpu_panels_are_there() -> None:
    used = {name for q in _queries() for name in FAMILY.findall(q)}
    assert {
        "konsole_messages_in_per_second",
        "konsole_bytes_in_per_second",
        "konsole_bytes_out_per_second",
        "konsole_server_cpu_load",
    } <= used


def test_a_name_that_serve_does_not_export_is_caught() -> None:
    exported = {f.name for f in FAMILIES} | OTHER_FAMILIES
    assert not set(FAMILY.findall("rate(konsole_bytes_in_total[5m])")) <= exported


def test_provisioning_files_are_grafana_shaped() -> None:
    sources = (GRAFANA / "provisioning/datasources/konsole.yml").read_text()
    assert "apiVersion: 1" in sources and "type: prometheus" in sources
    boards = (GRAFANA / "provisioning/dashboards/konsole.yml").read_text()
    assert "type: file" in boards and "path: /etc/grafana/dashboards/konsole" in boards
    doc = json.loads(DASHBOARD.read_text())
    assert len({p["id"] for p in doc["panels"]}) == len(doc["panels"])

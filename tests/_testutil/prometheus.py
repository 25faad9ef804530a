"""A real Prometheus (Debian's ``prometheus``) for live tests: own data dir, loopback port.

:class:`Prometheus` writes a configuration that scrapes the given targets every
``scrape_interval`` seconds (and evaluates the given rules files as often), starts the
server, waits (bounded) until it is ready, answers PromQL queries and lists its alerts
through its HTTP API, and stops it. Nothing listens beyond 127.0.0.1; every wait is
bounded in time.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from konsole.localcluster.ports import free_port
from tests._testutil.processes import terminate
from tests._testutil.system_tools import need_binary

__all__ = ["Prometheus", "running_prometheus"]


@dataclass
class Prometheus:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    scrape_interval: float
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=5.0))

    def query(self, promql: str) -> list[tuple[dict[str, str], float]]:
        """An instant query: each series' labels and value."""
        answer = self.client.get(f"{self.url}/api/v1/query", params={"query": promql})
        answer.raise_for_status()
        body: dict[str, Any] = answer.json()
        assert body["status"] == "success", body
        return [(r["metric"], float(r["value"][1])) for r in body["data"]["result"]]

    def samples(self, selector: str, seconds: int) -> dict[str, list[tuple[float, float]]]:
        """A range selector's samples over the last ``seconds``, by ``cluster`` label: each
        as (Prometheus's scrape timestamp in epoch seconds, value), oldest first."""
        body = self.client.get(
            f"{self.url}/api/v1/query", params={"query": f"{selector}[{seconds}s]"}
        ).json()
        assert body["status"] == "success", body
        return {
            r["metric"].get("cluster", ""): [(float(t), float(v)) for t, v in r["values"]]
            for r in body["data"]["result"]
        }

    def first_alert(self, alertname: str, seconds: int, **labels: str) -> float | None:
        """When (epoch seconds) the rules first held ``alertname`` (pending or firing) with
        ``labels`` over the last ``seconds``, from Prometheus's own ``ALERTS`` series."""
        matchers = ",".join(f'{k}="{v}"' for k, v in {"alertname": alertname, **labels}.items())
        body = self.client.get(
            f"{self.url}/api/v1/query", params={"query": f"ALERTS{{{matchers}}}[{seconds}s]"}
        ).json()
        assert body["status"] == "success", body
        times = [float(t) for r in body["data"]["result"] for t, _ in r["values"]]
        return min(times, default=None)

    def by(self, promql: str, label: str) -> dict[str, float]:
        """An instant query's values by one label (e.g. ``cluster``)."""
        return {labels.get(label, ""): value for labels, value in self.query(promql)}

    def alerts(self) -> list[dict[str, Any]]:
        """The alerts its rules hold now (pending or firing), each with labels and state."""
        body = self.client.get(f"{self.url}/api/v1/alerts").json()
        assert body["status"] == "success", body
        return list(body["data"]["alerts"])

    def targets_up(self) -> int:
        """Active targets whose last scrape succeeded."""
        answer = self.client.get(f"{self.url}/api/v1/targets").json()
        return sum(t["health"] == "up" for t in answer["data"]["activeTargets"])

    def wait_for(self, what: str, check: Any, timeout: float) -> Any:
        """Poll ``check()`` (bounded) until it returns something truthy; returns it."""
        deadline = time.monotonic() + timeout
        last: Any = None
        for _ in range(int(timeout / 0.25) + 1):
            last = check()
            if last:
                return last
            if time.monotonic() > deadline:
                break
            time.sleep(0.25)
        raise AssertionError(f"{what}: not within {timeout:g} s (last: {last!r}); log {self.log}")


def _config(targets: Sequence[str], interval: float, rules: Sequence[Path]) -> str:
    listed = ", ".join(f"'{t}'" for t in targets)
    files = "".join(f"  - '{r}'\n" for r in rules)
    return (
        "global:\n"
        f"  scrape_interval: {interval:g}s\n"
        f"  scrape_timeout: {interval:g}s\n"
        f"  evaluation_interval: {interval:g}s\n"
        + (f"rule_files:\n{files}" if rules else "")
        + "scrape_configs:\n"
        "  - job_name: konsole\n"
        "    honor_labels: true\n"  # as deploy/prometheus-scrape.yml
        f"    static_configs:\n      - targets: [{listed}]\n"
    )


@contextlib.contextmanager
def running_prometheus(
    workdir: Path,
    targets: Sequence[str],
    scrape_interval: float = 1.0,
    rules: Sequence[Path] = (),
) -> Iterator[Prometheus]:
    """A Prometheus scraping ``targets`` (``host:port``) until the block ends, evaluating
    the ``rules`` files at the scrape interval."""
    binary = need_binary("prometheus")
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    config.write_text(_config(targets, scrape_interval, rules))
    port = free_port()
    log = workdir / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--storage.tsdb.retention.time=1h",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    prom = Prometheus(f"http://127.0.0.1:{port}", proc, log, scrape_interval)
    try:
        prom.wait_for("prometheus ready", lambda: _ready(prom), timeout=30)
        yield prom
    finally:
        prom.client.close()
        terminate(proc)


def _ready(prom: Prometheus) -> bool:
    if prom.proc.poll() is not None:
        raise AssertionError(f"prometheus exited {prom.proc.returncode}; log {prom.log}")
    try:
        return prom.client.get(f"{prom.url}/-/ready").status_code == 200
    except httpx.HTTPError:
        return False

"""The examples in deploy/ that a tool of the machine can check: Prometheus's own check of
the scrape configuration (promtool, from Debian's ``prometheus``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests._testutil.system_tools import need_binary

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_the_scrape_config_passes_promtool() -> None:
    promtool = need_binary("promtool")
    done = subprocess.run(
        [promtool, "check", "config", str(DEPLOY / "prometheus-scrape.yml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout + done.stderr


def test_the_examples_serve_what_the_docs_say() -> None:
    """The port, the health path and the annotations agree across the examples."""
    unit = (DEPLOY / "konsole-serve.service").read_text()
    k8s = (DEPLOY / "kubernetes.yaml").read_text()
    assert "konsole serve --listen 127.0.0.1:9464" in unit
    assert '"serve", "--listen", "0.0.0.0:9464"' in k8s
    assert 'prometheus.io/port: "9464"' in k8s and "path: /healthz" in k8s

"""The living demo's parts without a cluster: the producer's varying rate and the scripted
incident's steps (played on a fake cluster, at once)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from konsole.localcluster.incident import WRITE_LOCK_SETTINGS, DemoIncident, incident_steps
from konsole.localcluster.producer import DemoProducer


def test_the_producer_rate_varies_within_bounds() -> None:
    producer = DemoProducer("127.0.0.1:1", rate=20.0, period_s=120.0)
    rows = [producer.rows_at(t) for t in range(0, 120, 5)]
    assert min(rows) >= 6 and max(rows) <= 34
    assert max(rows) - min(rows) >= 20  # it moves: sparklines and rows/s are not flat


class FakeCluster:
    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail = fail

    def stop_server(self, role: str, sid: int, timeout: float = 60.0) -> None:
        self.calls.append(("stop", role, sid))

    def start_server(
        self, role: str, sid: int, ready_timeout: float = 90.0, settings: Any = ()
    ) -> None:
        if self.fail == role:
            raise RuntimeError("did not start")
        self.calls.append(("start", role, sid, tuple(settings)))

    def kill(self, role: str, sid: int) -> None:
        self.calls.append(("kill", role, sid))

    def active_coordinator(self) -> int:
        return 1


def play(steps: list[Any], cluster: FakeCluster) -> tuple[DemoIncident, list[str]]:
    notes: list[str] = []
    incident = DemoIncident(
        cluster,  # type: ignore[arg-type]
        [replace(s, at_s=0) for s in steps],  # at once: the order is what is tested
        note=notes.append,
        after_s=0,
    )
    incident.run()
    return incident, notes


def test_the_0_9_incident_stops_and_starts_a_tablet_server() -> None:
    cluster = FakeCluster()
    incident, notes = play(incident_steps(2, one_zero=False), cluster)
    assert cluster.calls == [("stop", "tablet-server", 2), ("start", "tablet-server", 2, ())]
    assert notes[0] == "demo incident: begins in 0 s" and notes[-1] == "demo incident: over"
    assert "demo incident: stopping tablet-server 2" in notes
    assert incident.failed == []


def test_the_1_0_incident_adds_a_write_lock_and_a_failover() -> None:
    cluster = FakeCluster()
    play(incident_steps(2, one_zero=True), cluster)
    assert cluster.calls == [
        ("stop", "tablet-server", 2),
        ("start", "tablet-server", 2, WRITE_LOCK_SETTINGS),
        ("kill", "coordinator", 1),
        ("start", "coordinator", 1, ()),
        ("stop", "tablet-server", 2),
        ("start", "tablet-server", 2, ()),
    ]


def test_a_failing_step_is_said_and_the_script_goes_on() -> None:
    cluster = FakeCluster(fail="coordinator")
    incident, notes = play(incident_steps(2, one_zero=True), cluster)
    assert incident.failed == ["starting the killed coordinator again (a standby now)"]
    assert any(n.endswith("failed: did not start") for n in notes)
    assert notes[-1] == "demo incident: over" and len(incident.done) == 4


def test_stop_ends_the_script_between_steps() -> None:
    cluster = FakeCluster()
    incident = DemoIncident(
        cluster,  # type: ignore[arg-type]
        incident_steps(2, one_zero=False),
        note=lambda _: None,
        after_s=30,
    )
    incident.start()
    incident.stop(timeout=5)
    assert cluster.calls == [] and incident.done == []


def test_the_parts_say_at_the_demo_exit_what_they_did() -> None:
    producer = DemoProducer("127.0.0.1:1")
    assert producer.summary() == "producer: 0 rows written, 0 writes failed"
    producer.written, producer.failures, producer.last_error = 120, 2, "FlussError: down"
    assert producer.summary() == (
        "producer: 120 rows written, 2 writes failed (last: FlussError: down)"
    )
    incident, _ = play(incident_steps(2, one_zero=True), FakeCluster(fail="coordinator"))
    assert incident.summary() == (
        "incident: 4 of 5 steps done; failed: starting the killed coordinator again (a standby now)"
    )
    fine, _ = play(incident_steps(2, one_zero=False), FakeCluster())
    assert fine.summary() == "incident: 2 of 2 steps done"


def test_the_incident_delay_option_is_hidden_and_bounded() -> None:
    from click.testing import CliRunner

    from konsole.cli.cluster import demo

    runner = CliRunner()
    assert "--incident-after" not in runner.invoke(demo, ["--help"]).output
    # Refused while parsing, before any cluster is started.
    bad = runner.invoke(demo, ["--incident", "--incident-after", "-1"])
    assert bad.exit_code == 2 and "--incident-after" in bad.output


def test_a_failed_write_is_described_even_without_a_message() -> None:
    from konsole.localcluster.producer import describe_failure

    assert describe_failure(TimeoutError()) == "TimeoutError: no answer in time"
    assert describe_failure(RuntimeError("down")) == "RuntimeError: down"
    assert describe_failure(RuntimeError()) == "RuntimeError"


class FakeChild:
    """What the producer's child process said on its stdout."""

    def __init__(self, *lines: str) -> None:
        self.stdout = iter(lines)


def test_the_producer_counts_what_its_child_says() -> None:
    producer = DemoProducer("127.0.0.1:1", ("demo.clickstream",))
    child = FakeChild(
        '{"table": "demo.clickstream", "rows": 20}\n',
        "not json\n",
        '{"table": "demo.other", "rows": 5}\n',
        '{"table": "demo.clickstream", "rows": 7}\n',
    )
    assert producer._follow(child) is False  # type: ignore[arg-type]
    assert (producer.written, producer.at, producer.failures) == (27, {"demo.clickstream": 27}, 0)
    failed = FakeChild('{"failed": "TimeoutError: no answer in time"}\n')
    assert producer._follow(failed) is True  # type: ignore[arg-type]
    assert producer.summary() == (
        "producer: 27 rows written, 1 writes failed (last: TimeoutError: no answer in time)"
    )

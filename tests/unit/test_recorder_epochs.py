"""The recorder gives every poll its cluster's identity; another cluster starts an epoch."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from konsole.cli.main import main
from konsole.collect.history.follow import newest
from konsole.model.identity import ClusterIdentity
from konsole.model.poll import Judge, JudgedPoll
from konsole.ui.state import ConsoleState, HistoryMode, HistoryStatus
from konsole.ui.widgets.status_bar import status_text
from store import open_reader
from tests._testutil.builders import T0, snap, table, view
from tests._testutil.judging import JudgingRecorder


def recorder(path: Path, run_id: str | None, said: list[str]) -> JudgingRecorder:
    r = JudgingRecorder(
        path, say=said.append, clock=lambda: T0, run_id=run_id, retention_every_s=1e12
    )
    r.open()
    return r


def test_a_new_local_run_starts_an_epoch_and_its_events_start_afresh(tmp_path: Path) -> None:
    path, said = tmp_path / "h.sqlite", list[str]()
    first = recorder(path, "run-a", said)
    first.record(snap(view((0, 1, 2), [table("db.a", 1, [10])]), seq=1, t=T0))
    first.record(snap(view((0, 1, 2), [table("db.a", 1, [20])]), seq=2, t=T0 + 10))
    first.record(snap(None, seq=3, t=T0 + 20, failed="refused"))  # the cluster stopped
    assert first.other_cluster_until is None
    first.close()
    # The same servers, ports and table id: only the run id tells the new cluster apart.
    second = recorder(path, "run-b", said)
    second.record(snap(view((0, 1), [table("db.a", 1, [1])]), seq=1, t=T0 + 60))
    second.record(snap(view((0, 1), [table("db.a", 1, [3])]), seq=2, t=T0 + 70))
    assert second.other_cluster_until == T0 + 60
    second.close()
    assert said == ["a new epoch of this history: another local cluster run (run-a -> run-b)"]
    with open_reader(path) as reader:
        epochs = reader.epochs.all()
        assert [(e.from_ms, e.first_poll) for e in epochs] == [
            (round(T0 * 1000), 1),
            (
                round((T0 + 60) * 1000),
                4,
            ),
        ]
        assert [ClusterIdentity.from_json(e.identity).run_id for e in epochs] == ["run-a", "run-b"]
        # Server 2 was the first cluster's: the second's first poll says no "server left".
        assert [e.subject for e in reader.events(within_epoch=True)] == []
        assert [p.value for p in reader.offset_totals(1)] == [1.0, 3.0]
    code_out = CliRunner().invoke(main, ["history", "info", "--history", str(path)])
    assert code_out.exit_code == 0, code_out.output
    assert "epochs:    2" in code_out.output and "local run run-b" in code_out.output
    doc = json.loads(
        CliRunner()
        .invoke(main, ["history", "info", "--history", str(path), "--format", "json"])
        .output
    )
    assert [e["identity"].get("run_id") for e in doc["epochs"]] == ["run-a", "run-b"]


def test_the_same_cluster_after_a_restart_of_the_recorder_stays_in_its_epoch(
    tmp_path: Path,
) -> None:
    path, said = tmp_path / "h.sqlite", list[str]()
    for i in range(2):
        r = recorder(path, None, said)
        # A server added on the second run: still the same cluster.
        r.record(snap(view((0, 1, 2, 3)[: 3 + i], [table("db.a", 1, [i])]), seq=1, t=T0 + i))
        r.close()
    with open_reader(path) as reader:
        (epoch,) = reader.epochs.all()
        assert len(ClusterIdentity.from_json(epoch.identity).servers) == 5
    assert said == []


def test_events_are_not_derived_across_two_clusters_in_one_process(tmp_path: Path) -> None:
    path, said = tmp_path / "h.sqlite", list[str]()
    r = recorder(path, None, said)
    r.record(snap(view((0, 1, 2), [table("db.a", 1, [10])]), seq=1, t=T0))
    # Another cluster answers on other ports (another table created at another time).
    other = view((5,), [table("db.b", 2, [0])], coordinator=False)
    r.record(snap(other, seq=2, t=T0 + 10))
    r.close()
    with open_reader(path) as reader:
        assert len(reader.epochs.all()) == 2
        kinds = {e.kind for e in reader.events(within_epoch=True)}
        assert "server_left" not in kinds and "table_dropped" not in kinds


def test_a_follower_judges_another_clusters_polls_afresh(tmp_path: Path) -> None:
    """A follower's judge starts afresh at a new epoch, as the writer's does: the other
    cluster's last good poll gives no rates and is no ``previous`` of the health rules."""
    path, said = tmp_path / "h.sqlite", list[str]()
    judge, seen_ms = Judge(), 0

    def look() -> JudgedPoll:
        nonlocal seen_ms
        with open_reader(path) as reader:
            step = newest(reader, seen_ms, round((T0 + 3600) * 1000))
        assert step is not None
        snapshot, events, seen_ms, epoch = step
        return judge.followed(snapshot, events, epoch=epoch)

    first = recorder(path, "run-a", said)
    first.record(snap(view((0, 1, 2), [table("db.a", 1, [10])]), seq=1, t=T0))
    first.record(snap(view((0, 1, 2), [table("db.a", 1, [20])]), seq=2, t=T0 + 10))
    first.close()
    assert look().last_ok is not None
    second = recorder(path, "run-b", said)
    second.record(snap(view((0, 1), [table("db.a", 1, [1])]), seq=1, t=T0 + 60))
    second.close()
    judged = look()
    assert judged.last_ok is not None and judged.last_ok.taken_at == T0 + 60
    assert judged.previous_ok is None  # run-a's poll is another cluster's
    second = recorder(path, "run-b", said)
    second.record(snap(view((0, 1), [table("db.a", 1, [3])]), seq=2, t=T0 + 70))
    second.close()
    judged = look()
    assert judged.previous_ok is not None and judged.previous_ok.taken_at == T0 + 60


def test_an_upgrade_onto_new_ports_is_said_and_keeps_the_epoch(tmp_path: Path) -> None:
    path, said = tmp_path / "h.sqlite", list[str]()
    r = recorder(path, None, said)
    r.record(snap(view((0, 1), [table("db.a", 1, [10])]), seq=1, t=T0))
    # The same table (id and creation time) served by servers on other ports.
    same = view((0, 1), [table("db.a", 1, [12])])
    assert same.coordinator is not None
    moved = replace(
        same,
        coordinator=replace(same.coordinator, port=7000),
        tablet_servers=tuple(replace(s, port=7001 + i) for i, s in enumerate(same.tablet_servers)),
    )
    r.record(snap(moved, seq=2, t=T0 + 10))
    assert r.other_cluster_until is None
    r.close()
    assert len(said) == 1 and "the same cluster" in said[0] and "servers changed" in said[0]
    with open_reader(path) as reader:
        assert len(reader.epochs.all()) == 1
        assert [p.value for p in reader.offset_totals(1)] == [10.0, 12.0]


def test_a_history_without_identities_is_not_called_another_cluster(tmp_path: Path) -> None:
    path, said = tmp_path / "h.sqlite", list[str]()
    first = recorder(path, None, said)
    first.record(snap(view((0,), [table("db.a", 1, [1])]), seq=1, t=T0))
    first.close()
    # As the migration of a file from before epochs leaves it (``with`` on a sqlite3
    # connection commits but does not close it).
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE epochs SET identity = '{}'")
    second = recorder(path, None, said)
    second.record(snap(view((0,), [table("db.a", 1, [2])]), seq=2, t=T0 + 10))
    assert second.other_cluster_until == T0 + 10
    assert not second.other_cluster_proven
    second.close()
    status = HistoryStatus(HistoryMode.RECORDING, path, None, T0 + 10, other_proven=False)
    text = status_text(ConsoleState(profile="p", now=T0 + 20, history=status)).plain
    assert "history of an unidentified cluster until" in text
    assert "another cluster" not in text


def test_tables_named_within_an_epoch_leaves_the_other_cluster_out(tmp_path: Path) -> None:
    path, said = tmp_path / "h.sqlite", list[str]()
    for run, t, name in (("run-a", T0, "db.a"), ("run-b", T0 + 60, "db.a")):
        r = recorder(path, run, said)
        r.record(snap(view((0,), [table(name, 1, [5])]), seq=1, t=t))
        r.close()
    with open_reader(path) as reader:
        both = reader.tables_named("db", "a")
        (mine,) = reader.tables_named("db", "a", within_epoch=True)
        (theirs,) = reader.tables_named("db", "a", until=round((T0 + 1) * 1000), within_epoch=True)
    assert len(both) == 1 and both[0].from_ms == round(T0 * 1000)  # one id, two clusters
    assert mine.from_ms == round((T0 + 60) * 1000) and mine.to_ms is None
    assert theirs.from_ms == round(T0 * 1000) and theirs.to_ms == round((T0 + 60) * 1000)

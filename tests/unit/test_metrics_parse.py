"""The metrics parse that skips per-bucket families whole reads exactly what the line-by-line
filter and prometheus_client's parser read (the parse before it), on every captured scrape,
on a big synthetic one and on the corners of the text format."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from konsole.collect.cluster import metrics
from konsole.collect.cluster.metrics import ServerMetrics, parse_metrics

FIXTURES = Path(__file__).parent.parent / "fixtures" / "metrics"
SCRAPES = sorted(p.name for p in FIXTURES.glob("*.txt"))
BUCKET = "fluss_tabletserver_table_bucket_"


# --------------------------------------------------------------------------- the parse before


def _old_filtered(text: str) -> str:
    """The filter before: every line split and looked at."""
    keep: list[str] = []
    for line in text.splitlines():
        if line.startswith(BUCKET):
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) > 2 and parts[2] in metrics._WANTED:
                keep.append(line)
            continue
        brace = line.find("{")
        name = line[:brace] if brace >= 0 else line.partition(" ")[0]
        if name in metrics._WANTED:
            keep.append(line)
    return metrics._UNREAD_LABEL.sub("", "\n".join(keep)) + "\n"


def _old_samples(text: str) -> metrics._Samples:
    if text.lstrip()[:1] == "<":
        raise ValueError("the endpoint answered HTML, not Prometheus text")
    if "fluss_" not in text:
        raise ValueError("no Fluss metrics in the answer")
    from prometheus_client.parser import text_string_to_metric_families

    found = metrics._Samples()
    for family in text_string_to_metric_families(_old_filtered(text)):
        for sample in family.samples:
            found.add(family.name, metrics._number(sample.value), sample.labels)
    if found.role is None:
        raise ValueError("no Fluss server metrics in the answer")
    return found


def outcome(text: str, samples: Callable[[str], metrics._Samples] | None = None) -> object:
    """parse_metrics' answer (with ``samples`` as its reader), or the fact that it refused."""
    new = metrics._samples
    try:
        if samples is not None:
            metrics._samples = samples  # type: ignore[assignment]
        return parse_metrics(text, url="u", scraped_at=1.0)
    except ValueError:
        return "ValueError"
    finally:
        metrics._samples = new  # type: ignore[assignment]


def assert_same(text: str) -> ServerMetrics | None:
    before, after = outcome(text, _old_samples), outcome(text)
    assert after == before
    return after if isinstance(after, ServerMetrics) else None


# --------------------------------------------------------------------------- scrapes


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def big(base: str, families: int = 5, lines: int = 1_600) -> str:
    """``base`` with ``families`` per-bucket families of ``lines`` samples each appended
    (about 1 MB at the defaults: a tablet server of a 1,600-bucket cluster)."""
    out = [base.rstrip("\n")]
    for f in range(families):
        name = f"{BUCKET}log_f{f}"
        out += [
            f"# HELP {name} f{f} (scope: tabletserver_table_bucket_log)",
            f"# TYPE {name} gauge",
        ]
        out += [
            f'{name}{{bucket="{b % 16}",database="db",cluster_id="fluss",rack="",'
            f'host="127.0.0.1",server_id="2",table="t{b // 16}",}} {b * 3.0}'
            for b in range(lines)
        ]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("trailing_comma", [True, False])
@pytest.mark.parametrize("name", SCRAPES)
def test_every_captured_scrape_parses_as_before(name: str, trailing_comma: bool) -> None:
    text = fixture(name)
    parsed = assert_same(text if trailing_comma else text.replace(",}", "}"))
    assert parsed is not None and parsed.role in ("tablet", "coordinator")


@pytest.mark.parametrize("name", SCRAPES)
def test_a_big_scrape_parses_as_before(name: str) -> None:
    text = big(fixture(name))
    assert len(text) > 900_000
    assert assert_same(text) == outcome(fixture(name))  # the bucket lines add nothing read


def test_fixtures_cover_both_generations_and_roles() -> None:
    assert {"tablet-server-0.9.1.txt", "tablet-server-1.0.txt", "coordinator-1.0.txt"} <= set(
        SCRAPES
    )


# --------------------------------------------------------------------------- corners

GROUP = f'# HELP {BUCKET}x h\n# TYPE {BUCKET}x gauge\n{BUCKET}x{{bucket="0"}} 1.0\n'
TS = "fluss_tabletserver_"
CORNERS = {
    "headerless family after a bucket group": GROUP + f'{TS}leaderCount{{server_id="3"}} 5.0\n',
    "escaped label values": (
        f"{TS}table_kvBackpressureMaxPressure"
        r'{database="d\"b",table="t\nx\\y\tz",} 0.5' + f'\n{TS}leaderCount{{server_id="1"}} 2\n'
    ),
    "numbers": "".join(
        f'{TS}{n}{{server_id="1"}} {v}\n'
        for n, v in [
            ("leaderCount", "-0"),
            ("replicaCount", "1e3"),
            ("underReplicated", "+Inf"),
            ("underMinIsr", "-Inf"),
            ("atMinIsr", "NaN"),
            ("bytesInPerSecond", "1.5E-3"),
            ("bytesOutPerSecond", "007"),
            ("messagesInPerSecond", "+3"),
        ]
    ),
    "timestamp, tab, no space, trailing blank": (
        f"{TS}replicaCount 4 1700000000000\n{TS}leaderCount\t3\n"
        f'{TS}underReplicated{{server_id="1"}}0.0\n{TS}atMinIsr 2.0   \n'
    ),
    "unusual spellings of numbers": f"{TS}leaderCount nan\n{TS}replicaCount Infinity\n",
    "blank lines and CRLF": (
        f"\r\n{GROUP}\r\n# TYPE {TS}leaderCount gauge\r\n{TS}leaderCount 4\r\n\n"
    ),
    "a hash inside a label value": f'{TS}request_requestsPerSecond{{request="a#b"}} 1.0\n' + GROUP,
    "a family named like the start of a wanted one": (
        f'# TYPE {TS}request gauge\n{TS}request_requestsPerSecond{{request="produceLog"}} 2.0\n'
    ),
    "a family whose name another family's line extends": (
        f"# TYPE {BUCKET}x gauge\n{BUCKET}xy 1.0\n{TS}leaderCount 1\n"
    ),
    "no final newline": f"{GROUP}{TS}leaderCount 4",
    "types other than gauge": (
        f"# TYPE {TS}leaderCount counter\n{TS}leaderCount 4\n"
        f"# TYPE {TS}replicaCount summary\n{TS}replicaCount 5\n"
        f"# TYPE {TS}atMinIsr histogram\n{TS}atMinIsr 6\n"
    ),
    "a comment that is not a header": f"# hello {TS}leaderCount\n{TS}leaderCount 4\n{GROUP}",
    "labels with spaces": f'{TS}leaderCount{{ server_id = "1" , host="h" }} 4\n',
    "empty labels": f"{TS}leaderCount{{}} 4\n{TS}replicaCount{{,}} 5\n",
    "a label given twice": f'{TS}leaderCount{{server_id="1",server_id="2"}} 4\n',
    "a reserved label name": f'{TS}leaderCount{{__x="1"}} 4\n',
    "a label without quotes": f"{TS}leaderCount{{server_id=1}} 4\n",
    "an underscore in a value": f"{TS}leaderCount 1_000\n",
    "garbage": f"{TS}underReplicated{{ 1 2 3\n",
    "a sample without a value": f"{TS}leaderCount\n",
    "a UTF-8 name in the braces": '{"fluss_tabletserver_leaderCount", server_id="1"} 4\n',
}


def test_a_family_inside_another_ones_group_is_not_read() -> None:
    """The one difference, by design: a group is dropped by its header and its last line, so
    samples of a read family placed between two lines of a skipped family (which the format
    forbids: a family's lines form one group) are dropped with it."""
    text = GROUP + f'{TS}leaderCount{{server_id="3"}} 5.0\n{BUCKET}x{{bucket="1"}} 2.0\n'
    assert outcome(text, _old_samples) != "ValueError"  # the line filter read leaderCount
    assert outcome(text) == "ValueError"  # no Fluss server metrics left


@pytest.mark.parametrize("case", list(CORNERS))
def test_corners_of_the_format_parse_as_before(case: str) -> None:
    assert_same(CORNERS[case])


def test_the_corners_are_not_all_refusals() -> None:
    answers = [outcome(text) for text in CORNERS.values()]
    assert sum(isinstance(a, ServerMetrics) for a in answers) >= 12
    assert answers.count("ValueError") >= 4

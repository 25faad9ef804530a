"""The write-lock forecast replayed over disk-usage series with known lock times (issue 41).

Usage::

    .venv/bin/python bench/forecast.py [--json]
    .venv/bin/python bench/forecast.py --quick     # smoke run: the first two series only

The replay set (tests/_testutil/forecast_replay.py): generated series (flat then rising,
rising then faster, rising then slower, two staircases of the server's check interval,
noise, a retention drop, a fill that stops) and one recorded from a real fill on the 1.0
line (tests/fixtures/forecast/live-fill-1.0.json). The forecast is made at every poll as
``watch`` makes it; per series it prints the error of the first confident ETA, the polls
it took to come within 20 % of the truth after each change of pace, the latest it was
after that (a fraction of the truth; polls within 5 of the lock are not judged so), and
how often the stated 90 % interval held the truth from the first confident forecast on.
The bar: follow <= 10 polls, late <= 20 %, coverage >= 85 % (pooled).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._quick import add_quick, parse_args
from tests._testutil.forecast_replay import (
    COVERAGE_BAR,
    FOLLOW_SAMPLES,
    LATE_BOUND,
    replay_set,
    score,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=0, help="the first N series (0: all)")
    parser.add_argument("--json", action="store_true")
    add_quick(parser, {"series": 2})
    args = parse_args(parser, argv)
    series = replay_set()
    if args.series:
        series = series[: args.series]
    scores = [score(s) for s in series]
    rows = []
    for sc in scores:
        first = sc.first_error
        rows.append(
            {
                "series": sc.series.name,
                "polls": len(sc.replays),
                "first_fire_poll": sc.fired,
                "first_error": first,
                "follow_polls": sc.follow,
                "worst_late": sc.worst_late,
                "coverage": sc.coverage,
                "coverage_future": sc.held_future / sc.judged if sc.judged else 1.0,
                "judged": sc.judged,
            }
        )
    held = sum(sc.held for sc in scores)
    judged = sum(sc.judged for sc in scores)
    pooled = held / judged if judged else 1.0
    future = sum(sc.held_future for sc in scores) / judged if judged else 1.0
    follow_ok = all(f is not None and f <= FOLLOW_SAMPLES for sc in scores for f in sc.follow)
    late_ok = all(sc.worst_late <= LATE_BOUND for sc in scores)
    verdict = {
        "follow_ok": follow_ok,
        "late_ok": late_ok,
        "coverage": pooled,
        "coverage_ok": pooled >= COVERAGE_BAR,
        "coverage_future": future,
    }
    if args.json:
        print(json.dumps({"series": rows, "verdict": verdict}, indent=2))
        return 0
    print(
        f"{'series':44} {'polls':>5} {'fire':>5} {'1st err':>8} {'follow':>8} "
        f"{'late':>7} {'held':>10} {'future':>7}"
    )
    for r in rows:
        first = "-" if r["first_error"] is None else f"{r['first_error']:+.1%}"
        follow = ",".join("never" if f is None else str(f) for f in r["follow_polls"]) or "-"
        fire = "-" if r["first_fire_poll"] is None else str(r["first_fire_poll"])
        print(
            f"{r['series']:44} {r['polls']:>5} {fire:>5} {first:>8} {follow:>8} "
            f"{r['worst_late']:>+7.1%} {r['coverage']:>6.1%} of {r['judged']:<4} "
            f"{r['coverage_future']:>6.1%}"
        )
    print(
        f"bar: follow <= {FOLLOW_SAMPLES} polls: {'ok' if follow_ok else 'MISSED'}; "
        f"late <= {LATE_BOUND:.0%}: {'ok' if late_ok else 'MISSED'}; "
        f"90% interval held {pooled:.1%} of {judged} polls (>= {COVERAGE_BAR:.0%}): "
        f"{'ok' if verdict['coverage_ok'] else 'MISSED'}; against the real future "
        f"(changes of pace to come included): {future:.1%}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

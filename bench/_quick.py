"""The benchmarks' quick mode, declared once: ``--quick`` makes a bench a smoke run.

Every ``bench/*.py`` takes ``--quick``: the same code paths on a tiny set-up (a few tables,
one or two reps, seconds of load), so the test suite can run each bench and a change that
breaks one breaks the build (tests/live/test_bench_quick.py for those that need a cluster,
tests/unit/test_bench_*.py for simulated ones). Figures are printed, never asserted: a
quick run's numbers mean nothing. Options given explicitly win over the quick values.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["add_quick", "parse_args"]


def add_quick(parser: argparse.ArgumentParser, values: Mapping[str, Any]) -> None:
    """Add ``--quick`` (a smoke run with ``values`` as the defaults) to ``parser``."""
    shown = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in values.items())
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run, figures meaningless: defaults {shown}",
    )
    parser.set_defaults(_quick_values=dict(values))


def parse_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None = None
) -> argparse.Namespace:
    """``parser.parse_args`` with the quick defaults in force under ``--quick``."""
    args = parser.parse_args(argv)
    if args.quick:
        parser.set_defaults(**args._quick_values)
        args = parser.parse_args(argv)
    return args

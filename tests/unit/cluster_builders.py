"""Moved to :mod:`tests._testutil.builders`; this name stays only until the branches that
still import it are merged."""

from tests._testutil.builders import *  # noqa: F403

"""Waiting for a screen's thread workers (history reads) before a snapshot is taken.

``app.workers.wait_for_complete()`` would wait for the feed's worker too, which never ends.
"""

from __future__ import annotations


async def workers_done(pilot, *groups: str, tries: int = 200) -> None:
    """Wait until no worker of ``groups`` runs (or is about to), then one more refresh."""
    for _ in range(tries):
        await pilot.pause(0.01)
        busy = [w for w in pilot.app.workers if w.group in groups and not w.is_finished]
        if not busy:
            break
    await pilot.pause()

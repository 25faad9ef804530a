"""The cluster model, pure: what konsole knows about a cluster, computed once.

A :class:`~konsole.model.snapshot.ClusterSnapshot` is one poll's view; everything else here is a
function of snapshots: placement facts, events, health, the check's judgement, time text.
Nothing in this package does I/O or imports textual, click, httpx, sqlite3 or ``store``
(an import-linter contract in ``make lint``): every face (console, ``check``, ``watch``,
``history``) prints the same values because they all come from here.
"""

"""Collection: the I/O that makes and keeps snapshots.

Profiles and connecting, the metrics scrape, the poller, the recorder and history access.
It composes ``fluss_proto`` (the wire), ``store`` (the SQLite history) and
:mod:`konsole.model` (the pure model); it knows nothing of click or Textual.
"""

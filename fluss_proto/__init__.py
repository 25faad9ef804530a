"""fluss_proto: a pure-Python client for the Apache Fluss binary RPC protocol.

Layering (imports point one way): frame -> connection -> client -> admin / gather / scan;
the value types they share (table paths, servers, metadata) live in ``cluster`` (no I/O).
A part of several modules is a sub-package whose ``__init__`` exports its public names
(``client``, ``gather``, ``scan``, ``lookup``, ``filter``, ``records``, ``types``);
docs/architecture.md draws the whole layout.
This package knows nothing of konsole's UI or its SQLite history.
"""

__version__ = "0.1.0"  # the version sent to servers as client_software_version

"""Helpers shared by the test suites; test modules import these, never each other.

- :mod:`.wire`: protobuf bytes written by hand (varint, error bodies);
- :mod:`.fakes`: fake Fluss servers (raw peers, API servers, clusters with standbys),
  the asyncio-complaints fixture, a local cluster's description;
- :mod:`.scan`: a fake table answering scans, offsets and metadata with real record bytes;
- :mod:`.records`, :mod:`.records_encoder`: record cases, differential comparisons and an
  encoder that follows the Java writers;
- :mod:`.frames`: captured server frames and a server that replays them;
- :mod:`.builders`: snapshots, views, tables and metrics for table-driven tests;
- :mod:`.pyfluss_data`: data written and read with pyfluss (live tests).
"""

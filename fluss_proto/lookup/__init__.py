"""Primary-key and prefix lookups (LOOKUP / PREFIX_LOOKUP), read-only.

- :mod:`.keys`: key bytes (Fluss's compacted key encoding) and the bucket they hash to;
- :mod:`.plan`: which columns a key names, each key typed, encoded and placed (pure);
- :mod:`.run`: :class:`Lookuper` (the table read once, then one request per leader per
  lookup) and :func:`lookup_rows` (one lookup); rows decoded in key order.
"""

from __future__ import annotations

from fluss_proto.lookup.keys import bucket_of, encode_key
from fluss_proto.lookup.plan import KeyPlan, LookupSpec, lookup_spec, partition_text, plan_keys
from fluss_proto.lookup.run import (
    KeyResult,
    KeyStatus,
    Lookup,
    Lookuper,
    LookupReport,
    lookup_rows,
)

__all__ = [
    "KeyPlan",
    "KeyResult",
    "KeyStatus",
    "Lookup",
    "LookupReport",
    "LookupSpec",
    "Lookuper",
    "bucket_of",
    "encode_key",
    "lookup_rows",
    "lookup_spec",
    "partition_text",
    "plan_keys",
]

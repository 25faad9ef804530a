"""Primary-key and prefix lookups (LOOKUP / PREFIX_LOOKUP), read-only.

- :mod:`.keys`: key bytes (Fluss's compacted key encoding) and the bucket they hash to;
- :mod:`.plan`: which columns a key names, each key typed, encoded and placed (pure);
- :mod:`.run`: :func:`lookup_rows`, one request per leader, rows decoded in key order.
"""

from __future__ import annotations

from fluss_proto.lookup.keys import bucket_of, encode_key
from fluss_proto.lookup.plan import KeyPlan, LookupSpec, lookup_spec, partition_text, plan_keys
from fluss_proto.lookup.run import KeyResult, KeyStatus, Lookup, LookupReport, lookup_rows

__all__ = [
    "KeyPlan",
    "KeyResult",
    "KeyStatus",
    "Lookup",
    "LookupReport",
    "LookupSpec",
    "bucket_of",
    "encode_key",
    "lookup_rows",
    "lookup_spec",
    "partition_text",
    "plan_keys",
]

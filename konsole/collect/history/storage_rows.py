"""Storage parts to history bodies and back (the history's ``storage`` table, schema 4).

A body is zlib-compressed JSON naming its own fields (``bucket_fields``), so a reader keeps
the fields it knows and leaves unknown ones out: a part written by a newer konsole still
reads. A body that does not decode is a :class:`~fluss_proto.errors.DecodeError`-free None
(the history shows no storage part for that moment rather than a wrong one).
"""

from __future__ import annotations

import json
import zlib
from dataclasses import astuple, fields
from types import MappingProxyType
from typing import Any, Final

from konsole.model.storage import (
    BucketStorage,
    StorageCapabilities,
    StoragePart,
    TableStorage,
)

__all__ = ["pack_storage", "unpack_storage"]

_BUCKET_FIELDS: Final = tuple(f.name for f in fields(BucketStorage))
_TABLE_FIELDS: Final = tuple(f.name for f in fields(TableStorage))
_CAPS: Final = tuple(f.name for f in fields(StorageCapabilities))


def pack_storage(part: StoragePart) -> bytes:
    body = {
        "v": 1,
        "taken_at": part.taken_at,
        "latency_s": part.latency_s,
        "capabilities": part.capabilities.as_dict(),
        "errors": list(part.errors),
        "requests": part.requests,
        "deferred": part.deferred,
        "table_fields": list(_TABLE_FIELDS),
        "tables": [
            [
                dict(t.retention) if name == "retention" else getattr(t, name)
                for name in _TABLE_FIELDS
            ]
            for t in part.tables
        ],
        "bucket_fields": list(_BUCKET_FIELDS),
        "buckets": [list(astuple(b)) for b in part.buckets],
    }
    return zlib.compress(json.dumps(body, separators=(",", ":")).encode(), 6)


def unpack_storage(body: bytes | None) -> StoragePart | None:
    if body is None:
        return None
    try:
        data = json.loads(zlib.decompress(body))
        return StoragePart(
            taken_at=float(data["taken_at"]),
            latency_s=float(data["latency_s"]),
            capabilities=StorageCapabilities(
                **{k: bool(v) for k, v in data["capabilities"].items() if k in _CAPS}
            ),
            tables=tuple(_table(data["table_fields"], row) for row in data["tables"]),
            buckets=tuple(
                BucketStorage(**_known(data["bucket_fields"], row, _BUCKET_FIELDS))
                for row in data["buckets"]
            ),
            errors=tuple(str(e) for e in data.get("errors", ())),
            requests=int(data.get("requests", 0)),
            deferred=int(data.get("deferred", 0)),
        )
    except (ValueError, KeyError, TypeError, zlib.error):
        return None


def _plain(value: Any) -> Any:
    return dict(value) if isinstance(value, MappingProxyType) else value


def _known(names: list[str], row: list[Any], known: tuple[str, ...]) -> dict[str, Any]:
    return {n: v for n, v in zip(names, row, strict=True) if n in known}


def _table(names: list[str], row: list[Any]) -> TableStorage:
    values = _known(names, row, _TABLE_FIELDS)
    values["retention"] = MappingProxyType(dict(values.get("retention") or {}))
    return TableStorage(**values)

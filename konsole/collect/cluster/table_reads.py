"""The console's reads of a table's rows: preview scans (with a filter), key and prefix
lookups, every answer masked by the profile's rules before a screen sees it.

The console's feed (:mod:`konsole.ui.feed`) delegates here: a live feed passes its way of
connecting (:func:`preview`, :func:`lookup` connect, read, close, also when cancelled); a
static feed passes its fakes' answers through :func:`masked_preview` and
:func:`masked_lookup`, so that masking is the same whichever feed answered. A filter or a
key on a masked column is refused (:class:`~konsole.errors.MaskedColumnError`) before
anything is read: which rows match, or whether a key exists, would tell its values.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from konsole.errors import ExportForbiddenError
from konsole.model.masking import MaskRules, missing_partition_text

if TYPE_CHECKING:
    import pyarrow as pa

    from fluss_proto.client import FlussClient
    from fluss_proto.filter import Filter
    from fluss_proto.lookup import LookupReport
    from fluss_proto.scan import Preview
    from fluss_proto.types.info import TableInfo
    from konsole.collect.profiles import Profile

__all__ = [
    "DEADLINE_S",
    "LookupRequest",
    "LookupRows",
    "PreviewRequest",
    "export_allowed",
    "lookup",
    "masked_lookup",
    "masked_preview",
    "masks_of",
    "preview",
    "refuse_export",
]

#: Seconds for one read, connecting included (as ``konsole preview --timeout``).
DEADLINE_S = 10.0

#: How a read connects: ``connect(request_timeout=...)`` -> a client (closed by the read).
Connect = Callable[..., Awaitable["FlussClient"]]


@dataclass(frozen=True, slots=True)
class PreviewRequest:
    """One preview scan: ``(database, table)``, a partition or None, a row limit, tail
    (the newest rows of a log) or not, the scan's deadline, and a filter (the language of
    ``konsole preview --where``) or None."""

    table: tuple[str, str]
    partition: str | None
    limit: int
    tail: bool
    deadline_s: float = DEADLINE_S
    where: str | None = None

    @property
    def path(self) -> str:
        return ".".join(self.table)


@dataclass(frozen=True, slots=True)
class LookupRequest:
    """One key (``(column, value text)`` pairs, typed from the schema by the lookup), or
    with ``prefix`` the bucket key's columns (and partition keys) of a prefix lookup."""

    table: tuple[str, str]
    key: tuple[tuple[str, str], ...]
    prefix: bool = False
    deadline_s: float = DEADLINE_S

    @property
    def path(self) -> str:
        return ".".join(self.table)

    @property
    def key_text(self) -> str:
        return ", ".join(f"{c}={v}" for c, v in self.key)

    @property
    def kind(self) -> str:
        return "prefix lookup" if self.prefix else "lookup"


@dataclass(frozen=True, slots=True)
class LookupRows:
    """The rows a lookup found (the table's columns; masked ones as ``****``), its report
    and the table it read."""

    table: pa.Table
    report: LookupReport
    info: TableInfo
    request: LookupRequest

    @property
    def found(self) -> bool:
        return self.report.found > 0

    def headline(self) -> str:
        """``lookup id=101: found (1 row)`` / ``prefix lookup region=eu: not found``."""
        r = self.request
        if self.report.failed:
            what = "failed"
        elif self.found:
            what = f"found ({self.report.rows} row{'s' if self.report.rows != 1 else ''})"
        else:
            what = "not found"
        return f"{r.kind} {r.key_text}: {what}"


def masks_of(profile: Profile | None) -> MaskRules:
    """The profile's masking rules (none without a profile)."""
    return profile.masks if profile is not None else MaskRules()


def export_allowed(profile: Profile | None) -> bool:
    """Whether rows may be written to a file: not under a profile with ``export = false``
    (rows are shown, never written), always without a profile."""
    return profile is None or profile.export


def refuse_export(profile: Profile | None) -> None:
    """Raises :class:`ExportForbiddenError` when ``profile`` forbids export; every face
    that writes rows to a file asks this first (the console hides its export instead)."""
    if profile is not None and not export_allowed(profile):
        raise ExportForbiddenError(
            f"profile {profile.name!r} forbids export (export = false): rows are shown, "
            "never written to a file"
        )


# ----------------------------------------------------------------- masking the answers


def _filter_check(request: PreviewRequest, masks: MaskRules) -> Callable[[Filter], None] | None:
    """Refuses a filter that reads a masked column (None: nothing to check)."""
    if not masks or request.where is None:
        return None

    def check(where: Filter) -> None:
        from fluss_proto.filter import columns_of

        masks.refuse(request.path, columns_of(where.predicate), "filtered on")

    return check


def _mask_table(table: pa.Table, masks: MaskRules, info: TableInfo) -> tuple[pa.Table, bool]:
    """``table`` with the masked columns' values replaced; True when ``_partition`` is among
    them (partition names then hold masked values)."""
    from konsole.export.mask import PARTITION_COLUMN, mask_chunk, mask_schema, masked_columns

    masked = masked_columns(masks, info.table_path, table.column_names, info.partition_keys)
    if not masked:
        return table, False
    return mask_chunk(table, masked, mask_schema(table.schema, masked)), (
        PARTITION_COLUMN in masked
    )


def masked_preview(result: Preview, request: PreviewRequest, masks: MaskRules) -> Preview:
    """``result`` as a screen may show it: the filter checked against the masks, the masked
    columns' values (and, for a masked partition key, the report's partition names) hidden."""
    if not masks:
        return result
    if request.where is not None:
        from fluss_proto.filter import column_refs, columns_of, parse_filter

        try:
            parsed = parse_filter(request.where, result.info.schema)
        except ValueError:  # the reader judged the filter already: columns named in it
            names = [n for n in column_refs(result.info.schema) if n in request.where]
        else:
            names = list(columns_of(parsed.predicate))
        masks.refuse(request.path, names, "filtered on")
    table, partitions = _mask_table(result.table, masks, result.info)
    report = result.report
    if partitions:
        from konsole.export.mask import hide_partitions

        report = hide_partitions(report)
    return dataclasses.replace(result, table=table, report=report)


def masked_lookup(result: LookupRows, masks: MaskRules) -> LookupRows:
    """``result`` with the masked columns' values hidden (the key itself was checked)."""
    if not masks:
        return result
    masks.refuse(result.request.path, [c for c, _ in result.request.key], "looked up by")
    table, _ = _mask_table(result.table, masks, result.info)
    return dataclasses.replace(result, table=table)


# ----------------------------------------------------------------- reading


async def _with_client(
    connect: Connect, deadline_s: float, read: Callable[[FlussClient, float], Awaitable[Any]]
) -> Any:
    """Connect, ``read(client, remaining seconds)``, close (also when cancelled)."""
    started = time.monotonic()
    client = await connect(request_timeout=deadline_s)
    try:
        return await read(client, max(0.5, deadline_s - (time.monotonic() - started)))
    finally:
        # Also on cancellation: the scan has closed its scanner sessions by now.
        await asyncio.shield(client.close())


async def preview(connect: Connect, request: PreviewRequest, masks: MaskRules) -> Preview:
    """One preview scan (filtered by ``request.where``: the filter goes with FetchLog where
    the server advertises it), masked. Raises what :func:`fluss_proto.scan.preview_table`
    raises (a filter that does not fit: :class:`~fluss_proto.errors.FilterError`) and
    :class:`MaskedColumnError`; under masks an unknown partition's error names no others."""
    from fluss_proto.error_codes import PartitionNotExistError
    from fluss_proto.scan import preview_table

    async def read(client: FlussClient, remaining: float) -> Preview:
        return await preview_table(
            client,
            request.table,
            partition=request.partition,
            limit=request.limit,
            tail=request.tail,
            deadline_s=remaining,
            where=request.where,
            check_filter=_filter_check(request, masks),
        )

    try:
        result: Preview = await _with_client(connect, request.deadline_s, read)
    except PartitionNotExistError:
        if not masks:
            raise
        # its text lists the table's partitions, whose names hold partition-key values
        raise PartitionNotExistError(
            missing_partition_text(request.partition, request.path)
        ) from None
    return masked_preview(result, request, masks)


async def lookup(connect: Connect, request: LookupRequest, masks: MaskRules) -> LookupRows:
    """One key (or prefix) looked up through LOOKUP / PREFIX_LOOKUP (read-only), masked.
    Raises :class:`MaskedColumnError` for a key on a masked column before connecting, and
    what :func:`fluss_proto.lookup.lookup_rows` raises (a key that does not fit the table:
    :class:`~fluss_proto.errors.InputError`)."""
    from fluss_proto.lookup import lookup_rows

    masks.refuse(request.path, [c for c, _ in request.key], "looked up by")

    async def read(client: FlussClient, remaining: float) -> LookupRows:
        found = await lookup_rows(
            client,
            request.table,
            [dict(request.key)],
            prefix=request.prefix,
            deadline_s=remaining,
        )
        table: pa.Table = found.rows  # type: ignore[assignment]  # not light: Arrow
        return LookupRows(table, found.report, found.info, request)

    result: LookupRows = await _with_client(connect, request.deadline_s, read)
    return masked_lookup(result, masks)

"""Decoders for Fluss record formats: log batches, Arrow payloads, value batches and rows.

Pure functions over bytes: no I/O. Everything a decoder raises on malformed input is a
:class:`~fluss_proto.records.errors.RecordDecodeError` (a ``fluss_proto.errors.DecodeError``).

Modules:

- :mod:`.log_batch` - log record batches in a fetch blob (all magics; CRC-32C; statistics);
- :mod:`.statistics` - the column statistics block of a 1.0 log batch (min, max, nulls);
- :mod:`.arrow` - Fluss type -> Arrow type, and the ARROW records area -> ``pyarrow.RecordBatch``;
- :mod:`.log_records` - records areas of the INDEXED and COMPACTED log formats;
- :mod:`.kv_batch` - value batches of ScanKv / LimitScan on primary-key tables;
- :mod:`.compacted_row`, :mod:`.indexed_row`, :mod:`.binary_array` - the row encodings;
- :mod:`.columnar` - vectorised (numpy) CompactedRow -> ``pyarrow.Table``, the fast path of
  ``CompactedRowDecoder.to_table`` / ``decode_table``; the row decoder stays the reference;
- :mod:`.rowtype` - the small type description the decoders take (``as_row_type`` adapts).

Python values produced by the row decoders (``decode`` / ``decode_values``):

===================================  ===============================================
BOOLEAN                              bool
TINYINT, SMALLINT, INTEGER, BIGINT   int
FLOAT, DOUBLE                        float
DECIMAL                              decimal.Decimal (exact)
CHAR, STRING                         str (invalid UTF-8 replaced, as Java does)
BINARY, BYTES                        bytes
DATE                                 datetime.date
TIME                                 datetime.time (milliseconds)
TIMESTAMP (without time zone)        naive datetime.datetime
TIMESTAMP_LTZ                        datetime.datetime in UTC
ARRAY                                list
MAP                                  list of (key, value) tuples, stored order
ROW                                  dict {field name: value}
NULL                                 None
===================================  ===============================================

``datetime`` has microseconds only: nanoseconds of TIMESTAMP(7..9) are truncated there. The
columnar path (``RowDecoder.to_table``, ``row_batch_table``, ``value_batch_table``) builds
Arrow columns from integers in the Arrow unit and keeps them.
"""

from fluss_proto.records.arrow import (
    ArrowRecords,
    decode_arrow_batch,
    decode_arrow_message,
    to_arrow_schema,
    to_arrow_type,
)
from fluss_proto.records.compacted_row import CompactedRowDecoder
from fluss_proto.records.errors import (
    AmbiguousMagicError,
    CorruptBatchError,
    CrcMismatchError,
    RecordDecodeError,
    RowDecodeError,
    TruncatedBatchError,
    UnknownMagicError,
)
from fluss_proto.records.indexed_row import IndexedRowDecoder
from fluss_proto.records.kv_batch import (
    ValueBatch,
    ValueRecord,
    decode_value_batch,
    make_row_decoder,
    read_value_batch,
    split_value,
    value_batch_table,
)
from fluss_proto.records.log_batch import (
    ChangeType,
    LogBatch,
    LogBatches,
    Magic1Layout,
    iter_log_batches,
    magic1_layout_for_api_keys,
    magic1_layout_for_version,
    parse_log_batch,
    read_log_batches,
)
from fluss_proto.records.log_records import (
    LogRecord,
    RawLogRecord,
    decode_row_batch,
    iter_raw_records,
    row_batch_table,
)
from fluss_proto.records.rowtype import DataType, Field, as_data_type, as_row_type, row_type
from fluss_proto.records.statistics import BatchStatistics, ColumnStatistics, parse_statistics

__all__ = [
    "AmbiguousMagicError",
    "ArrowRecords",
    "BatchStatistics",
    "ChangeType",
    "ColumnStatistics",
    "CompactedRowDecoder",
    "CorruptBatchError",
    "CrcMismatchError",
    "DataType",
    "Field",
    "IndexedRowDecoder",
    "LogBatch",
    "LogBatches",
    "LogRecord",
    "Magic1Layout",
    "RawLogRecord",
    "RecordDecodeError",
    "RowDecodeError",
    "TruncatedBatchError",
    "UnknownMagicError",
    "ValueBatch",
    "ValueRecord",
    "as_data_type",
    "as_row_type",
    "decode_arrow_batch",
    "decode_arrow_message",
    "decode_row_batch",
    "decode_value_batch",
    "iter_log_batches",
    "iter_raw_records",
    "magic1_layout_for_api_keys",
    "magic1_layout_for_version",
    "make_row_decoder",
    "parse_log_batch",
    "parse_statistics",
    "read_log_batches",
    "read_value_batch",
    "row_batch_table",
    "row_type",
    "split_value",
    "to_arrow_schema",
    "to_arrow_type",
    "value_batch_table",
]

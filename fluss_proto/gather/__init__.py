"""One pass over a whole cluster in a few round trips, one when nothing changed.

:func:`gather_cluster` reads servers (with what each advertises), databases, tables (with
their :class:`TableInfo`), partitions, every bucket's placement and its latest offset (the
earliest too when asked). It works in rounds: each round sends every request whose
inputs are known and whose answer is still missing, in two batches sent at the same time
(catalog requests and offset requests, each a ``call_many``: pipelined per connection, all
servers at once), then checks the answers. Without a guide that takes:

1. ListDatabases, ApiVersions of every known server, GetMetadata for the server list;
2. ListTables for every database;
3. GetMetadata for every table (chunks of :data:`~fluss_proto.admin.METADATA_CHUNK`
   paths). The table JSON in it gives each TableInfo, so no GetTableInfo;
4. latest offsets of non-partitioned tables, and ListPartitionInfos of partitioned ones;
5. GetMetadata for all partition ids; 6. latest offsets of partition buckets.

Given ``previous`` (the view of the last poll), every round-1 request is built from what
that view knew (its databases, tables, partitions and leaders), so an unchanged cluster
is read in **one** round trip. Nothing from ``previous`` reaches the result: a guessed
answer is kept only when this gather's own replies confirm what it was based on (the
database and table still listed, the partition still there, the server asked still the
bucket's leader); anything else is discarded and asked again in the next round.

Latest offsets come from one FetchLog per leader naming all its buckets with
``max_bytes=0`` and ``max_wait_ms=0``: each bucket's reply carries its high watermark,
which is what ListOffsets LATEST answers a client, in 3 requests for 3 servers instead
of one per (leader, table, partition). The server may still attach one record batch to
the whole reply (it always returns a first batch if there is one); the fetch offset is
the offset ``previous`` saw, so that batch is new data at most. A bucket the fetch cannot
answer for a reason other than stale leadership (e.g. no READ permission) is asked with
ListOffsets LATEST instead. ``earliest=True`` adds ListOffsets EARLIEST per (leader,
table, partition): FetchLog carries no usable log start offset (0.9.1 and 1.0 send 0).

Nothing fails the whole gather except cancellation: each failure is kept where it
happened (on the server, table or bucket, and in :attr:`ClusterView.errors`). Extra
rounds happen only on change or trouble and are bounded (:data:`MAX_ROUNDS`): a
GetMetadata chunk rejected because a table vanished is asked again table by table, a
partition that vanished the same way per table then per partition, and buckets whose
leader did not answer are asked again once after fresh metadata.
:attr:`ClusterView.round_trips` counts the rounds.

The package's modules: :mod:`.run` holds :func:`gather_cluster` and its rounds; the gather
holds one :class:`~fluss_proto.gather.state.GatherState` (:mod:`.state`: what it has learnt
and what it may guess) and two planners that add each round's requests and take their
answers into it: :class:`~fluss_proto.gather.catalog_planner.CatalogPlanner` (servers,
databases, tables, partitions) and
:class:`~fluss_proto.gather.offsets_planner.OffsetsPlanner` (offsets).
"""

from __future__ import annotations

from fluss_proto.gather.run import MAX_ROUNDS, gather_cluster

__all__ = ["MAX_ROUNDS", "gather_cluster"]

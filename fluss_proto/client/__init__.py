"""Cluster-level client: bootstrap, per-server handshakes, metadata cache, routing, retries.

Shape (after aiokafka's ``client.py``; its parts are this package's modules, as aiokafka keeps
its consumer's and producer's parts in sub-packages):

- :meth:`FlussClient.connect` tries the bootstrap addresses in order until one answers
  GetMetadata; that reply names the coordinator and the live tablet servers. The bootstrap
  may be any server. It then opens (best effort) one connection to the coordinator and one
  to a tablet server so that :attr:`~FlussClient.features` knows both server types.
- One :class:`~fluss_proto.connection.Connection` per server address, created on first use
  and created again after it closed (server restart, idle timeout). Every new connection
  sends API_VERSIONS first and records what the server advertises, then runs SASL/PLAIN
  when credentials are configured, and only then carries requests.
- Before a request is sent its version is negotiated against that server's advertisement:
  ``min(our max, server max)``, provided the ranges overlap. An API the server does not
  advertise raises :class:`~fluss_proto.errors.UnsupportedByServerError` at once and nothing is
  sent: a Fluss server silently drops requests for APIs it does not serve, so the call
  would otherwise hang until its timeout (observed on 0.9.1: SCAN_KV gets no reply and the
  connection stays open).
- Read-only by default: a mutating API raises :class:`~fluss_proto.errors.ReadOnlyViolationError`
  before anything happens unless the client was created with ``allow_writes=True`` (every
  write) or with a set of keys (``allow_writes=OPERATOR_ACTIONS``: exactly those);
  server-to-server (private) APIs are always refused; LOOKUP with
  ``insert_if_not_exists`` set counts as a write.
- Coordinator HA (Fluss 1.0; 0.9.1 has one coordinator and never sends code 65): a
  standby coordinator answers NOT_COORDINATOR_LEADER (65) to everything but API_VERSIONS.
  A request meant for the coordinator that gets 65 refreshes metadata from a tablet
  server, follows the coordinator it names, retries once there, and appends a
  :class:`CoordinatorRedirect` to :attr:`FlussClient.events`. This path is exercised only
  against fake servers: no 1.0 server is available to test against.
- Retries: read-only APIs only, retriable errors only (``ServerError.retriable``,
  ``ConnectionFailedError``, ``RequestTimeoutError``), at most ``retries`` extra attempts with
  a short exponential backoff; metadata is refreshed first when the error calls for it
  (``refresh_metadata`` on the error class, or a lost/refused connection).

Nothing here logs request or response bodies, and no credential reaches a log line or an
exception text.

The client holds three objects and calls them, one job each: a
:class:`~fluss_proto.client.pool.ConnectionPool` (connections, their handshake, requests on
the wire; given the timeouts and credentials), a
:class:`~fluss_proto.client.router.MetadataRouter` (metadata cache, routing; given the pool)
and a :class:`~fluss_proto.client.retry.RetryPolicy` (attempts, backoff, coordinator
failover; given the pool and the router). :class:`FlussClient` keeps the lifecycle, the
views and the checks before sending (:mod:`.gate`; :mod:`.target` holds what the parts
share). All log to the ``fluss_proto.client`` logger. The package exports the public
names; :mod:`.fluss_client` holds :class:`FlussClient` itself.
"""

from __future__ import annotations

from fluss_proto.client.fluss_client import COORDINATOR, CallItem, ClientOptions, FlussClient
from fluss_proto.client.pool import CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION
from fluss_proto.client.retry import EVENTS_KEPT
from fluss_proto.cluster import (
    DEFAULT_PORT,
    FEATURE_APIS,
    SERVER_TYPE_COORDINATOR,
    SERVER_TYPE_TABLET,
    BucketMetadata,
    ClusterMetadata,
    CoordinatorRedirect,
    Features,
    MetadataReply,
    PartitionMetadata,
    ServerApiVersions,
    ServerNode,
    TableMetadata,
    TablePath,
    parse_bootstrap,
    parse_metadata,
)
from fluss_proto.errors import CoordinatorUnknownError, UnknownNodeError

__all__ = [
    "CLIENT_SOFTWARE_NAME",
    "CLIENT_SOFTWARE_VERSION",
    "COORDINATOR",
    "DEFAULT_PORT",
    "EVENTS_KEPT",
    "FEATURE_APIS",
    "SERVER_TYPE_COORDINATOR",
    "SERVER_TYPE_TABLET",
    "BucketMetadata",
    "CallItem",
    "ClientOptions",
    "ClusterMetadata",
    "CoordinatorRedirect",
    "CoordinatorUnknownError",
    "Features",
    "FlussClient",
    "MetadataReply",
    "PartitionMetadata",
    "ServerApiVersions",
    "ServerNode",
    "TableMetadata",
    "TablePath",
    "UnknownNodeError",
    "parse_bootstrap",
    "parse_metadata",
]

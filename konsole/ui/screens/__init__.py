"""The console's screens, grouped by what they show (styles in ``.tcss`` files beside them).

- ``overview``: the dashboard, the first mode;
- ``servers``: the Servers mode and one server's detail;
- ``capacity``: the room before each write lock and its forecast;
- ``tables``: the Tables and Storage modes, one table's detail, a table's preview;
- ``events``: the Events mode and one event's evidence;
- ``operations``: rebalance, cluster configs, the rolling upgrade;
- ``base`` (what every screen shares) and ``cluster_facts`` (the rows the Overview, Servers
  and Server detail build from one poll's placement) serve them all.

Every screen is a :class:`konsole.ui.screens.base.ConsoleScreen` subclass (its lifecycle is
described in ``base``): it renders the app's current :class:`konsole.ui.state.ConsoleState`
in ``render_state``. What a state does not carry (older events, metric series, a table's
rows, KV snapshots) a screen reads from the history or asks of the feed, in a worker,
through :class:`konsole.ui.services.ConsoleServices`. No group imports another's screen:
they open one another through the app (``open_server``, ``open_table``...).
"""

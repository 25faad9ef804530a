"""The console's screens, one module each (styles in ``.tcss`` files beside them).

The four modes (overview, servers, tables, events) and the screens pushed over them (server
detail, table detail, preview) are all :class:`konsole.ui.screens.base.ConsoleScreen`
subclasses (their lifecycle is described in ``base``): each renders the app's current
:class:`konsole.ui.state.ConsoleState` in ``render_state``. What a state does not carry
(older events, metric series, a table's rows, KV snapshots) a screen reads from the history
or asks of the feed, in a worker, through :class:`konsole.ui.services.ConsoleServices`.
"""

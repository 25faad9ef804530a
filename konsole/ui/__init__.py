"""The Textual console: app, feed, state, services, colours, palette, screens, modals, widgets.

The only package that imports textual. How the parts fit:

- :mod:`~konsole.ui.feed` publishes :class:`~konsole.ui.state.ConsoleState` objects (a live
  poller and recorder, a recorder's file followed, or fixed states for tests) and answers
  what screens ask the cluster (previews, KV snapshots);
- :mod:`~konsole.ui.app` holds the feed and the state shown (live, or a recorded moment in
  time travel) and implements :class:`~konsole.ui.services.ConsoleServices`, the one thing
  screens, modals and the palette know of it (no module here imports the app);
- :mod:`~konsole.ui.screens` render a state; their slow work (history reads, scans) runs in
  workers and comes back as messages; :mod:`~konsole.ui.colors` holds every colour map.

Nothing here opens a client or a history file on the event loop.
"""

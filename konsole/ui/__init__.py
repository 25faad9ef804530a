"""The Textual console: app, feed, state, palette, screens, modals and widgets.

The only package that imports textual. Screens render a :class:`konsole.ui.state.ConsoleState`
and ask the app's feed for anything else; they never open a client themselves.
"""

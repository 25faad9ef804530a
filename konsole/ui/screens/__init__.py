"""The console's screens, one module each (styles in ``.tcss`` files beside them).

Every screen is a :class:`konsole.ui.screens.base.ConsoleScreen`: it renders one
:class:`konsole.ui.state.ConsoleState` in :meth:`~ConsoleScreen.render_state` and reads
nothing about the cluster elsewhere.
"""

"""The console's screens, one module each (styles in ``.tcss`` files beside them).

Every screen is a :class:`konsole.screens.base.ConsoleScreen`: it renders one
:class:`konsole.console_state.ConsoleState` in :meth:`~ConsoleScreen.render_state` and reads
nothing about the cluster elsewhere.
"""

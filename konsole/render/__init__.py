"""Value rendering shared by the CLI, the check, the export and the console (no Textual).

:mod:`konsole.render.values` turns decoded values into text and JSON;
:mod:`konsole.render.arrow` does the same column-wise over Arrow arrays.
"""

"""Value rendering shared by the CLI, the check, the export and the console (no Textual).

:mod:`konsole.render.values` turns decoded values into text and JSON;
:mod:`konsole.render.arrow` does the same column-wise over Arrow arrays;
:mod:`konsole.render.check` writes the health check's answer (Nagios line, JSON, text).
Rendering reads the model (:mod:`konsole.model`), never the other way round.
"""

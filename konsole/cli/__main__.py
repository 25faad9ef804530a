"""``python -m konsole.cli``: the same as the ``konsole`` command (and named so in its
messages and help)."""

from konsole.cli.main import main

main(prog_name="konsole")

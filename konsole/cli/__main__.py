"""``python -m konsole.cli``: the same as the ``konsole`` command."""

from konsole.cli.main import main

main()

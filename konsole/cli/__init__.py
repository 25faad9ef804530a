"""The command line: one module per command group, the shared options declared once.

The only package that imports click, and nothing imports it (import-linter contracts).
The entry point is :func:`konsole.cli.main.main`.
"""

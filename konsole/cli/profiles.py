"""`konsole profiles`: the connection profiles of the config file, never their passwords.

Exit codes (docs/cli.md): 0, or 3 for a config file that cannot be read (bad
configuration; ``--config`` naming a file that does not exist is one).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from konsole.cli.exits import fail
from konsole.cli.options import DOCUMENT_FORMATS, config_option
from konsole.collect.profiles import ProfileError, default_config_path, load_profiles

__all__ = ["profiles"]


@click.command("profiles")
@config_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(DOCUMENT_FORMATS),
    default="text",
    show_default=True,
    help="text: for a person; json: one document.",
)
def profiles(config_path: Path | None, fmt: str) -> None:
    """List the connection profiles (never their passwords)."""
    path = config_path or default_config_path()
    try:
        found = load_profiles(path)
    except ProfileError as exc:
        fail(exc, exc.exit_code)
    if fmt == "json":
        click.echo(
            json.dumps(
                {"path": str(path), "profiles": [p.describe() for p in found.values()]}, indent=2
            )
        )
        return
    if not found:
        click.echo(f"no profiles in {path}")
        return
    click.echo(f"profiles in {path}:")
    for p in found.values():
        d = p.describe()
        auth = f" sasl={d['sasl_user']} password={d['password']}" if d["sasl_user"] else ""
        metrics = (
            f" metrics={len(d['metrics'])} url(s)"
            if d["metrics"]
            else f" metrics_port={d['metrics_port']}"
            if d["metrics_port"]
            else " metrics=not configured"
        )
        click.echo(f"  {p.name:<16} {','.join(p.bootstrap)}{auth}{metrics}")

"""Our packages as an installed wheel has them: compiled to ``__pycache__`` bytecode.

The one way the benchmarks (and ``make demo``) make bytecode before they time or run
konsole. A checkout run with ``PYTHONDONTWRITEBYTECODE`` and no ``__pycache__`` compiles
every module of ours in every process (about 100 ms of a check's CPU) while an installed
konsole loads the bytecode pip wrote at install: not what users run. Reading bytecode is
not affected by ``PYTHONDONTWRITEBYTECODE``, so a child process started afterwards uses it.

    python bench/_bytecode.py       # what `make demo` runs first
"""

from __future__ import annotations

import compileall
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PACKAGES", "installed_bytecode"]

REPO = Path(__file__).resolve().parents[1]
#: konsole's packages, as a wheel installs them.
PACKAGES = ("fluss_proto", "store", "konsole")


def installed_bytecode(extra: Sequence[str] = ()) -> list[str]:
    """Compile our packages (and the repository dirs in ``extra``, e.g. the test helpers a
    bench's children import) to ``__pycache__``; return what was compiled."""
    compiled = [*PACKAGES, *extra]
    for name in compiled:  # py_compile writes even under PYTHONDONTWRITEBYTECODE
        if not compileall.compile_dir(str(REPO / name), quiet=1):
            raise RuntimeError(f"{name}: a module does not compile")
    return compiled


if __name__ == "__main__":
    installed_bytecode()

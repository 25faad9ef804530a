"""No function over ~80 lines and no class over ~350 lines in konsole/, fluss_proto/ and
store/ (generated ``fluss_proto/_gen`` aside), unless its docstring says why it is long
"on purpose" (those words, then the reason).

Sizes count the lines from the ``def``/``class`` line to the last line of the body;
decorators are declarations (a click command's options) and do not count. Reads the
sources with ``ast``: no import, no I/O but reading files.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("konsole", "fluss_proto", "store")
GENERATED = REPO / "fluss_proto" / "_gen"
MAX_FUNCTION_LINES = 80
MAX_CLASS_LINES = 350
#: A docstring that contains this marker explains why its definition is long.
MARKER = "on purpose"

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _sources() -> list[Path]:
    return sorted(
        p
        for package in PACKAGES
        for p in (REPO / package).rglob("*.py")
        if GENERATED not in p.parents
    )


def _size(node: Definition) -> int:
    return (node.end_lineno or node.lineno) - node.lineno + 1


def offenders_in(source: str, name: str) -> list[str]:
    """``name:line kind qualified-name (N lines)`` for each definition over its limit."""
    found: list[str] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualified = f"{prefix}{child.name}"
                is_class = isinstance(child, ast.ClassDef)
                limit = MAX_CLASS_LINES if is_class else MAX_FUNCTION_LINES
                size = _size(child)
                if size > limit and MARKER not in (ast.get_docstring(child) or ""):
                    kind = "class" if is_class else "def"
                    found.append(f"{name}:{child.lineno} {kind} {qualified} ({size} lines)")
                visit(child, f"{qualified}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def test_the_check_finds_a_long_function_and_honours_the_marker() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    long_def = f"def f():\n{body}\n"
    assert offenders_in(long_def, "m.py") == [f"m.py:1 def f ({MAX_FUNCTION_LINES + 1} lines)"]
    explained = (
        f'def f():\n    """Long {MARKER}: one table of cases, read top to bottom."""\n{body}\n'
    )
    assert offenders_in(explained, "m.py") == []
    nested = f"class C:\n    def g(self):\n{body.replace('    ', '        ')}\n"
    assert offenders_in(nested, "m.py") == [f"m.py:2 def C.g ({MAX_FUNCTION_LINES + 1} lines)"]
    assert offenders_in("def f():\n    return 1\n", "m.py") == []


def test_no_long_functions_or_classes() -> None:
    offenders = [
        line
        for path in _sources()
        for line in offenders_in(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
    ]
    print("\n".join(offenders))
    assert not offenders, f"{len(offenders)} definitions over the limits:\n" + "\n".join(offenders)

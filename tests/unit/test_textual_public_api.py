"""konsole uses Textual's public API only: no import of a private Textual module (a name
starting with ``_``, such as ``textual.widgets._data_table``), and no class of ours that
extends a Textual class sets an underscore attribute that Textual's own classes set (its
private state: writing it is what pinned textual to one minor before the grid widget).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import inspect
import re
from pathlib import Path

KONSOLE = Path(__file__).resolve().parents[2] / "konsole"


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(KONSOLE.rglob("*.py")):
        dotted = ".".join(path.relative_to(KONSOLE.parent).with_suffix("").parts)
        out.append((dotted, ast.parse(path.read_text(), str(path))))
    return out


def _private_textual(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "textual" and any(p.startswith("_") for p in parts[1:])


def test_no_private_textual_module_is_imported() -> None:
    found = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            else:
                continue
            found += [f"{name}: {m}" for m in modules if _private_textual(m)]
    assert found == []
    assert _private_textual("textual.widgets._data_table") and not _private_textual("textual.app")


_SELF_PRIVATE = re.compile(r"\bself\.(_[A-Za-z]\w*)\s*(?::[^=\n]+)?=[^=]")


def _textual_privates(cls: type) -> set[str]:
    """The underscore attributes Textual's classes in ``cls``'s MRO set on ``self`` or
    define."""
    names: set[str] = set()
    for base in cls.__mro__:
        if base.__module__.startswith("textual"):
            names |= _privates_of(base)
    return names


@functools.cache
def _privates_of(base: type) -> frozenset[str]:
    names = {n for n in vars(base) if n.startswith("_") and not n.startswith("__")}
    with contextlib.suppress(OSError, TypeError):  # no source: its vars only
        names |= set(_SELF_PRIVATE.findall(inspect.getsource(base)))
    return frozenset(names)


def _assigned_privates(cls_node: ast.ClassDef) -> set[str]:
    out = set()
    for node in ast.walk(cls_node):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
                and target.attr.startswith("_")
                and not target.attr.startswith("__")
            ):
                out.add(target.attr)
    return out


def test_no_class_of_ours_sets_a_private_attribute_of_its_textual_bases() -> None:
    checked, clashes = 0, []
    for name, tree in _modules():
        if not name.startswith("konsole.ui"):
            continue
        module = importlib.import_module(name)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            cls = getattr(module, node.name, None)
            if not isinstance(cls, type) or not any(
                b.__module__.startswith("textual") for b in cls.__mro__
            ):
                continue
            ours = _assigned_privates(node)
            clashes += [f"{name}.{node.name}.{a}" for a in sorted(ours & _textual_privates(cls))]
            checked += 1
    assert checked > 20  # the screens, modals and widgets were read
    assert clashes == []


def test_the_check_sees_a_write_to_a_textual_private() -> None:
    from textual.widgets import DataTable

    tree = ast.parse("class T(DataTable):\n    def f(self):\n        self._data = {}\n")
    [node] = tree.body
    assert isinstance(node, ast.ClassDef)
    assert _assigned_privates(node) & _textual_privates(DataTable) == {"_data"}

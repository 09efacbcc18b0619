"""parakeet_py has no import circles: the graph of its modules' imports of one another is acyclic.

The graph is read from the source with ``ast``, not by importing, and counts every import
statement wherever it stands: at module level, under ``if TYPE_CHECKING:`` and inside functions.
A circle closed by a deferred import still ties its modules into one knot (a type-only import
as much as any other); the package's rooms are laid out so that no module needs one.

An edge goes to the module an import names, and to each package (its ``__init__``) that the
import runs on the way there, except the importer's own enclosing packages, which are already
running when it is imported. ``from package import name`` needs the package's ``__init__``
itself when ``name`` is not a submodule.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path
from typing import Dict, Iterator, Set

import pytest

from data_helpers import ROOT


def module_files(package_dir: Path) -> Dict[str, Path]:
    """Dotted module name → source file, for every module of the package under ``package_dir``."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _imported_names(module: str, is_package: bool, node: ast.AST) -> Iterator[tuple]:
    """(base, names) of one import statement, ``base`` resolved to an absolute dotted name."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name, ()
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = module.split(".")
            anchor = anchor[:len(anchor) - node.level + (1 if is_package else 0)]
            base = ".".join(anchor + ([base] if base else []))
        yield base, tuple(alias.name for alias in node.names)


def import_edges(modules: Dict[str, Path]) -> Dict[str, Set[str]]:
    """Module → the modules of the same package that it imports (see the module docstring)."""
    graph: Dict[str, Set[str]] = {name: set() for name in modules}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        enclosing = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for base, names in _imported_names(module, is_package, node):
                parts = base.split(".")
                targets = {".".join(parts[:i]) for i in range(1, len(parts) + 1)} - enclosing
                for name in names:
                    if f"{base}.{name}" in modules:
                        targets.add(f"{base}.{name}")
                    else:
                        targets.add(base)
                graph[module] |= (targets & modules.keys()) - {module}
    return graph


def find_circle(graph: Dict[str, Set[str]]) -> list:
    """One import circle as [a, b, ..., a], or [] when the graph is acyclic."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as e:
        return list(reversed(e.args[1]))  # graphlib lists it against the edges
    return []


def test_parakeet_py_has_no_import_circle():
    graph = import_edges(module_files(ROOT / "parakeet_py"))
    # the walk really sees the package: the core modules and their imports of each other
    assert {"parakeet_py.errors", "parakeet_py.context"} <= graph["parakeet_py"]
    circle = find_circle(graph)
    assert not circle, "import circle: " + " → ".join(circle)


def write_package(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root / "pkg"


@pytest.mark.parametrize("files, circle", [
    # a circle closed by a deferred import, inside a function
    ({"pkg/__init__.py": "", "pkg/a.py": "from .b import f\n",
      "pkg/b.py": "def f():\n    from . import a\n"}, ["pkg.a", "pkg.b", "pkg.a"]),
    # one closed under TYPE_CHECKING, across a subpackage and by absolute name
    ({"pkg/__init__.py": "", "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
      "    from pkg.sub.c import C\n", "pkg/sub/__init__.py": "", "pkg/sub/c.py": "from ..a import x\n"},
     ["pkg.a", "pkg.sub.c", "pkg.a"]),
    # a submodule that needs a name from its package's __init__, which imports it
    ({"pkg/__init__.py": "from .a import x\n", "pkg/a.py": "from . import y\n"}, ["pkg", "pkg.a", "pkg"]),
])
def test_a_circle_is_found(tmp_path, files, circle):
    found = find_circle(import_edges(module_files(write_package(tmp_path, files))))
    # the same circle, from whichever module graphlib starts it at
    start = found.index(circle[0])
    assert found[start:-1] + found[:start] + [circle[0]] == circle


def test_imports_of_submodules_and_outside_modules_make_no_circle(tmp_path):
    # __init__ imports a, and a imports its sibling b through the package: no circle, since the
    # package is already running; numpy and the standard library are not part of the package
    files = {"pkg/__init__.py": "from .a import x\n", "pkg/a.py": "import os\nimport numpy\nfrom . import b\n",
             "pkg/b.py": "from pkg import c\n", "pkg/c.py": ""}
    graph = import_edges(module_files(write_package(tmp_path, files)))
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.c"}, "pkg.c": set()}
    assert find_circle(graph) == []

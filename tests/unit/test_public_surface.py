"""The public surface (issue 31 point 6): users import from ``pyguard`` (its lazy API), the CLI and the pytest plugin
(their entry points) and ``pyguard.testing``; every other module is internal and says so with ``__all__ = []``, or
is a facade that forwards names defined elsewhere (a folder's ``__init__``, an old import path kept working) and
defines none it lists. docs/architecture.md ("The public surface") lists the same modules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PUBLIC = ("pyguard", "pyguard.cli", "pyguard.pytest_plugin", "pyguard.testing", "pyguard.testing.synthetic")


def exported(path: Path) -> tuple[list[str] | None, set[str], set[str]]:
    """(``__all__``'s names or None when it has none, the top-level names the module defines, those it imports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] | None = None
    defined: set[str] = set()
    imported: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            ids = {t.id for t in targets if isinstance(t, ast.Name)}
            if "__all__" in ids and node.value is not None:
                names = list(ast.literal_eval(node.value))
            defined |= ids - {"__all__"}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If):  # TYPE_CHECKING blocks import for the type checker only
            continue
    return names, defined, imported


def surface(root: Path) -> list[str]:
    """Every internal module whose ``__all__`` is missing, or lists a name it defines itself."""
    found = []
    for path in sorted((root / "pyguard").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mod = ".".join(parts)
        if mod in PUBLIC:
            continue
        names, defined, _ = exported(path)
        if names is None:
            found.append(f"{mod}: no __all__ (internal: __all__ = [])")
        elif own := sorted(set(names) & defined):
            found.append(f"{mod}: __all__ lists {', '.join(own)}, defined here (internal: __all__ = [])")
    return found


def test_internal_modules_export_nothing_of_their_own():
    assert surface(ROOT) == []


def test_the_public_modules_are_the_ones_the_architecture_doc_lists():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## The public surface", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^- `(pyguard[\w.]*)`", section, flags=re.MULTILINE)
    assert sorted(listed) == sorted(PUBLIC)
    for mod in PUBLIC:
        path = ROOT / Path(*mod.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        names, _, _ = exported(path)
        assert names, f"{mod} is public: its __all__ names what it offers"


def test_the_surface_check_sees_a_module_that_exports_its_own_names(tmp_path):
    (tmp_path / "pyguard" / "inner").mkdir(parents=True)
    (tmp_path / "pyguard" / "__init__.py").write_text("__all__ = ['f']\n")
    (tmp_path / "pyguard" / "inner" / "__init__.py").write_text("from pyguard.inner.a import g\n\n__all__ = ['g']\n")
    (tmp_path / "pyguard" / "inner" / "a.py").write_text("__all__ = ['g']\n\n\ndef g():\n    pass\n")
    (tmp_path / "pyguard" / "b.py").write_text("__all__: list[str] = []\n")
    (tmp_path / "pyguard" / "c.py").write_text("x = 1\n")
    assert surface(tmp_path) == [
        "pyguard.c: no __all__ (internal: __all__ = [])",
        "pyguard.inner.a: __all__ lists g, defined here (internal: __all__ = [])",
    ]

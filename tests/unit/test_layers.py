"""The house has no circles and no stairs up (issue 24): every import between pyguard modules — at the top, inside a
function, under ``TYPE_CHECKING`` — runs within a layer or down to a lower one, and no modules import each other in a
cycle. LAYERS is the one statement of the order (docs/architecture.md, "Layers", shows it)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("pyguard._version", "pyguard.base")),
    ("engine", ("pyguard.engine",)),
    ("records", ("pyguard.escalation", "pyguard.result", "pyguard.trace")),
    ("formats", ("pyguard.otel", "pyguard.store")),
    ("loader", ("pyguard.loading",)),
    ("jvm", ("pyguard.jvm",)),
    (
        "offline",
        (
            "pyguard.replay",
            "pyguard.parallel",
            "pyguard.check",
            "pyguard.calibrate",
            "pyguard.tune",
            "pyguard.testing",
            "pyguard.report",
        ),
    ),
    ("live", ("pyguard.live",)),
    ("front", ("pyguard.pytest_plugin", "pyguard.cli", "pyguard.__main__", "pyguard")),
]
"""Lowest first. A module's layer is that of the prefix naming it; a folder is one layer (no prefix lies inside another
one's package: no exceptions); ``pyguard`` itself (the lazy public API) is the front."""


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / "pyguard").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the pyguard modules it imports anywhere in its text (a name imported from a package counts as the
    submodule when it is one, else as the package)."""

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        found: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(known(a.name) for a in node.names if a.name.split(".")[0] == "pyguard")
            elif isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(max(node.level - 1, 0)):
                    base = base.rpartition(".")[0]
                source = (base + ("." + node.module if node.module else "")) if node.level else (node.module or "")
                if source.split(".")[0] != "pyguard":
                    continue
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    found.add(full if full in mods else known(source))
        edges[mod] = {m for m in found if m is not None and m != mod}
    return edges


def layer_of(mod: str) -> int:
    best = max(
        (
            (i, len(p))
            for i, (_, prefixes) in enumerate(LAYERS)
            for p in prefixes
            if mod == p or mod.startswith(p + ".")
        ),
        key=lambda x: x[1],
        default=None,
    )
    assert best is not None, f"{mod} is in no layer: add it to LAYERS (and to docs/architecture.md)"
    return best[0]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_between_pyguard_modules():
    assert cycles(imports(modules())) == []


def test_no_import_runs_up_a_layer():
    edges = imports(modules())
    up = sorted(
        f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
        for a, targets in edges.items()
        for b in targets
        if layer_of(b) > layer_of(a)
    )
    assert up == []


def test_a_folder_is_one_layer():
    # an entry of LAYERS inside another entry's package would be an exception: a module lifted out of its folder's layer
    prefixes = [p for _, group in LAYERS for p in group if p != "pyguard"]
    inside = sorted(f"{a} inside {b}" for a in prefixes for b in prefixes if a.startswith(b + "."))
    assert inside == []


def test_the_checks_see_what_they_look_for():
    mods = {"pyguard.a": Path("a"), "pyguard.b": Path("b")}
    assert cycles({"pyguard.a": {"pyguard.b"}, "pyguard.b": {"pyguard.a"}}) == [["pyguard.a", "pyguard.b"]]
    assert cycles({"pyguard.a": {"pyguard.b"}, "pyguard.b": set()}) == []
    assert layer_of("pyguard.check.parquet") > layer_of("pyguard.store.sql") > layer_of("pyguard.base.events")
    assert layer_of("pyguard.live.calibration") > layer_of("pyguard.calibrate.runs") > layer_of("pyguard.base.events")
    assert set(mods) == {"pyguard.a", "pyguard.b"}


def test_function_local_and_type_checking_imports_count(tmp_path, monkeypatch):
    package = tmp_path / "pyguard"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def f():\n    from pyguard.high import g\n")
    (package / "high.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pyguard import low\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    edges = imports(modules())
    assert edges["pyguard.low"] == {"pyguard.high"} and edges["pyguard.high"] == {"pyguard.low"}
    assert cycles(edges) == [["pyguard.high", "pyguard.low"]]


def private_imports(*folders: str) -> list[str]:
    """Every ``from M import _name`` in the Python files under ``folders`` (relative to the repository) where M is one
    of pyguard's or the benchmark suites' modules: a private name used outside the module that owns it."""
    found = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.ImportFrom) or not node.module:
                    continue
                if node.module.split(".")[0] not in ("pyguard", "suites", "benchmarks"):
                    continue
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {node.module}.{alias.name}")
    return found


def test_no_private_name_is_imported_across_modules():
    # a name a second module needs is public on purpose (no underscore, documented), or the test goes through the
    # public behaviour that uses it
    assert private_imports("pyguard", "tests", "benchmarks", "examples") == []


def test_the_private_import_check_sees_one(tmp_path, monkeypatch):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "x.py").write_text("from pyguard.engine.window import _checksum\nfrom pyguard import Guard\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert private_imports("t") == ["t/x.py:1 imports pyguard.engine.window._checksum"]


NOT_YET_CHECKED: tuple[str, ...] = ()  # issue 31 point 5: every file audited (2026-12-02); the whole tree is checked


def unreasoned_local_imports(root: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """Every import of a pyguard module inside a function, under ``root``'s ``pyguard/``, that has no ``# lazy:``
    comment saying why it cannot be at the top: on its line, or on a comment line just above its group of imports."""
    found = []
    for path in sorted((root / "pyguard").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if any(name == s or (s.endswith("/") and name.startswith(s)) for s in skip):
            continue
        lines = path.read_text(encoding="utf-8").split("\n")
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    ours = any(a.name.split(".")[0] == "pyguard" for a in node.names)
                elif isinstance(node, ast.ImportFrom):
                    ours = node.level > 0 or (node.module or "").split(".")[0] == "pyguard"
                else:
                    continue
                at = node.lineno - 1
                reasons = [lines[at]]
                while at > 0 and lines[at - 1].strip().startswith(("from ", "import ", "#")):
                    at -= 1
                    reasons.append(lines[at])
                if ours and not any("# lazy:" in line for line in reasons):
                    found.append(f"{name}:{node.lineno}")
    return sorted(set(found))


def test_a_function_level_import_says_why_it_is_not_at_the_top():
    # the top of a module is where its dependencies are read; an import inside a function is there only for the JVM's
    # laziness, the plugin's and the CLI's start-up, a heavy optional extra or a cycle of package and submodule, and
    # says so in a "# lazy: ..." comment
    assert unreasoned_local_imports(ROOT, NOT_YET_CHECKED) == []


def test_the_local_import_check_sees_one(tmp_path):
    (tmp_path / "pyguard").mkdir()
    (tmp_path / "pyguard" / "a.py").write_text(
        "def f():\n    from pyguard.b import g\n\n\ndef h():\n    # lazy: the JVM edge\n    from pyguard.jvm import j\n"
        "    import json\n"
    )
    assert unreasoned_local_imports(tmp_path) == ["pyguard/a.py:2"]
    assert unreasoned_local_imports(tmp_path, ("pyguard/a.py",)) == []


FLOORS = 8
"""The floors pyguard stands on, measured on 2026-12-02 (``python tests/unit/test_layers.py``): may only go down.
Issue 31's target is 8."""


def floors(edges: dict[str, set[str]]) -> dict[str, int]:
    """Each part's floor in the import graph: a folder of pyguard/ is one part, a top-level module another (the
    package itself is ``pyguard``); a part that imports no other is on floor 1, any other one floor above the highest
    part it imports (at the top, inside a function or under ``TYPE_CHECKING``, as ``imports`` reads them). The highest
    floor is the length of the longest downward chain of imports."""
    mods = modules()

    def part(mod: str) -> str:
        parts = mod.split(".")
        return (
            ".".join(parts[:2])
            if len(parts) > 1 and mods.get(".".join(parts[:2]), Path()).name == "__init__.py"
            else mod
        )

    graph: dict[str, set[str]] = {}
    for a, targets in edges.items():
        graph.setdefault(part(a), set()).update(part(b) for b in targets if part(b) != part(a))
    assert cycles(graph) == [], "parts that import each other have no floor"
    floor: dict[str, int] = {}

    def of(p: str) -> int:
        if p not in floor:
            floor[p] = 1 + max((of(d) for d in graph.get(p, ())), default=0)
        return floor[p]

    for p in graph:
        of(p)
    return floor


def test_the_house_does_not_grow_taller():
    height = max(floors(imports(modules())).values())
    assert height <= FLOORS, f"{height} floors, {FLOORS} before: a chain of imports grew (python {__file__})"


def test_the_floor_count_sees_a_chain(tmp_path, monkeypatch):
    package = tmp_path / "pyguard"
    (package / "low").mkdir(parents=True)
    (package / "__init__.py").write_text("from pyguard import top\n")
    (package / "low" / "__init__.py").write_text("")
    (package / "low" / "a.py").write_text("from pyguard.low import b\n")  # inside one folder: one floor
    (package / "low" / "b.py").write_text("")
    (package / "mid.py").write_text("def f():\n    from pyguard.low.a import x\n")
    (package / "top.py").write_text("from pyguard import mid\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert floors(imports(modules())) == {"pyguard": 4, "pyguard.top": 3, "pyguard.mid": 2, "pyguard.low": 1}


if __name__ == "__main__":  # python tests/unit/test_layers.py: the floors, lowest first
    by_floor: dict[int, list[str]] = {}
    for name, n in floors(imports(modules())).items():
        by_floor.setdefault(n, []).append(name.removeprefix("pyguard.") or name)
    for n in sorted(by_floor):
        print(n, ", ".join(sorted(by_floor[n])))
    print(f"{max(by_floor)} floors (issue 31's target: 8)")

"""docs/architecture.md stays true: every path its layout block, its module tables and its text name exists."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
TEXT = DOC.read_text(encoding="utf-8")
# built by `make setup`, never in git: named in the doc on purpose
BUILT = {"pyguard/_jars/"}


def layout_paths(text: str) -> list[str]:
    """The paths of the layout block (the first fenced block): an entry is a name at an indent of a multiple of two
    (nested under the last directory one level up); deeper-indented lines continue a description."""
    block = text.split("```\n", 2)[1]
    stack: list[str] = []
    paths = []
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip() or indent >= 20 or indent % 2:
            continue
        name = line.split()[0]
        depth = indent // 2
        path = "".join(stack[:depth]) + name
        paths.append(path)
        stack[depth:] = [name] if name.endswith("/") else []
    return paths


def table_paths(text: str) -> list[str]:
    """The modules of each table whose first header cell is a package folder (``| pyguard/jvm/ | ... |``)."""
    paths, package = [], None
    for line in text.splitlines():
        header = re.match(r"^\| ([\w/]+/) \|", line)
        if header:
            package = header.group(1)
            continue
        row = re.match(r"^\| `([^`]+)` \|", line)
        if row and package is not None:
            paths.append(package + row.group(1))
        elif not line.startswith("|"):
            package = None
    return paths


def test_the_layout_block_names_only_paths_that_exist():
    paths = layout_paths(TEXT)
    assert len(paths) > 40 and "pyguard/engine/" in paths and "java/src/main/java/dev/pyguard/bridge/scripted/" in paths
    assert [p for p in paths if not (ROOT / p).exists()] == []


def test_the_module_tables_name_only_modules_that_exist():
    paths = table_paths(TEXT)
    assert "pyguard/engine/policy.py" in paths and "pyguard/cli/exit_codes.py" in paths
    assert [p for p in paths if not (ROOT / p).is_file()] == []


def test_every_path_in_the_text_exists():
    named = set(re.findall(r"(?<![\w/.])((?:pyguard|tests|benchmarks|docs|examples|scripts|java)/[\w./-]*\w/?)", TEXT))
    assert "pyguard/loading/formats.py" in named
    missing = sorted(p for p in named - BUILT if not (ROOT / p).exists())
    assert missing == []


def test_the_parsers_see_a_missing_path():
    fake = "# t\n\n```\npyguard/\n  engine/      the engine\n    nowhere.py   a module\n```\n"
    assert layout_paths(fake) == ["pyguard/", "pyguard/engine/", "pyguard/engine/nowhere.py"]
    assert table_paths("| pyguard/cli/ | what |\n|---|---|\n| `gone.py` | x |\n\ntext\n") == ["pyguard/cli/gone.py"]

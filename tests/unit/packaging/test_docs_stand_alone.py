"""The README (the package's long description on PyPI) and docs/ stand alone: every relative link resolves inside the
repository, and the description opens with what pyguard is, not with a command."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_relative_link_resolves_inside_the_repository():
    bad = []
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        if "../shared" in text:
            bad.append(f"{page.name}: mentions ../shared")
        for target in _LINK.findall(text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.is_relative_to(ROOT) or not path.exists():
                bad.append(f"{page.name}: {target}")
    assert bad == []


def test_the_long_description_opens_with_what_pyguard_is_and_keeps_the_quickstart():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["readme"] == "README.md" and project["license"] == "MIT"
    lines = [line for line in (ROOT / project["readme"]).read_text(encoding="utf-8").splitlines() if line.strip()]
    assert lines[0] == "# pyguard"
    assert lines[1].startswith("**pyguard drives Java LangChain4j agents from Python")  # prose, not `make demo`
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme[readme.index("## Quickstart") :].split("\n## ")[0]
    commands = re.findall(r"^make (\w[\w-]*)", quickstart, flags=re.M)
    assert commands == ["demo", "test"]
    targets = re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), flags=re.M)
    assert {"demo", "test", "wheel-test"} <= set(targets)
    assert (
        (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n\nCopyright (c) 2026 pyguard authors")
    )
    assert (ROOT / "pyguard" / "py.typed").is_file()


def test_python_dash_m_pyguard_is_the_command_line():
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "pyguard", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Usage: python -m pyguard [OPTIONS] COMMAND [ARGS]...")
    assert all(name in r.stdout for name in ("demo", "replay", "calibrate", "check", "tune"))

"""The public API: users import from ``pyguard``; the heavy names load on first use, and jpype never at import."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pyguard


def _run(code: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_guard_its_policy_and_its_result_import_from_pyguard_without_jpype():
    out = _run("""
        import json, sys
        import pyguard
        loaded_at_import = sorted(m for m in ("pyguard.live.guard", "pyguard.engine", "numpy") if m in sys.modules)
        from pyguard import Guard, PolicyConfig, RunResult
        print(json.dumps({
            "jpype": sorted(m for m in sys.modules if m.split(".")[0] in ("jpype", "_jpype")),
            "loaded_at_import": loaded_at_import,
            "names": [Guard.__module__, PolicyConfig.__module__, RunResult.__module__],
        }))
    """)
    assert out["jpype"] == []
    assert out["loaded_at_import"] == []  # import pyguard itself loads neither the guard nor the engine
    assert out["names"] == ["pyguard.live.guard", "pyguard.engine.config", "pyguard.result"]


@pytest.mark.parametrize("name", pyguard.__all__)
def test_every_public_name_resolves_to_what_a_pyguard_module_defines(name: str):
    value = getattr(pyguard, name)
    if name == "__version__":
        assert isinstance(value, str) and value
    else:
        assert value.__module__.startswith("pyguard."), value
        assert getattr(sys.modules[value.__module__], name) is value
    assert name in dir(pyguard)


def test_a_name_pyguard_does_not_export_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="no attribute 'Gaurd'"):
        pyguard.Gaurd  # noqa: B018


def test_star_import_gives_exactly_the_public_names():
    namespace: dict = {}
    exec("from pyguard import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(pyguard.__all__)


def test_every_name_the_readme_and_docs_import_from_pyguard_is_public():
    root = Path(__file__).resolve().parents[2]
    imported = set()
    for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        for names in re.findall(r"^from pyguard import ([\w, ]+)", doc.read_text(encoding="utf-8"), re.M):
            imported |= {n.strip() for n in names.split(",")}
    assert {"Guard", "start_jvm", "load_runs"} <= imported
    assert imported <= set(pyguard.__all__)
